"""Word forms (neighbors --fold): which tokens are one word written another way, and a ranking folded into one
row per word, so that the top k shows k different words.

The rule, on the text a token stands for (as tables show it):
- its word is that text without its leading spaces, case-folded: " King", "king" and " KING" are "king";
- two words are forms of one another when they are equal, or when one is the other's plural by spelling:
  the other plus "s" where the other ends in none of s, x, z, ch, sh ("kings"), or else plus "es" where it
  ends in one of them ("buses", "boxes", "churches", "classes"; "horses" is "horse" + "s", so never
  "hors" + "es" while "horse" is a token); the singular has at least 3 characters;
- a row is everything joined by a chain of such links (so "bus", "buses" and " Bus" are one row).

Its limits: it knows spelling, not meaning. Irregular plurals (men, mice), "-ies" (cities) and "-oes"
(heroes) are not folded, nor plurals of two letters (TVs); the 3 characters keep short words apart (a/as,
it/its, us/uses, wa/was); words that only look like plurals are folded (new/news), and so are fragments
that spell one (con/cons). A token that is only spaces is a row of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

_SIBILANT = ("s", "x", "z", "ch", "sh")  # an English plural adds "es" after these, "s" after anything else
_SHORTEST = 3  # characters of the shortest singular


def word(text: str) -> str:
    """A token's word: its text without the leading spaces, case-folded."""
    return text.lstrip(" ").casefold()


def singular(w: str, known: Container[str]) -> str | None:
    """The known word that w is the plural of by the rule, if any: w less "s" ("kings": "king"), else w less
    "es" ("buses": "bus"; "horses" is "horse" + "s", so never "hors" + "es")."""
    if not w.endswith("s"):
        return None
    if len(w) - 1 >= _SHORTEST and not w[:-1].endswith(_SIBILANT) and w[:-1] in known:
        return w[:-1]
    if w.endswith("es") and len(w) - 2 >= _SHORTEST and w[:-2].endswith(_SIBILANT) and w[:-2] in known:
        return w[:-2]
    return None


class _With(Container[str]):
    """The words of a vocabulary and one more (a query word that is no token)."""

    def __init__(self, words: Container[str], more: str) -> None:
        self.words, self.more = words, more

    def __contains__(self, w: object) -> bool:
        return w == self.more or w in self.words


class Forms:
    """The rows of a vocabulary: `labels[i]` is the same number for the tokens that are one word."""

    def __init__(self, texts: Sequence[str]) -> None:
        words = [word(t) for t in texts]
        parent: dict[str, str] = {w: w for w in words if w}

        def root(w: str) -> str:
            while parent[w] != w:
                parent[w] = parent[parent[w]]
                w = parent[w]
            return w

        for w in parent:
            s = singular(w, parent)
            if s is not None:
                parent[root(w)] = root(s)
        number: dict[str, int] = {}
        self._of_word = {w: number.setdefault(root(w), len(number)) for w in parent}
        # a token of spaces only (or no text) is a word of its own
        self.labels = [self._of_word[w] if w else len(parent) + i for i, w in enumerate(words)]
        self._members: dict[int, list[int]] | None = None

    def of_text(self, text: str) -> set[int]:
        """The labels of the tokens that are forms of a text (a query word: one token's, or a split word's
        whole text): of its own token, or, for a text that is no token, as if it were one."""
        w = word(text)
        known = _With(self._of_word, w)
        linked = [w, singular(w, known), *(p for p in (w + "s", w + "es") if singular(p, known) == w)]
        return {self._of_word[v] for v in linked if v in self._of_word}

    def members(self, label: int) -> list[int]:
        """The tokens of a row, by id."""
        if self._members is None:
            self._members = {}
            for i, lab in enumerate(self.labels):
                self._members.setdefault(lab, []).append(i)
        return self._members[label]


@dataclass(frozen=True)
class Folded:
    """rows: per word, its forms as (id, exact score), best first; form_share: how many of the raw top k are
    forms of the query."""

    rows: tuple[tuple[tuple[int, float], ...], ...]
    form_share: int


def heads(ranked: Sequence[tuple[int, float]], labels: Sequence[int], drop: set[int]) -> list[int]:
    """Places in a ranking (best first) of each word's first token, leaving out the words labelled `drop`."""
    seen = set(drop)
    found = []
    for place, (i, _) in enumerate(ranked):
        if labels[i] not in seen:
            seen.add(labels[i])
            found.append(place)
    return found


def fold(
    top: Callable[[int], list[tuple[int, float]]],
    scores: Callable[[list[int]], list[float]],
    eligible: Callable[[list[int]], list[bool]],
    forms: Forms,
    query: set[int],
    k: int,
    keep_query: bool,
) -> Folded:
    """The best k words of a ranking.

    top(n): the raw best n (id, score), best first, ties by the smaller id (fewer when the candidates run
    out); scores(ids): their exact scores; eligible(ids): which may be listed (the candidates that top ranks);
    query: the query's word labels (Forms.of_text), whose row is left out unless keep_query. A row's score is
    its best form's, and it lists every eligible form of its word, ordered as top orders them."""
    drop = set() if keep_query else query
    n = 2 * k + 8
    while True:  # a word's forms may crowd the raw list: ask for more until k words show, or all are in
        ranked = top(n)
        places = heads(ranked, forms.labels, drop)
        if len(places) >= k or len(ranked) < n:
            break
        n *= 4
    rows = []
    for place in places[:k]:
        word_ids = forms.members(forms.labels[ranked[place][0]])
        members = [i for i, ok in zip(word_ids, eligible(word_ids), strict=True) if ok]
        scored = sorted(zip(members, scores(members), strict=True), key=lambda p: (-_orderable(p[1]), p[0]))
        rows.append(tuple(scored))
    share = sum(forms.labels[i] in query for i, _ in ranked[:k])
    return Folded(tuple(rows), share)


def _orderable(score: float) -> float:
    """NaN (a broken row) below every number, as the ranking orders it."""
    return score if score == score else float("-inf")
