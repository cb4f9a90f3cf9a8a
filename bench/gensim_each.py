"""gensim's most_similar for each word of stdin, in one warm process: bench/stdin.py's peer.

python bench/gensim_each.py PATH.kv TOPN < words.txt

Loads the KeyedVectors memory-mapped (not timed), then times the loop alone; prints one JSON line:
{"loop_seconds", "words", "first": the top-n keys of the first 100 words}.
"""

import json
import sys
import time

from gensim.models import KeyedVectors

path, topn = sys.argv[1], int(sys.argv[2])
kv = KeyedVectors.load(path, mmap="r")
words = [" " + line.strip() for line in sys.stdin if line.strip()]
t0 = time.perf_counter()
answers = [kv.most_similar(w, topn=topn) for w in words]
loop = time.perf_counter() - t0
first = [[key for key, _ in a] for a in answers[:100]]
print(json.dumps({"loop_seconds": loop, "words": len(words), "first": first}))
