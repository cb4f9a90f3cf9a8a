"""GPT-NeoX (Pythia): rotary positions (no position table), the token table embed_in and an output layer
of its own (not tied), which checkpoints store as embed_out and transformers 5 names lm_head; byte-level BPE
words."""

from gpt2emb.families import Family
from gpt2emb.families.llama import ROTARY

FAMILY = Family(
    name="gpt_neox",
    title="GPT-NeoX",
    model_types=("gpt_neox",),
    d_model=("hidden_size",),
    n_positions=(),
    n_layer=("num_hidden_layers",),
    n_head=("num_attention_heads",),
    token_table=("gpt_neox.embed_in.weight", "embed_in.weight"),
    position_table=(),
    classes=("GPTNeoXConfig", "GPTNeoXModel", "GPTNeoXForCausalLM"),
    lm_names=("lm_head.weight", "gpt_neox.embed_in.weight"),
    final_norm="final_layer_norm",
    output_table=("embed_out.weight", "lm_head.weight"),
    tied_default=False,
    no_position_table=ROTARY,
)
