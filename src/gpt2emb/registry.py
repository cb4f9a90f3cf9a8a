"""The named models as data (the four GPT-2 sizes first), and resolve(): a name typed -> what to open."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gpt2emb import limits
from gpt2emb.errors import UnknownModel, UsageError, option

if TYPE_CHECKING:
    from gpt2emb.report import Reporter


# The internal records a warm command builds are typing.NamedTuple, not frozen dataclasses: a frozen dataclass
# costs ~1 ms to build at import, a NamedTuple a sixth of that. Results stay frozen dataclasses (the JSON
# contract, results/).
class Shape(NamedTuple):
    """The figures that fix a model's embedding tables (and, for GPT-2, every parameter count)."""

    vocab_size: int
    d_model: int
    n_positions: int
    n_layer: int
    n_head: int
    family: str = "gpt2"  # families/
    position_offset: int = 0  # the position table's row of position 0 (RoBERTa: 2)

    @property
    def position_table(self) -> bool:
        """Whether the model learned a row per position (a rotary model has none: n_positions is 0)."""
        return self.n_positions > 0


# the special tokens of each model's tokenizer and their ids: a special token typed as a word is refused
# naming its id before anything is fetched
GPT2_SPECIALS = (("<|endoftext|>", 50256),)
ROBERTA_SPECIALS = (("<s>", 0), ("<pad>", 1), ("</s>", 2), ("<unk>", 3), ("<mask>", 50264))


class ModelSpec(NamedTuple):
    name: str
    repo: str
    aliases: tuple[str, ...]
    shape: Shape
    special_ids: tuple[tuple[str, int], ...] = GPT2_SPECIALS


MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("gpt2", "openai-community/gpt2", ("small", "gpt2-small"), Shape(50257, 768, 1024, 12, 12)),
    ModelSpec("gpt2-medium", "openai-community/gpt2-medium", ("medium",), Shape(50257, 1024, 1024, 24, 16)),
    ModelSpec("gpt2-large", "openai-community/gpt2-large", ("large",), Shape(50257, 1280, 1024, 36, 20)),
    ModelSpec("gpt2-xl", "openai-community/gpt2-xl", ("xl",), Shape(50257, 1600, 1024, 48, 25)),
    ModelSpec("distilgpt2", "distilbert/distilgpt2", (), Shape(50257, 768, 1024, 6, 12)),
    # 514 rows of positions, the first two never used for a token: 512 positions (families/roberta.py)
    ModelSpec(
        "roberta-base",
        "FacebookAI/roberta-base",
        ("roberta",),
        Shape(50265, 768, 512, 12, 12, "roberta", 2),
        ROBERTA_SPECIALS,
    ),
    ModelSpec(
        "roberta-large",
        "FacebookAI/roberta-large",
        (),
        Shape(50265, 1024, 512, 24, 16, "roberta", 2),
        ROBERTA_SPECIALS,
    ),
)
GPT2_SIZES = MODELS[:4]  # what `sizes` compares by the formula, without weights
DEFAULT_MODEL = "gpt2"

# The patterns below are compiled (and kept in re's cache) when a name first needs one: a registry name never
# does. Their flags are inline: (?s) DOTALL, (?a) ASCII.
# owner/name in shape (a path was ruled out before): the Hub's own rule (_HUB_RULE) then says if it is one
_REPO_SHAPED = r"[^/\\\s]+/[^/\\\s]+"
# what only a path looks like: a drive (C:\ or C:/) or a backslash (Windows), a start of /, ./ or ../
_PATH = r"(?s)[A-Za-z]:[\\/]|\.{0,2}/|.*\\"
# huggingface_hub's validate_repo_id: each part (owner and name) a run of [\w.-] between word characters,
# 1-96 long, no -- or .., not ending in .git
_HUB_PART = r"[A-Za-z0-9_](?:[\w.-]*[A-Za-z0-9_])?"
_HUB_RULE = rf"(?as)(?!.*(?:--|\.\.))(?!.*\.git$)(?=[^/]{{1,96}}/){_HUB_PART}/(?=.{{1,96}}$){_HUB_PART}"
# a branch, tag or commit id as git allows them, kept to what can name a file of ours once quoted
_REVISION = r"(?a)(?!.*\.\.)(?!.*//)[A-Za-z0-9_][\w./+-]{0,199}(?<![/.])"


class ModelRef(NamedTuple):
    """What a model name points at: a Hub repo (maybe a registry model) at a revision, a local folder, or a
    static word table in one file (word2vec, GloVe, fastText's .vec: store/static.py)."""

    name: str  # what we show: the registry name, the repo id, the folder or the file; name@revision off main
    repo: str | None = None
    folder: Path | None = None
    spec: ModelSpec | None = None
    revision: str = "main"  # a branch, tag or commit id of the Hub repo
    file: Path | None = None  # a static word table's file, its links followed
    encoding: str = "utf-8"  # how a static file's words are written (--encoding)

    @property
    def static(self) -> bool:
        """Whether this is a static word table (one file of a vector per word), not a transformer."""
        return self.file is not None


def _names() -> dict[str, ModelSpec]:
    return {n.lower(): m for m in MODELS for n in (m.name, m.repo, *m.aliases)}


def find(name: str) -> ModelSpec | None:
    return _names().get(name.strip().lower())


def resolve(name: str, revision: str | None = None, encoding: str | None = None) -> ModelRef:
    """A registry name or alias, a local folder, a static word table's file, or a Hub repo id `owner/name`;
    anything else is an error.

    revision (a branch, tag or commit id; main when None) applies to a Hub repo; a folder has none.
    encoding (UTF-8 when None) applies to a static file alone."""
    return with_encoding(_resolve(name, revision), encoding)


def with_encoding(ref: ModelRef, encoding: str | None) -> ModelRef:
    """A static file read in an encoding (--encoding); a UsageError for a model that is no static file."""
    if encoding is None:
        return ref
    if not ref.static:
        raise UsageError(
            f"{option('encoding')} is for a static word table's file (word2vec, GloVe), and {ref.name} is "
            "not one: leave it out"
        )
    return ref._replace(encoding=checked_encoding(encoding))


def checked_encoding(encoding: str) -> str:
    """An encoding's canonical name, when Python knows it and it writes a space and the digits as ASCII does
    (the numbers of a word2vec or GloVe file are ASCII); else a UsageError."""
    import codecs

    try:
        found = codecs.lookup(encoding).name
    except (LookupError, ValueError):
        raise UsageError(
            f"{option('encoding', encoding)} is not an encoding Python knows: give one such as utf-8, "
            "latin-1 or cp1252"
        ) from None
    probe = " 0123456789.+-eE\n"
    try:
        ascii_like = probe.encode(found) == probe.encode("ascii")
    except (UnicodeError, LookupError):
        ascii_like = False
    if not ascii_like:
        raise UsageError(
            f"{option('encoding', encoding)} does not write spaces and digits as ASCII does, as a word2vec "
            "or GloVe file's numbers are written: give an encoding such as utf-8, latin-1 or cp1252"
        )
    return found


def _resolve(name: str, revision: str | None) -> ModelRef:
    if not name.strip():
        raise UnknownModel("an empty model name; give gpt2, medium, large, xl, a Hub repo id or a folder")
    if revision is not None and not re.fullmatch(_REVISION, revision):
        raise UsageError(
            f"{option('revision', revision)} is not a branch, tag or commit id "
            "(letters, digits and . _ - + /)"
        )
    spec = find(name)
    if spec is not None:
        return at_revision(ModelRef(spec.name, repo=spec.repo, spec=spec), revision)
    path = limits.user_path(name)
    is_dir, exists = _kind(path)
    if is_dir:
        if revision is not None:
            raise UsageError(
                f"{option('revision')} is for Hub models, and {name} is a local folder: leave it out"
            )
        return ModelRef(str(path), folder=path.resolve())
    if exists:  # a file here is what was meant, even named as a repo (a/b): a static word table
        if revision is not None:
            raise UsageError(
                f"{option('revision')} is for Hub models, and {name} is a file (a static word table): leave "
                "it out"
            )
        from gpt2emb import kept  # what gpt2emb reads, it never writes over

        kept.reading(path)
        return ModelRef(str(path), file=path.resolve())
    if re.match(_PATH, name):
        shown = name if name.isprintable() else repr(name)
        raise UnknownModel(
            f"no such file or folder: {shown}; give the folder that holds the model's config.json and "
            "weights, or a word2vec, GloVe or fastText .vec file"
        )
    if re.fullmatch(_REPO_SHAPED, name):
        if not re.fullmatch(_HUB_RULE, name):
            raise UnknownModel(
                f"{name[:120]}{'...' if len(name) > 120 else ''} is not a Hub repo id: the Hub names a repo "
                "owner/name, each part of letters, digits, '-', '_' and '.', neither starting nor ending "
                "with '-' or '.', without '--' or '..', each part at most 96 characters"
            )
        return at_revision(ModelRef(name, repo=name), revision)
    close = difflib.get_close_matches(name.lower(), list(_names()), n=1, cutoff=0.6)
    hint = (
        f"did you mean {_names()[close[0]].name}?"
        if close
        else "known models: " + ", ".join(m.name for m in MODELS)
    )
    shown = name if name.strip() and name.isprintable() else repr(name)
    shown = shown if len(shown) <= 100 else shown[:100] + "..."
    raise UnknownModel(
        f"{shown} is not a model I know; {hint} "
        "(a Hub repo is written owner/name, a local model is a folder with config.json)"
    )


def _kind(path: Path) -> tuple[bool, bool]:
    """Whether a path is a folder, and whether it exists; a name no file can have (too long, a NUL in it)
    is neither."""
    try:
        return path.is_dir(), path.exists()
    except (OSError, ValueError):
        return False, False


def at_revision(ref: ModelRef, revision: str | None) -> ModelRef:
    """A Hub model at a revision, named name@revision unless it is main."""
    if revision is None or revision == "main":
        return ref
    return ModelRef(f"{ref.name}@{revision}", ref.repo, ref.folder, ref.spec, revision)


def distinct_models(
    names: list[str], revision: str | None = None, reporter: Reporter | None = None
) -> list[str]:
    """The models asked for with -m, each once, by the name first given (see distinct_refs)."""
    return [name for name, _ in _distinct(names, revision, reporter)]


def distinct_refs(
    names: list[str],
    revision: str | None = None,
    reporter: Reporter | None = None,
    encoding: str | None = None,
) -> list[ModelRef]:
    """The models asked for with -m, each once (gpt2, small and openai-community/gpt2 are one model), all
    checked before the first is fetched (a name that is no model, a folder given --revision): each resolved
    here, once for the run. encoding: the static files' among them (one at least)."""
    refs = [ref for _, ref in _distinct(names, revision, reporter)]
    if encoding is None:
        return refs
    static = [with_encoding(ref, encoding) if ref.static else ref for ref in refs]
    if not any(ref.static for ref in refs):
        with_encoding(refs[0], encoding)  # refused: no static file to read in it
    return static


def _distinct(
    names: list[str], revision: str | None, reporter: Reporter | None
) -> list[tuple[str, ModelRef]]:
    seen: dict[tuple[str | None, Path | None], tuple[str, ModelRef]] = {}
    for name in names:
        ref = resolve(name, revision)
        key = ref.repo, ref.folder or ref.file
        if key in seen:
            if reporter is not None:
                reporter.note(f"{name} is {seen[key][0]} again: each model is answered once")
            continue
        seen[key] = name, ref
    return list(seen.values())
