"""What every result is (Document: to_dict, the JSON document) and the records several stems share.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

FIGURE = "figure"  # a result's figure file (--figure): its key is in a document only when one was drawn


class Document:
    """What every result is: `to_dict()` gives the JSON document its command prints with --json."""

    def to_dict(self) -> dict[str, Any]:
        """The fields as strict JSON holds them: a float that is not finite (NaN, inf: a model whose rows
        hold them) becomes null, and the document's notes say so (values known to be undefined are None
        already). One pass, without asdict's deep copy of every number."""
        found = 0

        def plain(value: Any) -> Any:
            nonlocal found
            kind = type(value)
            if kind is float:
                if math.isfinite(value):
                    return value
                found += 1
                return None
            if kind is str or kind is int or value is None or kind is bool:
                return value
            if kind is tuple or kind is list:
                return [plain(v) for v in value]
            if isinstance(value, Document):
                doc = {name: plain(getattr(value, name)) for name in _names(kind)}
                if doc.get(FIGURE, False) is None:  # no figure drawn: the document is as it always was
                    del doc[FIGURE]
                return doc
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items()}
            return value

        doc: dict[str, Any] = plain(self)
        if found:
            doc["notes"] = [
                *doc.get("notes", []),
                f"{found} value{'s are' if found > 1 else ' is'} not a finite number (the model's rows hold "
                "NaN or infinite values there) and shown as null",
            ]
        return doc


_NAMES: dict[type, tuple[str, ...]] = {}  # each result class's field names, once


def _names(kind: type) -> tuple[str, ...]:
    names = _NAMES.get(kind)
    if names is None:
        names = _NAMES[kind] = tuple(f.name for f in fields(kind))
    return names


@dataclass(frozen=True)
class Token(Document):
    id: int
    token: str
