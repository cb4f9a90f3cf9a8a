"""neighbors: the nearest tokens by cosine (and, beneath it with analogy, several models side by side)."""

from gpt2emb.commands import JSON, JSONL, SIDE, STDIN, Command, Method, Stem

RANKED = {"exact": False, "pool": "mean", "keep_query": False, "among": None, "restrict": None}

STEM = Stem(
    place=20,
    commands=(
        Command(
            "neighbors",
            shows="the nearest tokens by cosine, over all of `wte` or a list of candidates",
            modes={
                JSON: ("NeighborsResult", "gpt2emb neighbors WORD... --json"),
                JSONL: (
                    "NeighborsItem",
                    "gpt2emb neighbors WORD... --jsonl (a line per word; with -, per input line)",
                ),
                SIDE: ("SideBySideResult", "gpt2emb neighbors WORD... -m A -m B --json (two or more models)"),
                STDIN: ("NeighborsResult", "gpt2emb neighbors - --json < words.txt"),
            },
            fuzz=(
                ("neighbors", "{w}", "-k", "{n}"),
                ("neighbors", "{w}", "--restrict", "{n}", "--whole-words", "--fold"),
                ("neighbors", "cat", "--among", "{path:v}", "-m", "{w}"),
                ("neighbors", "-", "-k", "{n}", "--strict"),
            ),
            warm=("neighbors", "cat"),
            floor=True,
        ),
    ),
    handle=(
        Method(
            "neighbors",
            {"words": ["cat"], "k": 2, **RANKED, "whole_words": False, "fold": False},
            same_as=("neighbors", "cat", "-k", "2"),
        ),
        Method("each_neighbors", {"words": ["cat"], "k": 2, **RANKED, "whole_words": False, "fold": False}),
        Method("side_by_side", {"results": []}, module_level=True),
    ),
)
