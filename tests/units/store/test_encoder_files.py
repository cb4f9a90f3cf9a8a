"""store/encoder_files.py: the files an entry adds to the tokenizer's, and the ids around a text."""

from __future__ import annotations

from gpt2emb.store import encoder_files
from tiny_roberta import train_tokenizer


def test_the_ids_around_a_text_are_roberta_s_s_and_end() -> None:
    tok = train_tokenizer()
    assert tok.token_to_id("<s>") == 0 and tok.token_to_id("</s>") == 2  # RobertaProcessing's ids
    assert encoder_files.wraps(tok.to_str()) == [[0], [2]]
