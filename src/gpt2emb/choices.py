"""The choices of the CLI's options, shared with the core; free of heavy imports so --help stays instant."""

from __future__ import annotations

from enum import StrEnum


class Pool(StrEnum):
    mean = "mean"
    first = "first"
    strict = "strict"


class Method(StrEnum):
    """How an analogy is scored (see sums.py)."""

    add = "add"
    cosadd = "3cosadd"
    cosmul = "3cosmul"


class DType(StrEnum):
    fp32 = "fp32"
    fp16 = "fp16"


class Rule(StrEnum):
    """How a word of an evaluation file becomes a token."""

    space = "space"  # as in running text: king -> " king"
    bare = "bare"  # as typed: king -> "king"


class Format(StrEnum):
    """What `export` writes (see core/export.py)."""

    word2vec = "word2vec"  # text: a header, then `key v1 v2 ...` per row
    word2vec_binary = "word2vec-binary"  # a header, then `key ` and the row's float32 bytes per row
    projector = "projector"  # a folder: the Embedding Projector's vectors.tsv and metadata.tsv


class Table(StrEnum):
    wte = "wte"  # the token rows
    wpe = "wpe"  # the position rows, from position 0


class Through(StrEnum):
    """The other table logits --through scores with, beside the output layer."""

    wte = "wte"
