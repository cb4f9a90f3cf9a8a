"""logits: the model's scores for the token after a text, h · Wᵀ with W its output table, and every layer's
hidden state read through the final layer norm and that table (the logit lens)."""

from __future__ import annotations

import numpy as np

from gpt2emb import registry
from gpt2emb.choices import Through
from gpt2emb.core import logits_masked as masked
from gpt2emb.core.open import (
    check_top,
    check_top_fits,
    known_facts,
    length_limit,
    past_limit,
    refuse_static,
)
from gpt2emb.core.whole import encode, open_for_whole, weights_folder
from gpt2emb.errors import BadModel, UsageError, option, spelt
from gpt2emb.families import Family
from gpt2emb.quoting import quote
from gpt2emb.registry import ModelRef
from gpt2emb.report import QuietReporter, Reporter
from gpt2emb.results.common import Token
from gpt2emb.results.logits import GridCell, GridColumn, LensLayer, LogitsResult, MaskScores, Score
from gpt2emb.results.whole import SentenceToken
from gpt2emb.store import checkpoint, revisions
from gpt2emb.store.entries import OpenedEntry
from gpt2emb.tokens import Vocab

LENS_TOP = 5  # the tokens each row of --layers shows
GRID_POSITIONS = 16  # the most positions --figure's grid holds


def logits(
    text: str,
    model: str = registry.DEFAULT_MODEL,
    k: int = 10,
    at: int | None = None,
    through: Through | None = None,
    layers: bool = False,
    reporter: Reporter | None = None,
    revision: str | None = None,
    figure: str | None = None,
) -> LogitsResult:
    """The k best next tokens after TEXT (or after position `at`), scored by the model's output table;
    through wte, also by wte; layers, every layer read through the output table; figure, the lens grid of
    the text's last positions drawn there."""
    check_logits(text, k, at)
    ref = registry.resolve(model, revision)
    refuse_static(ref, "it has no layers and no output layer to score a next token with")
    check_top(k, known_facts(ref)[1])
    result = logits_of(ref, text, k, at, through, layers, figure is not None, reporter)
    if figure is not None:  # checked at the edge (plot.check_figure)
        from gpt2emb import plot

        result = plot.draw("logits", result, figure)
    return result


def check_logits(text: str, k: int, at: int | None) -> None:
    """What can be checked before any model is opened: a text, -k and --at's sign."""
    if not text:
        raise UsageError(
            "the text is empty: type the start of a sentence, as in: "
            + spelt('logits "The cat sat on the"', "logits('The cat sat on the')")
        )
    check_top(k, None)
    if at is not None and at < 0:
        raise UsageError(f"{option('at')} counts the text's tokens from 0, so it cannot be {at}")


def logits_of(
    ref: ModelRef,
    text: str,
    k: int,
    at: int | None,
    through: Through | None,
    layers: bool,
    grid: bool,
    reporter: Reporter | None,
) -> LogitsResult:
    """logits for a model resolved, its arguments checked (check_logits); grid: the lens of the positions
    around `at` too (what --figure draws). A masked language model scores its masks (or `at`) themselves,
    through its head; any other, the token after `at`, through its final layer norm and output table."""
    from gpt2emb import heavy

    reporter = reporter or QuietReporter()
    info = revisions.checkpoint_info(ref)
    _check_family(ref, info.config)
    m, vocab = open_for_whole(ref, info, reporter)
    check_top_fits(k, m.shape.vocab_size)
    tokens = encode(vocab, text, m, "the text")
    if not tokens:  # a WordPiece or SentencePiece tokenizer may drop white space
        raise UsageError(f"the text {quote(text, 80)} is no tokens at all in {m.name}: type some words")
    head = m.family.head
    found = masked.masks(vocab, text, tokens, m, head) if head is not None else []
    given = _position(m, len(tokens), at, head is not None)
    scored = found if given is None else [given]
    at = scored[0]
    before, after = m.wraps  # run as in use: a BOS token where the tokenizer adds one (masked: and an EOS)
    window = _window(at, len(tokens), head is not None) if grid else []
    wanted = sorted({*scored, *window})
    folder = weights_folder(ref, info, reporter)
    names = list(info.tensors) or list(heavy.weight_shapes(folder))
    tied, stored = _output_table(ref, m.family, info.config, names)
    ids = (*before, *(t.id for t in tokens), *(after if head is not None else ()))
    run = [len(before) + p for p in wanted]
    label = checkpoint.config_label(ref)
    bias, described = None, None
    if head is None:
        every_layer = layers or grid
        states, own = heavy.read_out(
            folder, m.family.classes, m.family.final_norm, ids, run, every_layer, label
        )
    else:
        tensors = masked.head_tensors(ref, head, names, m.family.classes)
        states, bias, own = masked.read(folder, m, head, info.config, ids, run, layers or grid, label)
        described = masked.described(head, tensors, info.config, stored)
    table = m.wte if own is None else own
    reads = [_Read(p, states[:, wanted.index(p)], table, bias, m, vocab) for p in scored]
    notes = _told(vocab, tokens, m, head is not None)
    if head is not None:
        notes += [masked.unmasked(tokens[p], head) for p in scored if p not in found]
    top = reads[0].top(k)
    through_wte = overlap = None
    if through is not None and own is None:
        notes.append(_same_table(m.name, head is not None))
    elif through is not None:
        through_wte = _top(reads[0].scores_by(m.wte)[-1], k, vocab)
        overlap = len({s.id for s in top} & {s.id for s in through_wte})
    lens = [r.lens() if layers else None for r in reads]
    columns = _grid(states, wanted, window, tokens, table, bias, m, vocab) if grid else None
    name = "wte" if tied else ("decoder" if head is not None else "lm_head")
    every = None
    if head is not None:
        every = tuple(MaskScores(r.at, r.top(k), x) for r, x in zip(reads, lens, strict=True))
    return LogitsResult(
        m.name,
        text,
        tokens,
        at,
        name,
        stored,
        tied,
        f"h · {name}ᵀ" if described is None else masked.formula(described, name),
        m.shape.vocab_size,
        top,
        through_wte,
        overlap,
        lens[0],
        columns,
        tuple(Token(i, vocab.token(i)) for i in before),
        tuple(notes),
        head is not None,
        described,
        every,
    )


class _Read:
    """One position scored: its hidden states (a row per layer read, the last the model's own) and what
    turns them into scores (a masked head's decoder adds its bias)."""

    def __init__(
        self,
        at: int,
        states: np.ndarray,
        table: np.ndarray,
        bias: np.ndarray | None,
        m: OpenedEntry,
        vocab: Vocab,
    ) -> None:
        self.at, self.states, self.bias, self.m, self.vocab = at, states, bias, m, vocab
        self.scores = self.scores_by(table)  # (layers, vocab): the last is the model's own scores

    def scores_by(self, table: np.ndarray) -> np.ndarray:
        return _scores(self.states, table, self.bias, self.m, self.at, self.bias is not None)

    def top(self, k: int) -> tuple[Score, ...]:
        return _top(self.scores[-1], k, self.vocab)

    def lens(self) -> tuple[LensLayer, ...]:
        final = int(_best(self.scores[-1], 1)[0])
        return tuple(_lens_layer(n, row, final, self.vocab) for n, row in enumerate(self.scores))


def _same_table(name: str, masked_model: bool) -> str:
    """--through wte's note on a tied model: the table that scored is wte already."""
    if masked_model:
        return (
            f"{name}'s head is tied: its decoder is the word embedding table (wte) itself, so --through wte "
            "is the same table"
        )
    return f"{name} is tied: its output layer is wte itself, so --through wte is the same table"


def _check_family(ref: ModelRef, config: dict[str, object]) -> None:
    """logits reads a model through its final layer norm and output layer, or through its masked-language
    head; a family with neither is refused before anything is fetched."""
    from gpt2emb import families

    family = families.of_config(config, ref.name)
    if family.final_norm or family.head is not None:
        return
    raise UsageError(
        f"{ref.name} is a {family.title} model, whose output layer logits does not know how to read; it "
        "reads GPT-2, GPT-Neo, GPT-NeoX, Llama, Mistral and Qwen2 (the next token), and RoBERTa, BERT and "
        "DistilBERT (a masked token)"
    )


def _window(at: int, n: int, masked_model: bool) -> list[int]:
    """The positions --figure's grid shows: the last GRID_POSITIONS up to `at` (the token after each is
    predicted); masked, GRID_POSITIONS around `at` (each is filled in, the text after it counting too)."""
    if not masked_model:
        return list(range(max(0, at - GRID_POSITIONS + 1), at + 1))
    start = max(0, min(at - GRID_POSITIONS // 2, n - GRID_POSITIONS))
    return list(range(start, min(n, start + GRID_POSITIONS)))


def _position(m: OpenedEntry, n: int, at: int | None, masked_model: bool) -> int | None:
    """The position scored: `at` once it is within the text and the model; else the text's last token (a
    masked language model: None, its masks)."""
    if at is None:
        return None if masked_model else n - 1
    limit = length_limit(m)
    if limit is not None and at >= limit:
        raise UsageError(f"{option('at', at)} is past {m.name}'s limit: {past_limit(m)}")
    if at >= n:
        held = f"its {n:,} tokens are positions 0 to {n - 1}" if n > 1 else "its one token is position 0"
        raise UsageError(
            f"{option('at', at)} is past the text: {held} (as gpt2emb input shows them); give one of them, "
            f"or leave {option('at')} out to score "
            + ("the text's masks" if masked_model else "the token after the last")
        )
    return at


def _output_table(
    ref: ModelRef, family: Family, config: dict[str, object], names: list[str]
) -> tuple[bool, str]:
    """Whether the output layer is wte (the config ties them), and its tensor's name in the checkpoint; an
    untied model whose checkpoint stores no output layer (a bare GPT2Model) is refused: transformers would
    start that layer at random."""
    if family.tied(config):
        return True, next((k for k in names if k.endswith(family.token_table)), family.token_table[0])
    own = next((k for k in names if k.endswith(family.output_names)), None)
    if own is None:
        raise UsageError(
            f"{ref.name} has no output layer: its config does not tie it to wte (tie_word_embeddings is "
            f"false) and its checkpoint stores no {family.output_names[0]}, as a bare {family.classes[1]} "
            f"saves none; there is nothing to score with, so use the language model's checkpoint "
            f"({family.classes[2]})"
        )
    return False, own


def _scores(
    states: np.ndarray, table: np.ndarray, bias: np.ndarray | None, m: OpenedEntry, at: int, here: bool
) -> np.ndarray:
    """h · tableᵀ (+ bias: a masked head's decoder has one) for each row of states, in float32 as the model
    computes its logits; refused where not a finite number (weights that overflow float32 there). here: the
    position scored is `at` itself (a masked model), not the one after it."""
    scores: np.ndarray = np.asarray(states, dtype=np.float32) @ np.asarray(table, dtype=np.float32).T
    if bias is not None:
        scores += np.asarray(bias, dtype=np.float32)
    if not np.isfinite(scores).all():
        raise BadModel(
            f"{m.name}'s scores {'at' if here else 'after'} position {at} are not all finite numbers (NaN or "
            "infinity): its weights overflow float32 there; check the model's weights"
        )
    return scores


def _probabilities(scores: np.ndarray) -> np.ndarray:
    """Softmax over the whole vocabulary, in float64; a probability that underflows is 0."""
    x = scores.astype(np.float64)
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


def _best(scores: np.ndarray, k: int) -> np.ndarray:
    """The ids of the k highest scores, highest first, ties by id: only those tied with the k-th sorted."""
    k = min(k, len(scores))
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    ids = np.flatnonzero(scores >= kth)
    return ids[np.lexsort((ids, -scores[ids]))][:k]


def _rank(scores: np.ndarray, token: int) -> int:
    """token's rank among scores, as _best orders them (1: the best)."""
    x = scores[token]
    return int(1 + np.count_nonzero(scores > x) + np.count_nonzero(scores[:token] == x))


def _top(scores: np.ndarray, k: int, vocab: Vocab) -> tuple[Score, ...]:
    p = _probabilities(scores)
    return tuple(
        Score(r, int(i), vocab.token(int(i)), float(scores[i]), float(p[i]))
        for r, i in enumerate(_best(scores, k), 1)
    )


def _lens_layer(layer: int, scores: np.ndarray, final: int, vocab: Vocab) -> LensLayer:
    top = _top(scores, LENS_TOP, vocab)
    return LensLayer(layer, top, float(_probabilities(scores)[final]), _rank(scores, final))


def _grid(
    states: np.ndarray,
    wanted: list[int],
    window: list[int],
    tokens: tuple[SentenceToken, ...],
    table: np.ndarray,
    bias: np.ndarray | None,
    m: OpenedEntry,
    vocab: Vocab,
) -> tuple[GridColumn, ...]:
    """Each position's top token at every layer, with its probability."""
    columns = []
    for position in window:
        scores = _scores(states[:, wanted.index(position)], table, bias, m, position, bias is not None)
        p = _probabilities(scores)
        best = [int(_best(row, 1)[0]) for row in scores]
        cells = tuple(GridCell(layer, i, vocab.token(i), float(p[layer, i])) for layer, i in enumerate(best))
        t = tokens[position]
        columns.append(GridColumn(position, t.id, t.token, cells))
    return tuple(columns)


def _told(vocab: Vocab, tokens: tuple[SentenceToken, ...], m: OpenedEntry, masked_model: bool) -> list[str]:
    """Notes on what the model receives beside the text's own characters: the special tokens typed in it,
    which the tokenizer takes as themselves (but a mask, in a masked model: what the text is for), and what
    the tokenizer adds around a text."""
    notes = []
    # the family's pattern of special tokens (<|endoftext|>, <s>): a token of the text that is one of them
    # whole came from the characters typed, which the tokenizer took as that token
    typed = sorted({(t.id, t.token) for t in tokens if vocab.specials and vocab.specials.fullmatch(t.token)})
    mask = m.family.head.mask if masked_model and m.family.head is not None else None
    for i, name in typed:
        if name == mask:
            continue
        notes.append(
            f"the text holds {name}, which the tokenizer takes as one special token (id:{i}), not as its "
            "characters: the model reads it as it reads that token in training"
        )
    before, after = m.wraps
    if before:
        shown = " ".join(vocab.token(i) for i in before)
        notes.append(
            f"{m.name}'s tokenizer puts {shown} before a text in use: the model runs with it, and positions "
            "here count the text's own tokens"
        )
    if after and masked_model:
        shown = " ".join(vocab.token(i) for i in after)
        notes.append(f"{m.name}'s tokenizer puts {shown} after a text in use: the model runs with it")
    elif after:
        shown = " ".join(vocab.token(i) for i in after)
        notes.append(
            f"{m.name}'s tokenizer puts {shown} after a text in use: left out here, since the token after "
            "the text is the one scored"
        )
    return notes
