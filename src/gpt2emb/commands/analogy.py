"""analogy: A is to B as C is to what (and analogy --eval, a benchmark file of them)."""

from gpt2emb.commands import EVAL, EVAL_SIDE, JSON, JSONL, SIDE, STDIN, Command, Method, Stem

RANKED = {"exact": False, "pool": "mean", "keep_inputs": False, "method": "add", "among": None}

STEM = Stem(
    place=30,
    commands=(
        Command(
            "analogy",
            shows="`king - man + woman`, and where each input would rank; whole benchmark files",
            modes={
                JSON: ("AnalogyResult", "gpt2emb analogy A B C --json"),
                JSONL: (
                    "AnalogyResult",
                    "gpt2emb analogy A B C --jsonl (one line; with -, a line per question)",
                ),
                SIDE: ("SideBySideResult", "gpt2emb analogy A B C -m A -m B --json (two or more models)"),
                STDIN: ("AnalogyBatch", "gpt2emb analogy - --json < questions.txt"),
                EVAL: ("AnalogyEvalResult", "gpt2emb analogy --eval FILE --json"),
                EVAL_SIDE: (
                    "EvalSideBySide",
                    "gpt2emb analogy --eval FILE -m A -m B --json (two or more models)",
                ),
            },
            fuzz=(
                ("analogy", "{w}", "king", "man", "-k", "{n}", "--method", "{v}"),
                ("analogy", "--eval", "{path:w}", "--restrict", "{n}"),
                ("analogy", "-", "--jsonl", "-k", "{n}"),
            ),
            warm=("analogy", "king", "man", "woman"),
            floor=True,
        ),
    ),
    handle=(
        Method(
            "analogy",
            {
                "a": "king",
                "b": "man",
                "c": "woman",
                "k": 2,
                **RANKED,
                "restrict": None,
                "whole_words": False,
                "positive": None,
                "negative": None,
            },
            same_as=("analogy", "king", "man", "woman", "-k", "2"),
        ),
        Method(
            "each_analogy",
            {"questions": ["king man woman"], "k": 2, **RANKED, "restrict": None, "whole_words": False},
        ),
        Method(
            "analogy_eval",
            {
                "file": "questions.txt",
                "method": "add",
                "rule": "space",
                "ignore_case": False,
                "errors": False,
                "restrict": None,
            },
            same_as=("analogy", "--eval", "questions.txt"),
        ),
    ),
)
