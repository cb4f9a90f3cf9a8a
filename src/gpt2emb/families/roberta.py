"""RoBERTa: GPT-2's byte-level BPE pieces under other ids; a position table whose first rows are never used
(row pad_token_id = 1 is the padding row, the first token sits at row 2: 514 rows for 512 positions); a
token-type row and a layer norm applied to the sum before the first block; a masked language model whose
decoder is tied to the token table (with a bias of its own)."""

import re

from gpt2emb.families import Family, Head

FAMILY = Family(
    name="roberta",
    title="RoBERTa",
    model_types=("roberta",),
    d_model=("hidden_size",),
    n_positions=("max_position_embeddings",),
    n_layer=("num_hidden_layers",),
    n_head=("num_attention_heads",),
    token_table=("roberta.embeddings.word_embeddings.weight", "embeddings.word_embeddings.weight"),
    position_table=("roberta.embeddings.position_embeddings.weight", "embeddings.position_embeddings.weight"),
    type_table=("roberta.embeddings.token_type_embeddings.weight", "embeddings.token_type_embeddings.weight"),
    norm=(
        ("roberta.embeddings.LayerNorm.weight", "roberta.embeddings.LayerNorm.bias"),
        ("embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"),
    ),
    offset_after_pad=True,
    classes=("RobertaConfig", "RobertaModel", "RobertaForMaskedLM"),
    lm_names=("lm_head.decoder.weight", "roberta.embeddings.word_embeddings.weight"),
    causal=False,
    specials=re.compile(r"</?s>|<pad>|<unk>|<mask>"),
    # RobertaLMHead: gelu whatever the config's hidden_act, its decoder's bias tied to lm_head.bias
    head=Head(
        "<mask>",
        "lm_head.dense",
        "lm_head.layer_norm",
        ("lm_head.bias", "lm_head.decoder.bias"),
        eps_key="layer_norm_eps",
    ),
)
