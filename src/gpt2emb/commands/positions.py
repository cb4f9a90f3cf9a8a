"""positions: the rows of wpe, and the heatmap of them all."""

from gpt2emb.commands import JSON, Command, Method, Stem

STEM = Stem(
    place=50,
    commands=(
        Command(
            "positions",
            shows="how alike the rows of the position table `wpe` are; a heatmap of all 1024",
            modes={
                JSON: ("PositionsResult", "gpt2emb positions P... --json"),
                "heatmap": ("HeatmapResult", "gpt2emb positions --heatmap --json (or --figure FILE --json)"),
            },
            fuzz=(
                ("positions", "{w}", "{v}"),
                ("positions", "{n}", "{n}-{v}"),
                ("positions", "--heatmap", "--cells", "{n}"),
                ("positions", "--figure", "{path:w}.png", "--cells", "{n}"),  # a figure when 2-256
                ("positions", "--png", "{path:w}.png", "--cells", "{n}"),  # --figure's old name
            ),
            warm=("positions", "0", "1", "2", "500"),
        ),
    ),
    handle=(
        Method("positions", {"positions": [0, 1]}, same_as=("positions", "0", "1")),
        Method("position_map", {"cells": 4, "png": None}, same_as=("positions", "--heatmap", "--cells", "4")),
    ),
)
