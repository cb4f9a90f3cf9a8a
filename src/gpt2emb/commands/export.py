"""export: a table's rows to word2vec files or the Embedding Projector's."""

from gpt2emb.commands import JSON, Command, Method, Stem

STEM = Stem(
    place=100,
    commands=(
        Command(
            "export",
            shows="a table's rows for gensim, word2vec or the Embedding Projector",
            modes={JSON: ("ExportResult", "gpt2emb export -o FILE --json")},
            fuzz=(
                ("export", "--format", "{w}", "-o", "{path:v}", "--limit", "{n}"),
                ("export", "--format", "projector", "--table", "{w}", "-o", "{path:v}", "--limit", "{n}"),
            ),
            warm=("export", "--limit", "1000", "--format", "word2vec", "-o", "{out}"),
        ),
    ),
    handle=(
        Method(
            "export",
            {
                "fmt": "word2vec",
                "out": "v.txt",
                "table": "wte",
                "limit": 3,
                "whole_words": False,
                "reporter": None,
            },
            same_as=("export", "--format", "word2vec", "-o", "v.txt", "--limit", "3"),
        ),
    ),
)
