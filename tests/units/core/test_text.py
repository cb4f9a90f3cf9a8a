"""core/text.py pinned where a mutation run (scripts/mutate.py) found it loose: what a refusal of `context`
shows (a "sentence" of one word up to 40 characters, what the shell makes of a sentence left unquoted; the
first 16 tokens of a sentence that lacks the word), and the positions of `input` whose rows add up past
float32, the tokens a tokenizer puts before a text, a text WordPiece makes no tokens of, each spelt here from
the tiny model's own tokenizer."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer, processors

from gpt2emb.quoting import quote
from oracles import PAID, RIVER, ids_of
from tiny_bert import TinyBert
from tiny_bert import build as build_bert

from conftest import run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local


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


@pytest.fixture(scope="module")
def past_float32(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int]:
    """The tiny model with the row of " cat" and the rows of positions 1 to 9 at 3e38 along one axis: a cat at
    any of those positions adds up past float32's largest number (3.4e38), another token does not."""
    big = np.float32(3e38)
    wte, wpe = tiny.wte.copy(), tiny.wpe.copy()
    cat = tiny.id("cat")
    wte[cat] = 0.0
    wte[cat, 0] = big
    wpe[1:10] = 0.0
    wpe[1:10, 0] = big
    folder = save_local(dataclasses.replace(tiny, wte=wte, wpe=wpe), tmp_path_factory.mktemp("past") / "m")
    return str(folder), cat


def overflow_note(positions: list[int]) -> str:
    where = ", ".join(str(p) for p in positions[:5]) + (", ..." if len(positions) > 5 else "")
    return (
        f"at position{'s' if len(positions) > 1 else ''} {where} the rows are finite, but their sum is past "
        "float32's largest number (3.4e38): the model adds them in float32, so its input there is not a "
        "finite number"
    )


@pytest.mark.parametrize("text", ["a cat dog", "a cat cat dog", "a" + " cat" * 5, "a" + " cat" * 6, "a dog"])
def test_the_positions_whose_rows_add_up_past_float32_are_named(
    tiny: Tiny, past_float32: tuple[str, int], text: str
) -> None:
    folder, cat = past_float32
    ids = ids_of(tiny, text)
    past = [p for p, i in enumerate(ids) if i == cat and 1 <= p < 10]  # by hand: where a cat meets a big row
    doc = json.loads(run_cli("input", text, "-m", folder, "--json").stdout)
    assert [t["position"] for t in doc["tokens"] if t["h0_norm"] is None] == past
    assert doc["notes"][:1] == ([overflow_note(past)] if past else [])  # then the JSON's note on its nulls


@pytest.mark.parametrize("before", [1, 2])
def test_tokens_a_tokenizer_puts_before_a_text_alone_move_its_positions(
    tiny: Tiny, tmp_path: Path, before: int
) -> None:
    """A tokenizer that adds tokens before a text and none after (as Llama's adds <s>): the note counts the
    ones before."""
    tok = Tokenizer.from_str(tiny.tokenizer.to_str())
    eot = tok.token_to_id("<|endoftext|>")
    tok.post_processor = processors.TemplateProcessing(
        single="<|endoftext|> " * before + "$A", special_tokens=[("<|endoftext|>", eot)]
    )
    assert tok.encode("a").ids[:before] == [eot] * before and tok.encode("a").ids[-1] != eot
    folder = str(save_local(dataclasses.replace(tiny, tokenizer=tok), tmp_path / "bos"))
    doc = json.loads(run_cli("input", "the cat", "-m", folder, "--json").stdout)
    added, later = " ".join(["<|endoftext|>"] * before), f"{before} position{'s' if before > 1 else ''} later"
    assert doc["notes"] == [
        f"{folder}'s tokenizer, called as usual, adds {added} before the text; shown here as typed, without "
        f"them: in use each token sits {later}"
    ]


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> TinyBert:
    return build_bert(tmp_path_factory.mktemp("bert"))


@pytest.mark.parametrize("size", [80, 81, 200])
def test_a_text_of_no_tokens_is_shown_up_to_80_characters(bert: TinyBert, size: int) -> None:
    """WordPiece drops white space: a text of nothing else is no tokens, and the message shows its first 80
    characters (then ...)."""
    text = " " * size
    result = run_cli("input", text, "-m", str(bert.folder))
    assert result.exit_code == 2
    shown = '"' + " " * min(size, 80) + '"' + ("..." if size > 80 else "")
    assert (
        result.stderr == f"gpt2emb: the text {shown} is no tokens at all in {bert.folder}: type some words\n"
    )
