"""core/text.py pinned where a mutation run (scripts/mutate.py) found it loose: what a refusal of `context`
shows (a "sentence" of one word up to 40 characters, what the shell makes of a sentence left unquoted; the
first 16 tokens of a sentence that lacks the word), each spelt here from the tiny model's own tokenizer."""

from __future__ import annotations

import pytest

from gpt2emb.tokens import quote
from oracles import PAID, RIVER, ids_of

from conftest import run_cli
from fakehub import FakeHub
from tinymodel import Tiny


@pytest.mark.parametrize("size", [1, 39, 40])
def test_one_word_of_up_to_40_characters_is_a_sentence_left_unquoted(hub: FakeHub, size: int) -> None:
    word = "x" * size
    result = run_cli("context", "king", RIVER, word)
    assert result.exit_code == 2
    assert (
        f"gpt2emb: sentence 2 is the one word \"{word}\", without 'king': each sentence is one argument"
        in (result.stderr)
    )
    assert hub.requests == []  # refused before anything is fetched


def test_one_word_of_41_characters_is_looked_in_as_a_sentence(hub: FakeHub) -> None:
    result = run_cli("context", "king", RIVER, "x" * 41)
    assert result.exit_code == 2
    assert f'gpt2emb: " king" is not in sentence 2 ("{"x" * 41}"), whose tokens are ' in result.stderr


def sentence_of(tiny: Tiny, tokens: int) -> str:
    """Words without king, one more at a time, until the tiny tokenizer makes exactly `tokens` of them."""
    words = ["the"]
    while len(ids_of(tiny, " ".join(words))) < tokens:
        words.append(["cat", "and", "dog"][len(words) % 3])
    text = " ".join(words)
    assert len(ids_of(tiny, text)) == tokens  # each word after the first is one token of its own
    return text


@pytest.mark.parametrize("tokens", [4, 16, 17, 30])
def test_a_sentence_without_the_word_shows_its_first_16_tokens(hub: FakeHub, tiny: Tiny, tokens: int) -> None:
    text = sentence_of(tiny, tokens)
    ids = ids_of(tiny, text)
    shown = " ".join(quote(tiny.tokenizer.decode([i])) for i in ids[:16]) + (" ..." if len(ids) > 16 else "")
    result = run_cli("context", "king", PAID, text)
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert f"whose tokens are {shown}: the word counts as in running text" in message
