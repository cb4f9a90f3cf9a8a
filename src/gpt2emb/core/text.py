"""input and context: a text as the model receives it, and a word's vectors through the model's layers."""

from __future__ import annotations

import itertools

import numpy as np

from gpt2emb import ops, registry, tables
from gpt2emb.choices import Pool
from gpt2emb.core.open import (
    Opened,
    finite,
    floats,
    known_facts,
    length_limit,
    no_position_table,
    open_ref,
    past_limit,
    refuse_static,
    tokens_of,
)
from gpt2emb.core.whole import encode, open_for_whole, weights_folder
from gpt2emb.errors import (
    UsageError,
    option,
    spelt,
)
from gpt2emb.queries import Query, Specials, check_word
from gpt2emb.quoting import quote
from gpt2emb.registry import ModelRef
from gpt2emb.report import QuietReporter, Reporter
from gpt2emb.results.text import (
    ContextLayer,
    ContextPair,
    ContextResult,
    ContextSentence,
    InputResult,
    InputToken,
)
from gpt2emb.store import checkpoint, revisions
from gpt2emb.store.entries import OpenedEntry
from gpt2emb.tokens import Vocab


def check_text(text: str) -> None:
    if not text:
        raise UsageError(
            "the text is empty: type some, as in: "
            + spelt('input "O Brasil é gigante"', "input('O Brasil é gigante')")
        )


def model_input(
    model: str,
    text: str,
    full: bool = False,
    truncate: bool = False,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> InputResult:
    check_text(text)
    ref = registry.resolve(model, revision)
    refuse_static(ref, "it has no tokenizer and no position table, so a text is no input to it")
    return input_in(open_ref(ref, reporter), text, full, truncate)


def _overflowed(rows: tables.InputRows) -> list[str]:
    """A note for the positions whose rows are finite but add up past float32 (two rows near 3e38): the
    null there is the model's own input, not a broken row."""
    finite = np.isfinite(rows.wte_norm) & (True if rows.wpe_norm is None else np.isfinite(rows.wpe_norm))
    past = np.flatnonzero(finite & ~np.isfinite(rows.sum_norm))
    if not len(past):
        return []
    where = ", ".join(str(int(p)) for p in past[:5]) + (", ..." if len(past) > 5 else "")
    return [
        f"at position{'s' if len(past) > 1 else ''} {where} the rows are finite, but their sum is past "
        "float32's largest number (3.4e38): the model adds them in float32, so its input there is not a "
        "finite number"
    ]


def _wrapped(m: OpenedEntry, vocab: Vocab, how: str) -> list[str]:
    """A note where the model's tokenizer, called as usual, adds special tokens around a text, saying `how`
    the command takes them."""
    before, after = m.wraps
    if not before and not after:
        return []
    shown = " and ".join(
        f"{' '.join(vocab.token(i) for i in ids)} {where}"
        for ids, where in ((before, "before"), (after, "after"))
        if ids
    )
    return [f"{m.name}'s tokenizer, called as usual, adds {shown} the text; {how}"]


def _as_typed(m: OpenedEntry) -> str:
    """How `input` takes the special tokens a tokenizer adds (see _wrapped): it shows a text as typed."""
    before = len(m.wraps[0])
    later = f": in use each token sits {before} position{'s' if before > 1 else ''} later" if before else ""
    return f"shown here as typed, without them{later}"


def context(
    word: str,
    sentences: list[str],
    model: str = registry.DEFAULT_MODEL,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
    revision: str | None = None,
    figure: str | None = None,
) -> ContextResult:
    """Static against contextual: the word's vector in each sentence, at every layer of the model, compared
    between sentences and with the word's row of wte."""
    ref = registry.resolve(model, revision)
    refuse_static(ref, "it has no layers, so a word has one vector whatever the sentence around it")
    check_context(word, sentences, known_facts(ref)[0])
    result = context_of(ref, word, sentences, pool, reporter)
    if figure is not None:  # checked at the edge (plot.check_figure)
        from gpt2emb import plot

        result = plot.draw("context", result, figure)
    return result


def check_context(word: str, sentences: list[str], specials: Specials | None = None) -> None:
    """A word and at least two sentences, checked before any model is opened (specials: the model's, when
    the registry knows them)."""
    if len(sentences) < 2:
        raise UsageError(
            "give a word and at least two sentences that hold it, as in: "
            + spelt(
                'context bank "I sat on the river bank" "I paid at the bank"',
                "context('bank', ['I sat on the river bank', 'I paid at the bank'])",
            )
        )
    check_word(word, False, specials)
    for n, sentence in enumerate(sentences, 1):
        if not sentence.strip():
            raise UsageError(f"sentence {n} is empty; give a sentence that holds {word!r}")
        if _one_word(sentence) and word.strip() not in sentence:  # a sentence's words given apart, unquoted
            raise UsageError(
                f"sentence {n} is the one word {quote(sentence.strip(), 40)}, without {word!r}: "
                + spelt(
                    "each sentence is one argument, so quote each, as in: "
                    'context bank "by the river bank" "at the bank"',
                    "each sentence is one str of the list, as in: "
                    "context('bank', ['by the river bank', 'at the bank'])",
                )
            )


def _one_word(sentence: str) -> bool:
    """A "sentence" that is one word of a word's size: what the shell makes of a sentence left unquoted."""
    return len(sentence.split()) == 1 and len(sentence.strip()) <= 40


def context_of(
    ref: ModelRef, word: str, sentences: list[str], pool: Pool, reporter: Reporter | None
) -> ContextResult:
    """context for a model resolved, its word and sentences checked (check_context)."""
    from gpt2emb import heavy

    reporter = reporter or QuietReporter()
    info = revisions.checkpoint_info(ref)
    m, vocab = open_for_whole(ref, info, reporter)
    q = vocab.query(word, False, pool)
    found = [_find(vocab, q, s, n, m) for n, s in enumerate(sentences, 1)]
    before, after = m.wraps  # the special tokens its tokenizer adds around a text: run as in use
    states = heavy.hidden_states(
        weights_folder(ref, info, reporter),
        m.family.classes,
        [(*before, *(t.id for t in f.tokens), *after) for f in found],
        checkpoint.config_label(ref),
    )
    static = ops.query_vector(m.wte, q)
    layers = []
    for layer in range(len(states[0])):
        vectors = [
            ops.pooled(h[layer, [len(before) + at for at in f.at]], q.pool)
            for h, f in zip(states, found, strict=True)
        ]
        pairs = tuple(
            ContextPair(a, b, ops.cosine(vectors[a], vectors[b]))
            for a, b in itertools.combinations(range(len(vectors)), 2)
        )
        layers.append(ContextLayer(layer, pairs, tuple(ops.cosine(v, static) for v in vectors)))
    shown = _pieces(vocab, q.ids)
    notes = [
        q.note,
        *(
            f"{shown} occurs {f.occurrences:,} times in sentence {n}; using the first, at position {f.at[0]}"
            for n, f in enumerate(found, 1)
            if f.occurrences > 1
        ),
        *_wrapped(
            m,
            vocab,
            "the model is run on each sentence with them, as in use (positions here count the sentence's "
            "own tokens)",
        ),
    ]
    return ContextResult(
        m.name,
        word,
        tuple(found),
        tuple(layers),
        tokens_of(vocab, q),
        q.pool.value,
        tuple(n for n in notes if n),
    )


def _pieces(vocab: Vocab, ids: tuple[int, ...]) -> str:
    return " + ".join(quote(vocab.token(i)) for i in ids)


def _find(vocab: Vocab, q: Query, sentence: str, n: int, m: OpenedEntry) -> ContextSentence:
    """Where the word's tokens stand in a sentence: whole tokens, not the start of a longer word."""
    tokens = encode(vocab, sentence, m, f"sentence {n}")
    ids, k = [t.id for t in tokens], len(q.ids)
    starts = [
        p
        for p in range(len(ids) - k + 1)
        if tuple(ids[p : p + k]) == q.ids
        and (p + k == len(ids) or not tokens[p + k].token[:1].isalnum())  # " bank" + "ing" is not " bank"
    ]
    if not starts:
        shown = " ".join(quote(t.token) for t in tokens[:16]) + (" ..." if len(tokens) > 16 else "")
        raise UsageError(
            f"{_pieces(vocab, q.ids)} is not in sentence {n} ({quote(sentence, 80)}), whose tokens are "
            f"{shown}: the word counts as in running text (as its tokens above), in the same case, and not "
            "as part of a longer word"
        )
    return ContextSentence(sentence, tokens, tuple(range(starts[0], starts[0] + k)), len(starts))


def input_in(o: Opened, text: str, full: bool = False, truncate: bool = False) -> InputResult:
    """The text as the model receives it: its tokens (as typed: no leading space added) and
    h0 = wte[ids] + wpe[0..n-1], with each position's norms and the cosine of its two rows."""
    check_text(text)
    m, vocab = o.model, o.vocab
    ids = vocab.tokenize(text)
    if not ids:  # a WordPiece tokenizer drops white space and control characters
        raise UsageError(f"the text {quote(text, 80)} is no tokens at all in {m.name}: type some words")
    limit = length_limit(m)
    notes = []
    if limit is None:
        notes.append(f"{no_position_table(m)}: h0 is the token rows alone, wte[ids]")
    elif len(ids) > limit:
        if not truncate:
            raise UsageError(
                f"the text is {len(ids):,} tokens, but {past_limit(m)}; shorten the text, or use "
                f"{option('truncate', True)} to keep the first {limit:,}"
            )
        notes.append(f"the text is {len(ids):,} tokens: only the first {limit:,} go in ({past_limit(m)})")
    notes += _wrapped(m, vocab, _as_typed(m))
    kept = ids[:limit]
    type_row = None if m.types is None else m.types[0]
    rows = tables.input_rows(m.wte, None if limit is None else m.wpe, kept, type_row, m.norm, m.norm_eps)
    offset = m.shape.position_offset
    absent = [None] * len(kept)  # no position table: no wpe figures
    tokens = tuple(
        InputToken(
            p,
            i,
            vocab.token(i),
            float(a),
            None if b is None else float(b),
            float(c),
            finite(cos),
            None if limit is None else p + offset,
            float(s),
        )
        for p, (i, a, b, c, cos, s) in enumerate(
            zip(
                kept,
                rows.wte_norm,
                absent if rows.wpe_norm is None else rows.wpe_norm,
                rows.h0_norm,
                absent if rows.cos_wte_wpe is None else rows.cos_wte_wpe,
                rows.sum_norm,
                strict=True,
            )
        )
    )
    m.check_rows(kept, range(len(kept)) if limit is not None else ())
    notes += _overflowed(rows)
    h0 = tuple(floats(r) for r in rows.h0) if full else None
    return InputResult(
        m.name,
        text,
        len(kept),
        m.shape.d_model,
        tokens,
        h0,
        len(ids),
        m.shape.n_positions,
        tuple(notes),
        m.types is not None,
        m.norm is not None,
        offset,
    )
