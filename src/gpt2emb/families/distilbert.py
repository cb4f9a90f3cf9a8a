"""DistilBERT: BERT's WordPiece words and specials; 512 learned positions from row 0; no token-type rows,
only a layer norm applied to the sum before the first block; a masked language model whose output layer
(vocab_projector) is tied to the token table. A DistilBertModel saves its tensors without "distilbert."."""

from gpt2emb.families import Family, Head
from gpt2emb.families.bert import FAMILY as BERT
from gpt2emb.families.bert import WordPiece

FAMILY = Family(
    name="distilbert",
    title="DistilBERT",
    model_types=("distilbert",),
    d_model=("dim",),
    n_positions=("max_position_embeddings",),
    n_layer=("n_layers",),
    n_head=("n_heads",),
    token_table=("distilbert.embeddings.word_embeddings.weight", "embeddings.word_embeddings.weight"),
    position_table=(
        "distilbert.embeddings.position_embeddings.weight",
        "embeddings.position_embeddings.weight",
    ),
    norm=(
        ("distilbert.embeddings.LayerNorm.weight", "distilbert.embeddings.LayerNorm.bias"),
        ("embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"),
    ),
    # DistilBERT's config has no epsilon field: its layer norm's 1e-12 is fixed in transformers' code, the
    # value an entry takes when the config lacks the field
    norm_eps="layer_norm_eps",
    words=WordPiece(),
    classes=("DistilBertConfig", "DistilBertModel", "DistilBertForMaskedLM"),
    lm_names=("vocab_projector.weight", "distilbert.embeddings.word_embeddings.weight"),
    causal=False,
    specials=BERT.specials,
    # DistilBertForMaskedLM: vocab_transform, config.activation, vocab_layer_norm (its 1e-12 fixed in
    # transformers' code), then vocab_projector, whose weight is tied and whose bias is its own
    head=Head(
        "[MASK]",
        "vocab_transform",
        "vocab_layer_norm",
        ("vocab_projector.bias",),
        activation_key="activation",
    ),
)
