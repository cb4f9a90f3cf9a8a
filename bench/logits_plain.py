"""The plain way to do what `gpt2emb logits` does: transformers loads the language model from a local folder,
runs the text, and prints the top 10 next tokens; with --layers, every layer's hidden state through the final
layer norm and the output layer too (the logit lens at the last position).

python bench/logits_plain.py FOLDER "The cat sat on the" [--layers]
"""

import json
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

folder, text, *rest = sys.argv[1:]
layers = "--layers" in rest
tokenizer = AutoTokenizer.from_pretrained(folder)
model = AutoModelForCausalLM.from_pretrained(folder).eval()
ids = tokenizer(text, return_tensors="pt").input_ids
with torch.inference_mode():
    out = model(ids, output_hidden_states=layers)
    logits = out.logits[0, -1]
    p = logits.softmax(-1)
    top = torch.topk(logits, 10)
    found = {"top": [[int(i), float(logits[i]), float(p[i])] for i in top.indices]}
    if layers:
        head, norm = model.get_output_embeddings(), model.base_model.ln_f
        *inner, last = out.hidden_states
        rows = [head(norm(h[0, -1])) for h in inner] + [head(last[0, -1])]
        found["layers"] = [[int(i) for i in torch.topk(r, 5).indices] for r in rows]
print(json.dumps(found))
