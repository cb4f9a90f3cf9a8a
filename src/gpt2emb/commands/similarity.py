"""similarity: the cosine of every pair of words (and similarity --eval, a word-pair benchmark)."""

from gpt2emb.commands import EVAL, EVAL_SIDE, JSON, SIDE, STDIN, Command, Method, Stem

STEM = Stem(
    place=40,
    commands=(
        Command(
            "similarity",
            shows="the cosine matrix of a few words, or their cosines in several models side by side; a "
            "word-pair benchmark's correlation",
            modes={
                JSON: ("SimilarityResult", "gpt2emb similarity WORD... --json"),
                STDIN: ("SimilarityResult", "gpt2emb similarity - --json < words.txt"),
                SIDE: (
                    "SimilaritySideBySide",
                    "gpt2emb similarity WORD... -m A -m B --json (two or more models)",
                ),
                EVAL: ("PairsEvalResult", "gpt2emb similarity --eval FILE --json"),
                EVAL_SIDE: (
                    "EvalSideBySide",
                    "gpt2emb similarity --eval FILE -m A -m B --json (two or more models)",
                ),
            },
            fuzz=(
                ("similarity", "{w}", "{v}"),
                ("similarity", "--eval", "{path:w}", "--rule", "{v}"),
                ("similarity", "-", "--strict"),
            ),
            warm=("similarity", "cat", "dog", "king", "queen"),
        ),
    ),
    handle=(
        Method(
            "similarity",
            {"words": ["cat", "dog"], "exact": False, "pool": "mean"},
            same_as=("similarity", "cat", "dog"),
        ),
        Method("each_similarity", {"words": ["cat", "dog"], "exact": False, "pool": "mean"}),
        Method(
            "similarity_eval",
            {"file": "pairs.txt", "rule": "space", "ignore_case": False},
            same_as=("similarity", "--eval", "pairs.txt"),
        ),
    ),
)
