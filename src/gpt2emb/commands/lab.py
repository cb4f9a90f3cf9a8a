"""lab: the chapter's lab in one run, by the other stems' cores."""

from gpt2emb.commands import JSON, Command, Stem

STEM = Stem(
    place=110,
    commands=(
        Command(
            "lab",
            shows="the chapter's lab in one run",
            modes={JSON: ("LabResult", "gpt2emb lab --json")},
            fuzz=(
                ("lab", "--word", "{w}"),
                ("lab", "-m", "{w}", "--revision", "{v}"),
                ("lab", "--html", "{path:w}", "--word", "{v}"),  # a page: matplotlib and every figure
            ),
        ),
    ),
)
