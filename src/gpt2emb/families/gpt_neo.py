"""GPT-Neo (EleutherAI's gpt-neo-125m, 1.3B, 2.7B): GPT-2's layout under other config names, a learned
position table of max_position_embeddings rows (2048) from row 0, the output layer tied to the token table."""

from gpt2emb.families import Family

FAMILY = Family(
    name="gpt_neo",
    title="GPT-Neo",
    model_types=("gpt_neo",),
    d_model=("hidden_size",),
    n_positions=("max_position_embeddings",),
    n_layer=("num_layers",),
    n_head=("num_heads",),
    token_table=("transformer.wte.weight", "wte.weight"),
    position_table=("transformer.wpe.weight", "wpe.weight"),
    classes=("GPTNeoConfig", "GPTNeoModel", "GPTNeoForCausalLM"),
    lm_names=("lm_head.weight", "transformer.wte.weight"),
    final_norm="ln_f",
)
