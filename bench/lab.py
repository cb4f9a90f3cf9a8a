"""The lab way, as the course's script does it: load the whole model with transformers, then compute in torch.

python bench/lab.py neighbors FOLDER cat
python bench/lab.py analogy FOLDER king man woman
"""

import sys

import torch
from transformers import AutoModel, AutoTokenizer

task, folder, *words = sys.argv[1:]
tokenizer = AutoTokenizer.from_pretrained(folder)
model = AutoModel.from_pretrained(folder)
wte = model.wte.weight.detach()


def row(word: str) -> torch.Tensor:
    return wte[tokenizer.encode(" " + word)[0]]


query = row(words[0]) if task == "neighbors" else row(words[0]) - row(words[1]) + row(words[2])
scores = torch.nn.functional.cosine_similarity(wte, query[None, :], dim=1)
top = torch.topk(scores, 13)
print(
    [(tokenizer.decode([int(i)]), round(float(s), 4)) for s, i in zip(top.values, top.indices, strict=True)]
)
