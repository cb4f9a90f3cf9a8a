"""Qwen2: Llama's layout (rotary positions, embed_tokens, an lm_head of its own unless the config ties it)
with a byte-level BPE tokenizer whose own splitting pattern and normalizer bpe.py does not reproduce (the
`tokenizers` library encodes for it)."""

from gpt2emb.families import Spelling
from gpt2emb.families.llama import LLAMA

FAMILY = LLAMA._replace(
    name="qwen2",
    title="Qwen2",
    model_types=("qwen2",),
    words=Spelling(),
    classes=("Qwen2Config", "Qwen2Model", "Qwen2ForCausalLM"),
)
