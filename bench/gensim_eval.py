"""gensim's own benchmark evaluation, the peer of `gpt2emb analogy --eval`.

python bench/gensim_eval.py KEYEDVECTORS QUESTIONS
"""

import json
import sys

from gensim.models import KeyedVectors

path, questions = sys.argv[1:]
kv = KeyedVectors.load(path, mmap="r")
score, sections = kv.evaluate_word_analogies(questions, case_insensitive=True)
print(
    json.dumps(
        {
            "accuracy": score,
            "sections": [s["section"] for s in sections],
            "correct": [len(s["correct"]) for s in sections],
            "incorrect": [len(s["incorrect"]) for s in sections],
        }
    )
)
