"""vector: the raw row of wte for each word."""

from gpt2emb.commands import JSON, JSONL, STDIN, Command, Method, Stem

STEM = Stem(
    place=10,
    commands=(
        Command(
            "vector",
            shows="a token's raw row of `wte`: its first numbers, norm, mean, spread",
            modes={
                JSON: ("VectorResult", "gpt2emb vector WORD... --json"),
                JSONL: (
                    "VectorItem",
                    "gpt2emb vector WORD... --jsonl (a line per word; with -, per input line)",
                ),
                STDIN: ("VectorResult", "gpt2emb vector - --json < words.txt"),
            },
            fuzz=(
                ("vector", "{w}"),
                ("vector", "{w}", "{v}", "--dims", "{n}", "--pool", "{v}"),
                ("vector", "id:{n}", "--exact", "--jsonl"),
                ("vector", "-", "--strict", "--jsonl"),
            ),
            warm=("vector", "cat"),
            floor=True,
        ),
    ),
    handle=(
        Method("vector", {"words": "cat", "exact": False, "pool": "mean"}, same_as=("vector", "cat")),
        Method("each_vector", {"words": ["cat"], "exact": False, "pool": "mean"}),
    ),
)
