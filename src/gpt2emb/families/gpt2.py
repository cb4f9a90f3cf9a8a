"""GPT-2 (and its fine-tunes, distilgpt2): learned positions from row 0, no layer norm before the first block,
the output layer tied to the token table."""

from gpt2emb.families import Family

FAMILY = Family(
    name="gpt2",
    title="GPT-2",
    model_types=("gpt2",),
    d_model=("n_embd",),
    n_positions=("n_positions",),
    n_layer=("n_layer",),
    n_head=("n_head",),
    token_table=("wte.weight", "transformer.wte.weight"),
    position_table=("wpe.weight", "transformer.wpe.weight"),
    classes=("GPT2Config", "GPT2Model", "GPT2LMHeadModel"),
    lm_names=("lm_head.weight", "transformer.wte.weight"),
)
