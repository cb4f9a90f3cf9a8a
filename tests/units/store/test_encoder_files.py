"""store/encoder_files.py: the files an entry adds to the tokenizer's, and the ids around a text."""

from __future__ import annotations

from gpt2emb.store import encoder_files
from tiny_roberta import train_tokenizer


def test_the_ids_around_a_text_are_roberta_s_s_and_end() -> None:
    tok = train_tokenizer()
    assert tok.token_to_id("<s>") == 0 and tok.token_to_id("</s>") == 2  # RobertaProcessing's ids
    assert encoder_files.wraps(tok.to_str()) == [[0], [2]]


def _word_level(single: str | None) -> str:
    """A tokenizer of three words and two special tokens, its template single (None: no post-processor)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "[CLS]": 2, "[SEP]": 3}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if single is not None:
        tok.post_processor = processors.TemplateProcessing(
            single=single, special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
        )
    return str(tok.to_str())


def test_the_ids_around_a_text_are_those_its_template_puts_before_and_after_it() -> None:
    """BERT's template puts [CLS] before and [SEP] after. With no template, or one that does not keep the
    text in one piece (here it is said twice, around [SEP]), nothing is said to wrap it."""
    assert encoder_files.wraps(_word_level("[CLS] $A [SEP]")) == [[2], [3]]
    assert encoder_files.wraps(_word_level("$A [SEP] [SEP]")) == [[], [3, 3]]
    assert encoder_files.wraps(_word_level(None)) == [[], []]
    assert encoder_files.wraps(_word_level("$A [SEP] $A")) == [[], []]
