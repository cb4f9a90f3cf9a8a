"""logits: the model's scores for the next token, and every layer read through the output layer (the lens)."""

from gpt2emb.commands import JSON, Command, Method, Stem

STEM = Stem(
    place=85,
    commands=(
        Command(
            "logits",
            shows="the output layer at work: `logits = h_final · W_eᵀ`, and every layer read through it",
            modes={JSON: ("LogitsResult", "gpt2emb logits TEXT --json (--layers, --through wte add keys)")},
            fuzz=(
                ("logits", "{w}"),
                ("logits", "{v} {w}", "-k", "{n}", "--layers"),
                ("logits", "{w}", "--at", "{n}", "--through", "{v}"),
            ),
            warm=("logits", "The cat sat on the"),
        ),
    ),
    handle=(
        Method(
            "logits",
            {"text": "the cat", "k": 10, "at": None, "through": None, "layers": True},
            same_as=("logits", "the cat", "--layers"),
        ),
    ),
    checks={"at": "maybe_count", "through": "maybe_text", "layers": "flag"},
)
