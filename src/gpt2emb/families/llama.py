"""Llama and Mistral (one layout, two model_types; SmolLM is a Llama): no position table (rotary position
embeddings rotate the queries and keys inside attention), an output layer that is usually a matrix of its own
(the config classes default tie_word_embeddings to false), and SentencePiece-style BPE words ("▁king", byte
fallback pieces such as "<0x0A>"); a model of theirs with a byte-level tokenizer reads as byte-level BPE
(families.words_for)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpt2emb.families import Family, Spelling, tokenizer_steps

ROTARY = "rotary position embeddings rotate the queries and keys inside attention"
_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


class SentencePiece(Spelling):
    """SentencePiece's spelling: a word-initial piece starts with "▁" ("▁king" is " king"), and a character
    the vocabulary lacks is spelled by byte fallback pieces, one per UTF-8 byte ("<0xC3>" "<0xA9>" is "é")."""

    name = "SentencePiece BPE"

    def fits(self, tokenizer: dict[str, Any]) -> bool:
        steps = tokenizer_steps(tokenizer)
        return any(s.get("type") == "Metaspace" for s in steps) or any(
            s.get("type") in ("Replace", "Prepend") and "▁" in str(s) for s in steps
        )

    def running(self, word: str) -> str:
        # the tokenizer itself puts "▁" before the first word of a text (SentencePiece's dummy prefix), as
        # before every word of running text: the bare word becomes "▁king"; " king" would become "▁▁king"
        # under the Prepend normalizer of Llama 2's and Mistral's tokenizer.json
        return word

    def exact(self, tokenizer: Path) -> Callable[[str], tuple[int, ...] | None] | None:
        # the tokenizer puts "▁" before a text (the dummy prefix: a Metaspace pre-tokenizer's prepend_scheme,
        # or the Prepend normalizer of Llama 2's and Mistral's tokenizer.json); the same tokenizer without it
        # takes a text as typed: "at" is the piece "at", as inside "gato", and " at" is "▁at"
        from tokenizers import Tokenizer

        parsed = json.loads(tokenizer.read_text(encoding="utf-8"))
        unmarked = {key: _unmarked(parsed.get(key)) for key in ("normalizer", "pre_tokenizer")}
        if all(step == parsed.get(key) for key, step in unmarked.items()):
            return None
        bare = Tokenizer.from_str(json.dumps({**parsed, **unmarked}))
        return lambda text: tuple(bare.encode(text, add_special_tokens=False).ids)

    def whole(self, text: str) -> str | None:
        return None  # whether "▁" is put in front depends on the tokenizer's settings: it decides

    def raw(self, piece: str) -> bytes | None:
        byte = _BYTE.fullmatch(piece)
        return bytes([int(byte.group(1), 16)]) if byte else piece.replace("▁", " ").encode("utf-8")


def _unmarked(step: Any) -> Any:
    """A normalizer or pre-tokenizer (parsed from tokenizer.json; None for none) made to put no "▁" before a
    text, sequences opened: a Prepend of "▁" goes, a Metaspace gets the prepend_scheme "never" (and loses
    the older add_prefix_space, which the tokenizers library wants to agree with the scheme)."""
    if not isinstance(step, dict):
        return step
    if step.get("type") == "Prepend" and step.get("prepend") == "▁":
        return None
    if step.get("type") == "Metaspace":
        return {**{k: v for k, v in step.items() if k != "add_prefix_space"}, "prepend_scheme": "never"}
    for key in ("normalizers", "pretokenizers"):
        if isinstance(step.get(key), list):
            kept = (_unmarked(s) for s in step[key])
            return {**step, key: [s for s in kept if s is not None]}
    return step


def _record(name: str, title: str, prefix: str) -> Family:
    return Family(
        name=name,
        title=title,
        model_types=(name,),
        d_model=("hidden_size",),
        n_positions=(),
        n_layer=("num_hidden_layers",),
        n_head=("num_attention_heads",),
        token_table=("model.embed_tokens.weight", "embed_tokens.weight"),
        position_table=(),
        words=SentencePiece(),
        specials=re.compile(r"</?s>|<unk>|<\|[^|]*\|>"),
        classes=(f"{prefix}Config", f"{prefix}Model", f"{prefix}ForCausalLM"),
        lm_names=("lm_head.weight", "model.embed_tokens.weight"),
        final_norm="norm",
        tied_default=False,
        no_position_table=ROTARY,
    )


LLAMA = _record("llama", "Llama", "Llama")
MISTRAL = _record("mistral", "Mistral", "Mistral")
