"""The plain way to do what `gpt2emb context` does: transformers loads the model, runs each sentence with
output_hidden_states, and numpy takes the cosines of the word's vectors (first token of its first occurrence).

python bench/context_plain.py FOLDER bank "I sat on the river bank" "I paid at the bank"
"""

import itertools
import json
import sys

import numpy as np
import torch
from transformers import AutoTokenizer, GPT2Model

folder, word, *sentences = sys.argv[1:]
tokenizer = AutoTokenizer.from_pretrained(folder)
model = GPT2Model.from_pretrained(folder)
wid = tokenizer.encode(" " + word)[0]
static = model.wte.weight[wid].detach().numpy()
vectors = []
with torch.inference_mode():
    for s in sentences:
        ids = tokenizer.encode(s)
        states = model(torch.tensor([ids]), output_hidden_states=True).hidden_states
        vectors.append(torch.stack(states)[:, 0, ids.index(wid)].numpy())


def cos(a: np.ndarray, b: np.ndarray) -> float | None:
    n = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b / n) if n > 0 else None


layers = [
    {
        "layer": layer,
        "pairs": [
            cos(vectors[a][layer], vectors[b][layer])
            for a, b in itertools.combinations(range(len(vectors)), 2)
        ],
        "static": [cos(v[layer], static) for v in vectors],
    }
    for layer in range(len(vectors[0]))
]
print(json.dumps(layers))
