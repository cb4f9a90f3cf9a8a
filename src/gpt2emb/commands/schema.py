"""schema: the JSON Schema of each command's output."""

from gpt2emb.commands import Command, Stem

STEM = Stem(
    place=130,
    commands=(
        Command(
            "schema",
            shows="the JSON Schema of each command's `--json` output",
            fuzz=(("schema", "{w}"), ("schema", "{w}", "{v}", "--mode", "{n}")),
        ),
    ),
)
