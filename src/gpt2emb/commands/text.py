"""input (a text as the model receives it, h0) and context (a word through the layers of the model run)."""

from gpt2emb.commands import JSON, Command, Method, Stem

CONTEXT = ("bank", "I sat on the river bank", "I paid at the bank")

STEM = Stem(
    place=80,
    commands=(
        Command(
            "input",
            shows="what the first block receives: `h0 = wte[tokens] + wpe[0..n-1]`",
            modes={JSON: ("InputResult", "gpt2emb input TEXT --json")},
            fuzz=(("input", "{w}"), ("input", "{v}{w}", "--truncate", "--full", "-m", "{n}")),
            warm=("input", "The cat sat on the mat"),
        ),
        Command(
            "context",
            shows="static rows against contextual vectors, layer by layer",
            modes={JSON: ("ContextResult", "gpt2emb context WORD SENTENCE... --json")},
            fuzz=(("context", "{w}", "the {w} sat", "a {w} and {v}"), ("context", "cat", "{w}", "{v}")),
            warm=("context", *CONTEXT),
        ),
    ),
    handle=(
        Method("input", {"text": "the cat", "full": False, "truncate": False}, same_as=("input", "the cat")),
        Method(
            "context",
            {"word": "king", "sentences": ["the cat and king", "the king"], "pool": "mean"},
            same_as=("context", "king", "the cat and king", "the king"),
        ),
    ),
)
