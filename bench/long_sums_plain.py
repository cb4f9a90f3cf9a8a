"""The floor of a long analogy sum (issue 49): a plain numpy script that scores the whole vocabulary for a sum
of T signed terms and ranks its inputs, from the same cache entry gpt2emb reads.

    python bench/long_sums_plain.py ENTRY_FOLDER METHOD "+12 -7 +3 ..."

Exactly these steps: wte and its norms memory-mapped with numpy.load; the unit rows; one product of the unit
rows with the T terms; the method's signed sum (add: of the raw rows' dot products, over the sum's norm;
3cosadd: of the cosines, over the unit sum's norm) or log-product (3cosmul, as gensim's most_similar_cosmul
in log space); each input's rank (the rows scoring strictly higher, plus one) and the 10 best rows printed.
"""

import sys

import numpy as np

folder, method, spec = sys.argv[1], sys.argv[2], sys.argv[3].split()
signs = np.array([1.0 if s[0] == "+" else -1.0 for s in spec])
ids = np.array([int(s[1:]) for s in spec])
wte = np.load(f"{folder}/wte.npy", mmap_mode="r")
norms = np.load(f"{folder}/wte_norm.npy", mmap_mode="r")
unit = wte / norms[:, None]
if method == "add":  # cosine with the raw sum: the dot products with the raw terms, signed and summed
    raw = wte[ids]
    scores = (unit @ raw.T) @ signs / np.linalg.norm(signs @ raw)
elif method == "3cosadd":  # cosine with the sum of the unit terms
    scores = (unit @ unit[ids].T) @ signs / np.linalg.norm(signs @ unit[ids])
else:  # 3cosmul: the sum of log((1 + cos) / 2) over the positive terms, less log(negatives + 1e-6)
    with np.errstate(divide="ignore"):
        logs = np.log((1 + unit @ unit[ids].T) / 2)
    scores = logs[:, signs > 0].sum(axis=1) - np.logaddexp(logs[:, signs < 0].sum(axis=1), np.log(1e-6))
for i in np.unique(ids):
    print("input", i, int((scores > scores[i]).sum()) + 1, f"{scores[i]:.6g}")
top = np.argpartition(-scores, 10)[:10]
for i in top[np.argsort(-scores[top])]:
    print(i, f"{scores[i]:.6g}")
