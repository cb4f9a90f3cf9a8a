"""bpe.table declines a tokenizer whose merges name a part missing from its vocabulary.

A mutation run found this loose: the checks of a merge's left part, right part and result were not each pinned
(a check of the right part twice instead of the left one went unnoticed). A merge that names a token the
vocabulary lacks is not one `Bpe` can apply: `table` must answer None (the tokenizers library then does the
encoding), not crash building the array.
"""

from __future__ import annotations

import json

import pytest

from gpt2emb import bpe

from tinymodel import Tiny


@pytest.mark.parametrize(
    ("merge", "in_vocab"),
    [
        (["qqq", "x"], "qqqx"),  # the left part is missing
        (["x", "qqq"], "xqqq"),  # the right part is missing
        (["x", "x"], None),  # both parts are there, what they make is missing
    ],
)
def test_a_merge_naming_a_missing_token_gets_no_table(
    merge: list[str], in_vocab: str | None, tiny: Tiny
) -> None:
    text = json.loads(tiny.tokenizer.to_str())
    vocab = text["model"]["vocab"]
    assert bpe.table(text) is not None
    assert "qqq" not in vocab and "xx" not in vocab and "x" in vocab
    if in_vocab is not None:
        vocab[in_vocab] = max(vocab.values()) + 1
    text["model"]["merges"].append(merge)
    assert bpe.table(text) is None
