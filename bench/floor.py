"""The floor of a warm query (issue 30): the least any Python process can do to answer `neighbors WORD`, from
the same cache entry gpt2emb reads (its folder holds wte.npy and wte_norm.npy, the row norms stored with it).

    python bench/floor.py ENTRY_FOLDER TOKEN_ID

Exactly four steps: wte and its norms memory-mapped with numpy.load, one matrix-vector product, argpartition,
11 rows printed (the token itself and its 10 nearest, as ids and cosines; no vocabulary is read).
"""

import sys

import numpy as np

folder, token = sys.argv[1], int(sys.argv[2])
wte = np.load(f"{folder}/wte.npy", mmap_mode="r")
norms = np.load(f"{folder}/wte_norm.npy", mmap_mode="r")
scores = (wte @ wte[token]) / (norms * norms[token])
top = np.argpartition(-scores, 11)[:11]
for i in top[np.argsort(-scores[top])]:
    print(i, f"{scores[i]:.4f}")
