"""geometry: the shape of wte and wpe, and of content against position."""

from gpt2emb.commands import JSON, Command, Method, Stem

STEM = Stem(
    place=90,
    commands=(
        Command(
            "geometry",
            shows="the shape of both tables, and why adding them works",
            modes={JSON: ("GeometryResult", "gpt2emb geometry --json")},
            fuzz=(("geometry", "-m", "{w}"),),
            warm=("geometry",),
        ),
    ),
    handle=(Method("geometry", {}, same_as=("geometry",)),),
)
