"""tying: whether the output layer reuses wte."""

from gpt2emb.commands import JSON, Command, Method, Stem

STEM = Stem(
    place=70,
    commands=(
        Command(
            "tying",
            shows="proof that the output layer reuses `wte`; the two gradient paths into it",
            modes={JSON: ("TyingResult", "gpt2emb tying --json (--grad TEXT and --compare fill their keys)")},
            fuzz=(
                ("tying", "-m", "{w}"),
                ("tying", "--grad", "{w}"),
                ("tying", "--compare", "--revision", "{v}"),
            ),
        ),
    ),
    handle=(Method("tying", {"load": False, "grad": None, "compare": False}, same_as=("tying",)),),
)
