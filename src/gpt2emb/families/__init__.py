"""Model families: everything that depends on a model's architecture, one module per family.

A family is a `Family` record: the config's `model_type`s it serves, the config fields that give its shape,
the tensor names of its token table, position table and output layer, how a token position maps to a row
of the position table, the tables added before the first block (token types, a layer norm), how a word
becomes a token, and the names of its transformers classes (as strings: only heavy.py imports
transformers). The rest of gpt2emb asks the record: no other module imports a family's module or
branches on a family's name (the registry's data names its models' families: a Shape's is "gpt2" unless it
says another). To add a family: a module here holding its `Family` (every module's records are found by
`_families()`, nothing lists them), and a tiny model of it in tests/tiny_NAME.py (as tests/tiny_roberta.py,
tests/tiny_llama.py).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from gpt2emb.bpe import from_byte_level, to_byte_level
from gpt2emb.errors import BadModel
from gpt2emb.registry import Shape


class Spelling:
    """How a family's vocabulary spells words. This base is byte-level BPE (GPT-2, RoBERTa: " king" is the
    entry "Ġking", each UTF-8 byte one character); a family that spells otherwise (WordPiece's "king" and
    "##ing", SentencePiece's "▁king") gives its record a subclass, with its own way to --exact. Tables show
    each token as the text it stands for, a word-initial token with a leading space (" king"), so two
    families' tokens compare by text.
    """

    name = "byte-level BPE"

    def fits(self, tokenizer: dict[str, Any]) -> bool:
        """Whether a tokenizer (its parsed tokenizer.json) spells its vocabulary this way."""
        return any(c.get("type") == "ByteLevel" for c in tokenizer_steps(tokenizer))

    def running(self, word: str) -> str:
        """What a typed word means: the word as it appears inside running text."""
        return " " + word

    def exact(self, tokenizer: Path) -> Callable[[str], tuple[int, ...] | None] | None:
        """--exact, the text as typed and not starting a word, for a vocabulary whose tokenizer (the path of
        its tokenizer.json) marks a word start at the beginning of any text: a function giving a text's ids
        so, or None for a text that the vocabulary spells only as the start of a word, or not at all. None
        here: the tokenizer takes a text as typed, as byte-level BPE's does ("king" is "king", " king" is
        typed with its space)."""
        return None

    def whole(self, text: str) -> str | None:
        """The vocabulary entry that the tokenizer makes of all of text when the vocabulary holds it, for a
        text where that is certain without running the tokenizer; None otherwise (the tokenizer decides)."""
        return to_byte_level(text) if _ONE_PRE_TOKEN.fullmatch(text) else None

    def text(self, piece: str) -> str:
        """The text a vocabulary entry stands for; bytes that are not whole UTF-8 characters as \\xNN."""
        raw = self.raw(piece)
        return piece if raw is None else raw.decode("utf-8", errors="backslashreplace")

    def raw(self, piece: str) -> bytes | None:
        """The bytes of a vocabulary entry, or None for an entry stored as plain text (an added token)."""
        return from_byte_level(piece)


def tokenizer_steps(tokenizer: dict[str, Any]) -> list[dict[str, Any]]:
    """Every step of a tokenizer's normalizer, pre-tokenizer and decoder, sequences opened."""
    found: list[dict[str, Any]] = []
    todo = [tokenizer.get(k) for k in ("normalizer", "pre_tokenizer", "decoder")]
    while todo:
        step = todo.pop()
        if isinstance(step, dict):
            found.append(step)
            todo += [s for k in ("normalizers", "pretokenizers", "decoders") for s in step.get(k) or []]
    return found


# Words made only of ASCII letters, or only of digits, are one pre-token for GPT-2's splitter, and a whole
# pre-token that the vocabulary holds is what byte-level BPE makes of it (a trained merge list reaches every
# entry it made; tests/units/test_tokens.py checks every such entry of GPT-2's real vocabulary).
_ONE_PRE_TOKEN = re.compile(r" ?(?:[A-Za-z]+|[0-9]+)")


# every family's default Spelling, one instance for all: a Spelling holds no state (nor do its subclasses)
BYTE_LEVEL = Spelling()


class Head(NamedTuple):
    """A masked language model's head, which scores the token at a position: dense, an activation, a layer
    norm, then the decoder (the token table, where tied) and its bias. Tensors are named as the language
    model's state dict names them; a checkpoint may store a layer norm's weight and bias as gamma and beta
    (TensorFlow's names, which the Hub's google-bert checkpoints keep)."""

    mask: str  # the mask token, as the tokenizer writes it in a text
    dense: str  # the dense layer: its .weight and .bias
    norm: str  # the layer norm: its .weight and .bias
    bias: tuple[str, ...]  # the decoder's bias (its own name first, then the names tied to it)
    activation: str = "gelu"  # the activation where the config does not name one (or none may: RoBERTa's)
    activation_key: str = ""  # the config field naming the activation ("": fixed in transformers' code)
    eps_key: str = ""  # the config field of the layer norm's epsilon ("": fixed in transformers' code)
    eps: float = 1e-12  # the epsilon where the config lacks that field (its config class's default)

    def tensors(self) -> dict[str, tuple[str, ...]]:
        """Each tensor the head reads, by its state dict name, and the names a checkpoint stores it by."""
        return {
            f"{self.dense}.weight": (f"{self.dense}.weight",),
            f"{self.dense}.bias": (f"{self.dense}.bias",),
            f"{self.norm}.weight": (f"{self.norm}.weight", f"{self.norm}.gamma"),
            f"{self.norm}.bias": (f"{self.norm}.bias", f"{self.norm}.beta"),
            self.bias[0]: self.bias,
        }

    def activation_of(self, config: dict[str, Any]) -> str:
        """The activation the head applies, as transformers names it."""
        return (
            str(config.get(self.activation_key) or self.activation)
            if self.activation_key
            else self.activation
        )

    def eps_of(self, config: dict[str, Any]) -> float:
        return float(config.get(self.eps_key, self.eps)) if self.eps_key else self.eps


class Family(NamedTuple):
    name: str
    title: str  # as messages name the family: "GPT-2"
    model_types: tuple[str, ...]
    # config fields, the first present wins
    d_model: tuple[str, ...]
    n_positions: tuple[str, ...]
    n_layer: tuple[str, ...]
    n_head: tuple[str, ...]
    # tensor names in a checkpoint, the first present wins
    token_table: tuple[str, ...]
    position_table: tuple[str, ...]  # () for a family without one (n_positions is then 0)
    type_table: tuple[str, ...] = ()  # token-type rows added to every token (row 0 for a single text)
    norm: tuple[tuple[str, str], ...] = ()  # (weight, bias) of a layer norm applied to the sum
    norm_eps: str = "layer_norm_eps"  # the config field of its epsilon
    # RoBERTa: the position table's row of position 0 is pad_token_id + 1 (the rows before it are never used)
    offset_after_pad: bool = False
    words: Spelling = BYTE_LEVEL
    # the text of its special tokens, to refuse them as words before a model of the family is fetched (once
    # fetched, its tokenizer's own list refuses them, with their ids)
    specials: re.Pattern[str] = re.compile(r"<\|[^|]*\|>")
    # transformers: the config, base model and language model classes, and the language model's names of its
    # output layer and of the token table, as `tying` names them
    classes: tuple[str, str, str] = ("", "", "")
    lm_names: tuple[str, str] = ("", "")
    # the output layer's names in a checkpoint, where they are not lm_names[0] (GPT-NeoX saves embed_out)
    output_table: tuple[str, ...] = ()
    causal: bool = True  # a next-token language model (tying --grad's loss)
    # the base model's attribute holding its final layer norm, which the output layer reads after (the
    # logit lens puts every layer's hidden state through it); "" for a family logits does not read
    final_norm: str = ""
    # a masked language model's head, which logits reads in place of an output layer after a final norm
    head: Head | None = None
    # the parameter counts of a model of this family from its shape alone, where a formula gives them
    # (`models`, and `sizes` without -m); `sizes -m` counts any model from its checkpoint headers
    params: Callable[[Shape], dict[str, int]] | None = None
    tied_default: bool = True  # tie_word_embeddings when a config leaves it out: its config class's default
    # why a family without a position table has none, as messages say it where one would be used
    no_position_table: str = ""
    # a static word table (word2vec, GloVe): its rows are words, not a transformer's tokens (side by side
    # says so of each model, from here alone)
    static: bool = False

    @property
    def norm_names(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The names a checkpoint may store the layer norm's weight and bias by, the first present wins: each
        pair's own, then TensorFlow's gamma and beta, which the Hub's google-bert checkpoints keep and
        transformers 5.4 writes again for any family when it saves a model it loaded."""
        weights = tuple(n for w, _ in self.norm for n in (w, w.removesuffix(".weight") + ".gamma"))
        biases = tuple(n for _, b in self.norm for n in (b, b.removesuffix(".bias") + ".beta"))
        return weights, biases

    @property
    def output_names(self) -> tuple[str, ...]:
        return self.output_table or self.lm_names[:1]

    def tied(self, config: dict[str, Any]) -> bool:
        """Whether the config ties the output layer to the token table."""
        return bool(config.get("tie_word_embeddings", self.tied_default))

    def position_offset(self, config: dict[str, Any]) -> int:
        """The row of the position table that holds token position 0."""
        return int(config.get("pad_token_id") or 0) + 1 if self.offset_after_pad else 0

    def shape(self, config: dict[str, Any], name: str) -> Shape:
        """The shape a config gives; n_positions counts usable positions (rows past the offset). The config
        is checked first (check_config): what it says is used to size arrays and to build the model."""
        check_config(self, config, f"{name}'s config.json")  # read_info checked it first, naming the file

        def field(keys: tuple[str, ...]) -> int:
            return int(next(config[k] for k in keys if k in config))

        total = field(self.n_positions) if self.position_table else 0
        offset = self.position_offset(config) if self.position_table else 0
        return Shape(
            vocab_size=int(config["vocab_size"]),
            d_model=field(self.d_model),
            n_positions=total - offset,
            n_layer=field(self.n_layer),
            n_head=field(self.n_head),
            family=self.name,
            position_offset=offset,
        )


# transformers' standard names of the shape fields, which every family's config class maps onto its own
# (GPT2Config's hidden_size is n_embd): a config holding both must say the same in each
_STANDARD = {
    "d_model": "hidden_size",
    "n_positions": "max_position_embeddings",
    "n_layer": "num_hidden_layers",
    "n_head": "num_attention_heads",
}
_EPSILONS = {"layer_norm_epsilon", "layer_norm_eps", "rms_norm_eps"}
_ACTIVATIONS = ("activation_function", "hidden_act", "activation")
_WIDTHS = ("n_inner", "intermediate_size", "hidden_dim", "ffn_dim")  # the MLP's width; null: its default
MAX_COUNT = 1 << 31  # no table or model of any size has a dimension past this


DAMAGED = "the model folder looks damaged: save it again"


def as_written(value: Any) -> str:
    """A config value as its file spells it (null, true, "gelu"), cut at 40 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def _bad(label: str, key: str, value: Any, want: str) -> BadModel:
    shown = as_written(value)
    return BadModel(f"{label} says {key} = {shown}, which must be {want}; {DAMAGED}")


def _integer(value: Any) -> bool:
    """A JSON integer: transformers' config classes refuse 2.0 where they want an int; true is no count."""
    return isinstance(value, int) and not isinstance(value, bool)


def _count(config: dict[str, Any], key: str, label: str, least: int) -> int:
    value = config[key]
    if isinstance(value, float) and value.is_integer() and least <= value < MAX_COUNT:
        raise _bad(label, key, value, f"an integer, written without a decimal point ({int(value)})")
    if not _integer(value) or not least <= value < MAX_COUNT:
        raise _bad(label, key, value, f"a whole number from {least} up")
    return int(value)


def check_config(family: Family, config: dict[str, Any], label: str) -> None:
    """Refuse a config whose values could not size a table or build its model, naming the key: gpt2emb
    sizes arrays from it and transformers builds the model from it, and neither must meet a count that is
    not a count or two fields that disagree. label: the config file as messages name it."""
    fields = {"d_model": family.d_model, "n_layer": family.n_layer, "n_head": family.n_head}
    if family.position_table:
        fields["n_positions"] = family.n_positions
    if "vocab_size" not in config:
        raise BadModel(f"{label} lacks a {family.title} field (vocab_size); {DAMAGED}")
    found = {"vocab_size": _count(config, "vocab_size", label, 1)}
    for field_name, keys in fields.items():
        present = [k for k in keys if k in config]
        if not present:
            raise BadModel(f"{label} lacks a {family.title} field ({keys[0]}); {DAMAGED}")
        value = _count(config, present[0], label, 1)
        for other in {*present[1:], _STANDARD[field_name]} & config.keys():
            if other == present[0] or (config[other] == value and _integer(config[other])):
                continue
            if config[other] == value:  # 32.0 or true beside 32 or 1
                raise _bad(
                    label, other, config[other], f"an integer, written without a decimal point ({value})"
                )
            raise BadModel(
                f"{label} says {present[0]} = {value} but {other} = {as_written(config[other])}: they name "
                f"one number; {DAMAGED}"
            )
        found[field_name] = value
    if "head_dim" not in config and found["d_model"] % found["n_head"]:
        raise _bad(
            label, family.n_head[0], found["n_head"], f"a divisor of {family.d_model[0]} = {found['d_model']}"
        )
    for key in _EPSILONS & config.keys():
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
            raise _bad(label, key, value, "a small positive number (GPT-2's is 1e-05)")
    for key in _ACTIVATIONS:
        if key in config and (not isinstance(config[key], str) or not config[key]):
            raise _bad(label, key, config[key], "the name of an activation function (GPT-2's is gelu_new)")
    for key in _WIDTHS:
        if config.get(key) is not None:
            _count(config, key, label, 1)
    if family.offset_after_pad and config.get("pad_token_id") is not None:
        _count(config, "pad_token_id", label, 0)
        if family.position_offset(config) >= found["n_positions"]:
            raise _bad(label, "pad_token_id", config["pad_token_id"], f"below {family.n_positions[0]} - 1")
    if "tie_word_embeddings" in config and not isinstance(config["tie_word_embeddings"], bool):
        raise _bad(label, "tie_word_embeddings", config["tie_word_embeddings"], "true or false")


def least_params(config: dict[str, Any], shape: Shape) -> int:
    """Fewer parameters than any model of this shape holds, whatever its family: its token table, and in
    each block attention's query and output projections, d x a each (a, attention's width: d, or n_head x
    head_dim where the config makes it smaller). A checkpoint too small to hold them is not of this config."""
    d, width = shape.d_model, shape.d_model
    head_dim = config.get("head_dim")
    if head_dim is not None:  # a head_dim transformers would refuse leaves the bound to the token table
        width = min(d, shape.n_head * head_dim) if _integer(head_dim) and head_dim > 0 else 0
    return shape.vocab_size * d + shape.n_layer * 2 * d * width


# a block's tensors in every family's checkpoint: h.3.attn (GPT-2, GPT-Neo), layers.3 (Llama, NeoX),
# layer.3 (BERT, DistilBERT)
_BLOCK = re.compile(r"(?:^|\.)(?:h|layers|layer)\.(\d+)\.")


def blocks_in(names: Iterable[str]) -> int | None:
    """How many blocks a checkpoint's tensor names hold (None: they name none, as a checkpoint of the
    embeddings alone)."""
    found = {int(m.group(1)) for key in names if (m := _BLOCK.search(key))}
    return len(found) or None


@functools.cache
def _families() -> tuple[Family, ...]:
    """Every family record of every module of this package (gpt2 first: messages list the families in this
    order): a new family is a new module, and nothing else lists it."""
    import pkgutil  # only here: a warm command imports its one family (by_name), and lists none

    found: dict[str, Family] = {}  # by name: a module that builds on another's record imports it too
    modules = sorted((m.name for m in pkgutil.iter_modules(__path__)), key=lambda m: (m != "gpt2", m))
    for module in modules:
        for value in vars(importlib.import_module(f"{__name__}.{module}")).values():
            if isinstance(value, Family):
                found.setdefault(value.name, value)
    return tuple(found.values())


def by_name(name: str) -> Family:
    """The family of that name. A family's module is named as its record (gpt2.py holds gpt2's): that module
    alone is imported where it holds it, so a command on one model imports one family, not all."""
    if name.isidentifier():
        with contextlib.suppress(ImportError):
            module = importlib.import_module(f"{__name__}.{name}")
            own = (v for v in vars(module).values() if isinstance(v, Family) and v.name == name)
            found = next(own, None)
            if found is not None:
                return found
    return next(f for f in _families() if f.name == name)


def of_config(config: dict[str, Any], name: str) -> Family:
    """The family of a model by its config's model_type; BadModel names the supported ones otherwise."""
    model_type = config.get("model_type")
    for family in _families():
        if model_type in family.model_types:
            return family
    supported = ", ".join(t for f in _families() for t in f.model_types)
    raise BadModel(
        f"{name} is a model gpt2emb does not read (its config says model_type={model_type!r}); "
        f"supported model types: {supported}"
    )


def shape_of(config: dict[str, Any], name: str) -> Shape:
    return of_config(config, name).shape(config, name)


def words_for(family: Family, tokenizer: dict[str, Any]) -> Spelling:
    """How a model's vocabulary spells words: its family's way, unless its tokenizer (parsed tokenizer.json)
    says another family's (SmolLM and Llama 3 are Llama models with byte-level BPE, not SentencePiece)."""
    kinds = (family.words, *(f.words for f in _families()))
    return next((w for w in kinds if w.fits(tokenizer)), family.words)


def words_named(name: str, family: Family) -> Spelling:
    """The Spelling a cache entry recorded by name (the family's own for an entry that recorded none).
    Spellings hold no state, so one of that name is as good as another: the family's own, when it is that
    one, needs no other family imported."""
    if family.words.name == name:
        return family.words
    return next((f.words for f in _families() if f.words.name == name), family.words)
