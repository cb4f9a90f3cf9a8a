"""The benchmark evaluations: analogy --eval and similarity --eval, scored as gensim scores them."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from gpt2emb import candidates, limits, ops
from gpt2emb.choices import Method, Rule
from gpt2emb.core import evaluate_files, evaluate_scoring
from gpt2emb.core.open import (
    Opened,
    known_facts,
    open_ref,
)
from gpt2emb.errors import (
    UsageError,
    option,
)
from gpt2emb.registry import ModelRef
from gpt2emb.report import Reporter
from gpt2emb.results.evaluate import KEYS, AnalogyEvalResult, PairsEvalResult, SectionScore, WrongAnswer
from gpt2emb.store.entries import OpenedEntry
from gpt2emb.tokens import Vocab


def _words(
    m: OpenedEntry, vocab: Vocab, rule: Rule, ignore_case: bool, restrict: int | None = None
) -> evaluate_files.RuleWords:
    """The words of a rule, from the first `restrict` token ids only when given (gensim's restrict_vocab); a
    static table's are its keys, as gensim reads them, whatever the rule (`rule_of`)."""
    pieces, texts = vocab.texts()
    rows = m.shape.vocab_size if restrict is None else restrict
    if m.static:
        return evaluate_files.RuleWords.of_keys(texts[:rows], ignore_case)
    return evaluate_files.RuleWords.build(pieces[:rows], texts[:rows], rule, ignore_case)


def rule_of(o: Opened, rule: Rule) -> str:
    """The rule a model's words were read by, as its result says: a static table's words are its keys."""
    return KEYS if o.model.static else rule.value


def refuse_rule(opened: list[Opened], rule: Rule) -> None:
    """Refuse --rule bare where every model is a static table (exit 2): a rule says how a word becomes a
    token, and a static table has no tokens, its words are keys; beside a transformer it is that one's."""
    if rule is not Rule.space and all(o.model.static for o in opened):
        raise UsageError(
            f"{option('rule', rule.value)} is about tokens, and {opened[0].name} is a static word table: its "
            "words are keys, read whole and as written (what bare does for a tokenizer); leave it out"
        )


def how_read(rule: str) -> str:
    """How words were found, as messages say it: 'one token under the space rule', 'a key'."""
    return "a key" if rule == KEYS else f"one token under the {rule} rule"


def analogy_eval(
    model: ModelRef,
    file: str,
    method: Method = Method.add,
    rule: Rule = Rule.space,
    ignore_case: bool = False,
    errors: bool = False,
    reporter: Reporter | None = None,
    restrict: int | None = None,
) -> AnalogyEvalResult:
    """Accuracy on an analogy file, per section, counted as gensim's evaluate_word_analogies counts; with
    restrict, as its restrict_vocab: a question with a word past the first `restrict` token ids is skipped,
    and only those words are candidate answers."""
    started = time.perf_counter()
    if restrict is not None:
        candidates.check_restrict(restrict, known_facts(model)[1])
    sections = evaluate_files.read_analogies(limits.user_path(file))
    opened = open_ref(model, reporter)
    return analogy_eval_in(opened, file, sections, method, rule, ignore_case, errors, restrict, started)


def analogy_eval_in(
    o: Opened,
    file: str,
    sections: list[evaluate_files.Section],
    method: Method,
    rule: Rule,
    ignore_case: bool,
    errors: bool,
    restrict: int | None,
    started: float,
    asked: list[set[int]] | None = None,
) -> AnalogyEvalResult:
    """analogy_eval of an opened model, the file's sections read (started: when the evaluation began); with
    asked (models side by side), only those questions of each section, the others counted as skipped."""
    m, vocab = o.model, o.vocab
    if asked is None:
        refuse_rule([o], rule)
    if restrict is not None:
        candidates.check_restrict(restrict, m.shape.vocab_size)
    words = _words(m, vocab, rule, ignore_case, restrict)
    found = _found(words, sections, ignore_case)
    known = [
        [i for i, f in enumerate(fs) if None not in f and (asked is None or i in asked[s])]
        for s, fs in enumerate(found)
    ]
    abcd = np.array([fs[i] for fs, ks in zip(found, known, strict=True) for i in ks], dtype=np.int64).reshape(
        -1, 4
    )
    # every section in one pass: one matrix product with the file's words for all of them
    m.check_rows(words.ids)  # every word's row is a candidate answer
    predicted = evaluate_scoring.analogy_answers(m.wte, words, abcd[:, :3], method, ignore_case)
    same = words.group if ignore_case else np.arange(len(words.words))
    right = (predicted >= 0) & (same[np.maximum(predicted, 0)] == same[abcd[:, 3]])
    scores, failures, start = [], [], 0
    for section, ks in zip(sections, known, strict=True):
        mine = slice(start, start + len(ks))
        start += len(ks)
        correct, answered = int(right[mine].sum()), len(ks)
        scores.append(_score(section.name, correct, answered, len(section.questions) - answered))
        if errors:
            for i, ok, p in zip(ks, right[mine], predicted[mine], strict=True):
                if not ok:
                    a, b, c, d = section.questions[i]
                    failures.append(
                        WrongAnswer(section.name, (a, b, c), d, words.words[p] if p >= 0 else None)
                    )
    correct = sum(s.correct for s in scores)
    answered = correct + sum(s.incorrect for s in scores)
    skipped = sum(s.skipped for s in scores)
    total = _score("Total accuracy", correct, answered, skipped)
    return AnalogyEvalResult(
        m.name,
        file,
        method.value,
        rule_of(o, rule),
        ignore_case,
        tuple(scores),
        total,
        answered / (answered + skipped),
        time.perf_counter() - started,
        tuple(failures),
        restrict,
    )


def _found(
    words: evaluate_files.RuleWords, sections: list[evaluate_files.Section], ignore_case: bool
) -> list[list[list[int | None]]]:
    """Each question's four words as indices into the rule's words (None: not one token under the rule)."""
    return [[[words.find(w, ignore_case) for w in q] for q in section.questions] for section in sections]


def analogies_known(
    o: Opened,
    sections: list[evaluate_files.Section],
    rule: Rule,
    ignore_case: bool,
    restrict: int | None,
) -> list[set[int]]:
    """The questions of each section that the model can answer: all four words one token under the rule."""
    if restrict is not None:
        candidates.check_restrict(restrict, o.model.shape.vocab_size)
    words = _words(o.model, o.vocab, rule, ignore_case, restrict)
    found = _found(words, sections, ignore_case)
    return [{i for i, f in enumerate(fs) if None not in f} for fs in found]


def _score(name: str, correct: int, answered: int, skipped: int) -> SectionScore:
    return SectionScore(name, correct, answered - correct, skipped, correct / answered if answered else None)


def similarity_eval(
    model: ModelRef,
    file: str,
    rule: Rule = Rule.space,
    ignore_case: bool = False,
    reporter: Reporter | None = None,
) -> PairsEvalResult:
    """Pearson and Spearman correlation of cosine with human scores, as gensim's evaluate_word_pairs; a line
    that holds no pair (a score that is not a finite number among them) is skipped and counted."""
    read = evaluate_files.read_pairs(limits.user_path(file))
    opened = open_ref(model, reporter)
    return similarity_eval_in(opened, file, read, rule, ignore_case)


def pairs_known(
    opened: Opened, read: evaluate_files.Pairs, rule: Rule, ignore_case: bool
) -> dict[int, tuple[int, int]]:
    """The pairs the model can answer (both words one token under the rule), by place: their token ids."""
    words = _words(opened.model, opened.vocab, rule, ignore_case)
    known = {}
    for at, (a, b, _) in enumerate(read.pairs):
        ia, ib = words.find(a, ignore_case), words.find(b, ignore_case)
        if ia is not None and ib is not None:
            known[at] = int(words.ids[ia]), int(words.ids[ib])
    return known


def too_few_pairs(file: str, o: Opened, rule: Rule, ignore_case: bool, found: int) -> str:
    """Why a model cannot be scored on a pair file: a correlation needs two pairs. gensim's
    evaluate_word_pairs raises a ValueError when none is found, and scipy's pearsonr when one is."""
    case = "" if ignore_case else f"{option('ignore_case', True)} or "
    if o.model.static:
        how = f"both words as keys of {o.name}"
        fix = f"try {case}a table that holds the file's words (GloVe's keys are lowercase)"
    else:
        how = f"both words single tokens under the {rule.value} rule"
        fix = f"try {case}{option('rule', 'bare' if rule is Rule.space else 'space')}"
    pairs = "no pair" if not found else f"only {found} pair" if found == 1 else f"only {found:,} pairs"
    has = "have" if found > 1 else "has"
    return f"{pairs} of {file} {has} {how}: a correlation needs two at least; {fix}"


def similarity_eval_in(
    opened: Opened,
    file: str,
    read: evaluate_files.Pairs,
    rule: Rule,
    ignore_case: bool,
    asked: set[int] | None = None,
) -> PairsEvalResult:
    """similarity_eval of an opened model, the file's pairs read; with asked (models side by side), only
    those pairs, the others counted as skipped."""
    m = opened.model
    if asked is None:
        refuse_rule([opened], rule)
    gold, ours, used, named = [], [], [], []
    for at, (ia, ib) in pairs_known(opened, read, rule, ignore_case).items():
        if asked is None or at in asked:
            a, b, score = read.pairs[at]
            used += [ia, ib]
            gold.append(score)
            ours.append(float(ops.cosines(m.wte[ia], m.wte[ib])[0]))
            named.append((a, b))
    if len(gold) < 2:
        raise UsageError(too_few_pairs(file, opened, rule, ignore_case, len(gold)))
    m.check_rows(used)
    g, o = np.array(gold), np.array(ours)
    skipped = len(read.pairs) - len(gold)
    notes = [read.note(Path(file))] if read.unreadable else []
    broken = np.flatnonzero(np.isnan(o))  # a row holding NaN or inf has no cosine
    if len(broken):
        a, b = named[broken[0]]
        more = (
            f" and {len(broken) - 1:,} other pair{'s' if len(broken) > 2 else ''}" if len(broken) > 1 else ""
        )
        notes.append(
            f"pearson and spearman are undefined: the cosine of {a!r} and {b!r}{more} is not a number (the "
            "model's rows hold NaN or infinite values there)"
        )
    notes += [
        f"pearson and spearman are undefined: every {what} is the same"
        for what, values in (("human score", g), ("cosine", o))
        if evaluate_scoring.constant(values)
    ]
    return PairsEvalResult(
        m.name,
        file,
        rule_of(opened, rule),
        ignore_case,
        len(read.pairs),
        len(gold),
        skipped,
        100 * skipped / len(read.pairs),
        evaluate_scoring.pearson(g, o),
        evaluate_scoring.spearman(g, o),
        tuple(notes),
        read.unreadable,
    )
