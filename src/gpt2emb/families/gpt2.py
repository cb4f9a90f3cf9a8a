"""GPT-2 (and its fine-tunes, distilgpt2): learned positions from row 0, no layer norm before the first block,
the output layer tied to the token table."""

from gpt2emb.families import Family
from gpt2emb.registry import Shape


def block_params(d: int) -> int:
    """One block: two LayerNorms (2d each), attention (d*3d + 3d, d*d + d), MLP (d*4d + 4d, 4d*d + d)."""
    return 12 * d * d + 13 * d


def param_counts(shape: Shape) -> dict[str, int]:
    """GPT-2's parameters by its formula (`sizes` compares the four sizes by it, without weights)."""
    d = shape.d_model
    counts = {
        "wte_params": shape.vocab_size * d,
        "wpe_params": shape.n_positions * d,
        "block_params": shape.n_layer * block_params(d),
        "final_ln_params": 2 * d,
    }
    counts["total_params"] = sum(counts.values())
    return counts


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
    final_norm="ln_f",
    params=param_counts,
)
