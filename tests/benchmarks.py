"""What the evaluation tests share: small benchmark files and gensim's answers on them."""

from __future__ import annotations

import numpy as np

from gpt2emb.choices import Rule
from gpt2emb.core import evaluate_files


def vocabulary(names: list[str], ignore_case: bool) -> evaluate_files.RuleWords:
    """A word vocabulary of the bare rule whose word i is token i."""
    return evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case)


def spelled(seed: int = 2) -> tuple[np.ndarray, list[str]]:
    """Planted: queen = king - man + woman, princess = prince - boy + girl, each with noise; five other
    spellings of woman and three of prince lie nearer still to those targets than the answers do."""
    rng = np.random.default_rng(seed)
    names = ["man", "king", "woman", "queen", "boy", "prince", "girl", "princess"]
    names += ["Woman", "WOMAN", "wOman", "woMan", "womAn", "Prince", "PRINCE", "pRince"]
    names += [f"f{i:02d}" for i in range(40)]
    d = 16
    wte = rng.standard_normal((len(names), d))
    unit = wte / np.linalg.norm(wte, axis=1)[:, None]
    at = {w: i for i, w in enumerate(names)}
    for a, b, c, answer, nearer in (("man", "king", "woman", "queen", names[8:13]),
                                    ("boy", "prince", "girl", "princess", names[13:16])):  # fmt: skip
        target = unit[at[b]] - unit[at[a]] + unit[at[c]]
        wte[at[answer]] = target + 0.15 * np.linalg.norm(target) * rng.standard_normal(d) / np.sqrt(d)
        for w in nearer:
            wte[at[w]] = target + 0.03 * np.linalg.norm(target) * rng.standard_normal(d) / np.sqrt(d)
    return wte.astype(np.float32), names
