"""What gpt2emb reads, and so never writes over: its cache folder, the files a model folder is read from, and
a static word table given as -m.

Every file gpt2emb writes (a page, a figure, an export, whatever comes) is asked here first, through
targets.Target.real, so that one guard says one thing whatever writes the file and whatever its extension.
Each rule of RULES names one kind of thing that is read: a kind of model that is a single file (-m FILE)
adds its rule there."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from gpt2emb import limits
from gpt2emb.errors import LONE_SURROGATE, UsageError

CACHE_ENV = "GPT2EMB_CACHE_DIR"
# the files a model folder is read from (by gpt2emb, or by transformers for the commands that run the model)
MODEL_FILE = re.compile(
    r"config\.json|generation_config\.json|tokenizer(_config)?\.json|special_tokens_map\.json"
    r"|added_tokens\.json|vocab\.(json|txt)|merges\.txt|.*\.(safetensors|bin|pt|pth|model|index\.json)",
    re.IGNORECASE,
)


def cache_root() -> Path:
    """The cache folder: GPT2EMB_CACHE_DIR, or the user's cache folder of the system."""
    env = os.environ.get(CACHE_ENV)
    if env:
        found = LONE_SURROGATE.search(env)
        if found:  # a name that is not UTF-8 (os.environ holds its bytes as lone surrogates)
            byte = len(env[: found.start()].encode("utf-8")) + 1
            raise UsageError(
                f"{CACHE_ENV} is not UTF-8 text (byte {byte}), and the cache folder is written into the "
                f"results, which are UTF-8: rename the folder, or link it under a UTF-8 name (ln -s) and set "
                f"{CACHE_ENV} to that"
            )
        return limits.user_path(env)
    return _system_cache()


def _system_cache() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("gpt2emb", appauthor=False))


# a rule: (the path as given, the file it names with its links followed, how a message names it) -> why
# it must not be written, or None
Rule = Callable[[Path, Path, str], str | None]


def _in_cache(path: Path, real: Path, said: str) -> str | None:
    env = os.environ.get(CACHE_ENV)  # as given, even a name cache_root refuses: it is never written into
    root = Path(os.path.realpath(limits.user_path(env) if env else _system_cache()))
    if real == root or real.is_relative_to(root):
        return f"{said} is in gpt2emb's cache ({root}), which gpt2emb reads from: give a path elsewhere"
    return None


def _of_model_folder(path: Path, real: Path, said: str) -> str | None:
    folder = real.parent  # a model folder: one with a config.json, as -m takes it
    if not MODEL_FILE.fullmatch(real.name) or not (folder / "config.json").is_file():
        return None
    # the folder as the user wrote it, where the path leads there without a link
    given = path.parent if real.name == path.name and Path(os.path.realpath(path.parent)) == folder else None
    shown = given if given is not None and str(given) != "." else folder
    return (
        f"{said} would replace {real.name} of the model folder {shown}, which the model is read from: "
        "give another name"
    )


# the static word tables given as -m in this process (registry.resolve records each, its links followed)
_STATIC_FILES: set[Path] = set()


def reading(file: Path) -> None:
    """Record a static word table given as -m: this process never writes over it."""
    _STATIC_FILES.add(Path(os.path.realpath(file)))


def _static_file(path: Path, real: Path, said: str) -> str | None:
    if real not in _STATIC_FILES:
        return None
    return f"{said} is the static word table given as -m, which the model is read from: give another name"


RULES: tuple[Rule, ...] = (_in_cache, _of_model_folder, _static_file)


def check(path: Path, said: str) -> None:
    """Refuse (UsageError) a path that names what gpt2emb reads; said names it as the user gave it."""
    real = Path(os.path.realpath(path))
    for rule in RULES:
        why = rule(path, real, said)
        if why is not None:
            raise UsageError(why)
