"""The fastest way people use today: gensim KeyedVectors with the same vectors, loaded memory-mapped.

python bench/gensim_peer.py neighbors PATH cat
python bench/gensim_peer.py analogy PATH king man woman
"""

import sys

from gensim.models import KeyedVectors

task, path, *words = sys.argv[1:]
kv = KeyedVectors.load(path, mmap="r")
if task == "neighbors":
    print(kv.most_similar(" " + words[0], topn=10))
else:
    a, b, c = (" " + w for w in words)
    print(kv.most_similar(positive=[a, c], negative=[b], topn=10))
