"""evaluate.py pinned where a mutation run (scripts/mutate.py) found it loose, each answer from an independent
computation: candidate words de-duplicated by a first-seen loop, line numbers counted from the file's own
lines, and answers against every candidate scored in a float64 loop; and core/evaluate.py's note on the pairs
that have no cosine, an answer that is the first word of all (counted, and named in --errors), the coverage,
and a --restrict past the vocabulary refused before anything is fetched, through the CLI."""

from __future__ import annotations

import dataclasses
import io
import json
import os
from pathlib import Path

import numpy as np
import pytest

from gpt2emb import limits
from gpt2emb.choices import Method, Rule
from gpt2emb.core import evaluate_files, evaluate_scoring
from gpt2emb.errors import UsageError
from oracles import unit

from conftest import run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local


def first_spellings(display: list[str], rule: Rule) -> tuple[list[str], list[int]]:
    """The words of a rule and the first token id that shows each, by a plain loop."""
    words: list[str] = []
    ids: list[int] = []
    for token_id, text in enumerate(display):
        spaced = text[1:] if text.startswith(" ") else ""
        word = text if rule is Rule.bare else spaced
        if word and not any(ch.isspace() for ch in word) and word not in words:
            words.append(word)
            ids.append(token_id)
    return words, ids


@pytest.mark.parametrize("rule", list(Rule))
def test_a_word_two_tokens_show_is_one_candidate(rule: Rule) -> None:
    """Two tokens that show the same text (two entries of one display) are one candidate word, the first."""
    display = [" king", " king", "king", " queen", "king", " ", " a b", "queen", " queen"]
    pieces = [f"p{i}" for i in range(len(display))]
    words = evaluate_files.RuleWords.build(pieces, display, rule, ignore_case=False)
    expected_words, expected_ids = first_spellings(display, rule)
    assert (words.words, words.ids.tolist()) == (expected_words, expected_ids)
    assert len(set(words.words)) == len(words.words)


@pytest.mark.parametrize("text", ["\n \n\t\nman king woman queen\n: royalty\n", "\n# a comment\n: royalty\n"])
def test_the_line_of_a_question_before_any_section(tmp_path: Path, text: str) -> None:
    """Blank lines are skipped; any other line before the first section is refused, named by its number."""
    path = tmp_path / "questions.txt"
    path.write_text(text)
    line = next(n for n, s in enumerate(text.splitlines(), 1) if s.split() and not s.startswith(": "))
    with pytest.raises(UsageError) as e:
        evaluate_files.read_analogies(path)
    assert e.value.message == f"{path}, line {line}: a question before any ': section' line"
    assert line in (2, 4)


def test_sections_keep_their_questions_and_names(tmp_path: Path) -> None:
    path = tmp_path / "questions.txt"
    path.write_text(": one \na b c d\nnot four words\n\n: two\ne f g h\ni j k l\n")
    got = [(s.name, s.questions) for s in evaluate_files.read_analogies(path)]
    assert got == [("one", [("a", "b", "c", "d")]), ("two", [("e", "f", "g", "h"), ("i", "j", "k", "l")])]
    empty = tmp_path / "empty.txt"
    empty.write_text(": one\n: two\nnot a question\n")
    with pytest.raises(UsageError, match="holds no analogy questions"):
        evaluate_files.read_analogies(empty)


def other_spellings(words: list[str], question: list[int]) -> list[int]:
    """The words spelt as a question's words up to case and not themselves one of them, by a plain loop."""
    folded = {words[i].upper() for i in question}
    return [i for i, w in enumerate(words) if w.upper() in folded and i not in question]


def test_other_spellings_of_two_and_of_three() -> None:
    names = ["king", "King", "queen", "QUEEN", "Queen", "man", "woman", "Woman"]
    words = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case=True)
    for question in ([0, 2, 5], [1, 3, 6], [5, 6, 7], [0, 1, 4]):
        assert words.spellings(np.array(question)) == other_spellings(names, question)
    assert words.spellings(np.array([0, 2, 5])) == [1, 3, 4]  # a word of two spellings counts too
    as_typed = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case=False)
    assert as_typed.spellings(np.array([0, 2, 5])) == []


def cosmul_scores(wte: np.ndarray, a: int, b: int, c: int, eps: float) -> np.ndarray:
    """gensim's 3cosmul of every row for b - a + c, one row at a time in float64; the inputs excluded."""
    x = wte.astype(np.float64)
    unit = [row / np.sqrt(sum(v * v for v in row)) for row in x]
    shifted = [[(1 + float(u @ unit[w])) / 2 for u in unit] for w in (a, b, c)]
    scores = np.array([shifted[1][i] * shifted[2][i] / (shifted[0][i] + eps) for i in range(len(x))])
    scores[[a, b, c]] = -np.inf
    return scores


def epsilon_table() -> np.ndarray:
    """Rows all but opposite to a ((1 + cos) / 2 about 1e-7, below 3cosmul's epsilon of 1e-6), b and c
    near them: the two best answers trade places when the epsilon doubles."""
    rng = np.random.default_rng(178)
    d = 4
    a = rng.standard_normal(d)
    b, c = (-a + 0.7 * np.linalg.norm(a) * rng.standard_normal(d) / np.sqrt(d) for _ in range(2))
    rows = -a + 3e-3 * np.linalg.norm(a) * rng.standard_normal((200, d)) * rng.uniform(0.3, 1.5, (200, 1))
    return np.vstack([a, b, c, rows]).astype(np.float32)


def test_3cosmul_answer_where_the_epsilon_decides() -> None:
    wte = epsilon_table()
    names = [f"w{i}" for i in range(len(wte))]
    words = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case=False)
    got = evaluate_scoring.analogy_answers(wte, words, np.array([[0, 1, 2]]), Method.cosmul, False)
    expected = int(np.argmax(cosmul_scores(wte, 0, 1, 2, 1e-6)))
    assert got.tolist() == [expected]
    assert int(np.argmax(cosmul_scores(wte, 0, 1, 2, 2e-6))) != expected  # the table is one where it counts


def piped(data: bytes) -> io.BufferedReader:
    """A pipe holding data (not a regular file: its size is known only by reading it), its writer closed."""
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    return os.fdopen(r, "rb")


@pytest.mark.parametrize("read", [3, 64])
def test_a_stream_of_exactly_the_file_limit_is_read_and_one_byte_more_refused(
    read: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"a b\nc\r\nd e f\n" * 8
    monkeypatch.setattr(limits, "MAX_FILE", len(data))
    monkeypatch.setattr(evaluate_files, "_READ", read)
    with piped(data) as f:
        assert list(evaluate_files._split(f, "p")) == data.decode().splitlines()
    with (
        piped(data + b"x") as f,
        pytest.raises(UsageError, match=f"^p is over {len(data)} bytes: a benchmark"),
    ):
        list(evaluate_files._split(f, "p"))


def test_a_file_of_exactly_the_file_limit_is_read_and_one_byte_more_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "pairs.txt"
    path.write_bytes(b"king\tqueen\t8.5\n" * 10)
    monkeypatch.setattr(limits, "MAX_FILE", path.stat().st_size)
    assert len(evaluate_files.read_pairs(path).pairs) == 10
    monkeypatch.setattr(limits, "MAX_FILE", path.stat().st_size - 1)
    with pytest.raises(UsageError, match=f"is over {path.stat().st_size - 1} bytes"):
        evaluate_files.read_pairs(path)


@pytest.mark.parametrize("read", [1, 4, 5, 64])
def test_a_line_of_exactly_the_line_limit_is_read_wherever_the_reads_cut(
    read: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "MAX_LINE", 5)
    monkeypatch.setattr(evaluate_files, "_READ", read)
    lines = [b"abcde", b"ab", b"", b"abcd", b"abcde"]
    with piped(b"\n".join(lines) + b"\n") as f:
        assert list(evaluate_files._split(f, "p")) == [x.decode() for x in lines]
    with piped(b"ab\nabcdef\nab\n") as f, pytest.raises(UsageError, match=r"^p, line 2: longer than 5 bytes"):
        list(evaluate_files._split(f, "p"))
    with piped(b"ab\nabcde") as f:  # the last line without its newline
        assert list(evaluate_files._split(f, "p")) == ["ab", "abcde"]
    with piped(b"ab\nabcdef") as f, pytest.raises(UsageError, match=r"^p, line 2: longer than 5 bytes"):
        list(evaluate_files._split(f, "p"))


@pytest.mark.parametrize("method", list(Method))
@pytest.mark.parametrize("ignore_case", [False, True])
def test_no_answer_where_every_candidate_is_an_input_a_spelling_or_broken(
    method: Method, ignore_case: bool
) -> None:
    """Words a, b, c, another spelling of c and a row of NaN: no candidate is left, so no answer (-1)."""
    rng = np.random.default_rng(41)
    names = ["man", "king", "woman", "WOMAN" if ignore_case else "broken", "nan"]
    wte = rng.standard_normal((5, 6)).astype(np.float32)
    wte[4] = np.nan
    if not ignore_case:
        wte[3, 2] = np.inf
    words = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case)
    got = evaluate_scoring.analogy_answers(wte, words, np.array([[0, 1, 2], [0, 1, 2]]), method, ignore_case)
    assert got.tolist() == [-1, -1]
    wte[4] = rng.standard_normal(6)  # one candidate left: it is the answer
    assert evaluate_scoring.analogy_answers(
        wte, words, np.array([[0, 1, 2]]), method, ignore_case
    ).tolist() == [4]


@pytest.mark.parametrize("method", list(Method))
def test_a_zero_row_scores_its_cosines_of_zero(method: Method) -> None:
    """A zero row has no direction: its cosine with anything is 0 (as `cosines` gives it), so it is the
    answer when every other candidate scores below what three cosines of 0 make."""
    rng = np.random.default_rng(43)
    a, b, c = rng.standard_normal((3, 6))
    target = b / np.linalg.norm(b) - a / np.linalg.norm(a) + c / np.linalg.norm(c)
    others = -target + 0.05 * rng.standard_normal((5, 6))  # pointing away from the answer
    wte = np.vstack([a, b, c, others[:2], np.zeros(6), others[2:]]).astype(np.float32)
    names = [f"w{i}" for i in range(len(wte))]
    words = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case=False)
    unit = [r / n if (n := np.linalg.norm(r)) > 0 else r for r in wte.astype(np.float64)]
    if method is Method.cosmul:
        scores = [
            ((1 + u @ unit[1]) / 2) * ((1 + u @ unit[2]) / 2) / ((1 + u @ unit[0]) / 2 + 1e-6) for u in unit
        ]
    else:
        w = [float(np.linalg.norm(r)) if method is Method.add else 1.0 for r in wte.astype(np.float64)]
        scores = [w[1] * (u @ unit[1]) - w[0] * (u @ unit[0]) + w[2] * (u @ unit[2]) for u in unit]
    expected = max(range(3, len(wte)), key=lambda i: (scores[i], -i))
    assert expected == 5
    got = evaluate_scoring.analogy_answers(wte, words, np.array([[0, 1, 2]]), method, False)
    assert got.tolist() == [expected]


def step_ties(seed: int = 53) -> tuple[np.ndarray, np.ndarray]:
    """Questions whose best candidates differ by a few of 3cosadd's fast steps (1/8192 of a cosine each):
    rounding each of three cosines to a step can put the exact best up to three steps below another."""
    rng = np.random.default_rng(seed)
    d, n_q, family = 12, 100, 40
    base = rng.standard_normal((3 * n_q, d))
    abc = np.arange(3 * n_q).reshape(n_q, 3)
    rows = [base]
    for a, b, c in abc:
        u = base[[a, b, c]] / np.linalg.norm(base[[a, b, c]], axis=1)[:, None]
        target = u[1] - u[0] + u[2]
        target /= np.linalg.norm(target)
        rows.append(target + 0.006 * rng.standard_normal((family, d)))  # cosines within 1e-4 or so
    return np.vstack(rows).astype(np.float32), abc


def test_3cosadd_answers_where_the_fast_steps_round_apart() -> None:
    wte, abc = step_ties()
    names = [f"w{i}" for i in range(len(wte))]
    words = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case=False)
    x = wte.astype(np.float64)
    unit = x / np.sqrt((x * x).sum(axis=1))[:, None]
    expected = []
    for a, b, c in abc.tolist():
        scores = unit @ unit[b] - unit @ unit[a] + unit @ unit[c]
        scores[[a, b, c]] = -np.inf
        expected.append(int(np.argmax(scores)))
    got = evaluate_scoring.analogy_answers(wte, words, abc, Method.cosadd, False)
    assert got.tolist() == expected


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_an_exact_line_correlates_at_most_one(sign: float) -> None:
    """Scores on an exact line: |r| is 1, as scipy's pearsonr gives it, though rounding takes the quotient
    to 1.0000000000000002 for these numbers."""
    from scipy import stats

    x = np.array([-1.3204309700132935, -0.6615280218152191, 0.9350499881140221, 0.049054613825311656])
    y = sign * (x * 5.024484685327428 + 0.18851919251246557)
    r = evaluate_scoring.pearson(x, y)
    assert r is not None and -1.0 <= r <= 1.0
    assert r == pytest.approx(float(stats.pearsonr(x, y)[0]), abs=1e-15)
    assert abs(r) == 1.0


def test_more_pairs_than_words_in_ten_dimensions() -> None:
    """Five words in eight (a, b) pairs, rows of 10 numbers: a block's budget divides by 12 * 10 + 40 * 13
    table entries, and every answer is still the best of every candidate scored."""
    rng = np.random.default_rng(59)
    wte = rng.standard_normal((25, 10)).astype(np.float32)
    names = [f"w{i}" for i in range(len(wte))]
    words = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case=False)
    pairs = [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1), (3, 4), (4, 3)]
    abc = np.array([(a, b, next(c for c in range(5) if c not in (a, b))) for a, b in pairs])
    x = wte.astype(np.float64)
    unit = x / np.sqrt((x * x).sum(axis=1))[:, None]
    expected = []
    for a, b, c in abc.tolist():
        scores = unit @ unit[b] - unit @ unit[a] + unit @ unit[c]
        scores[[a, b, c]] = -np.inf
        expected.append(int(np.argmax(scores)))
    assert evaluate_scoring.analogy_answers(wte, words, abc, Method.cosadd, False).tolist() == expected


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_a_score_that_is_not_finite_leaves_r_undefined_without_a_warning(bad: float) -> None:
    """No r for a list holding inf or NaN (scipy's would be NaN), and no numpy warning on the way (warnings
    are errors here, as none may reach a user)."""
    x = np.array([1.0, bad, 2.0, 4.0])
    y = np.array([1.0, 2.0, 3.0, 5.0])
    assert evaluate_scoring.pearson(x, y) is None and evaluate_scoring.pearson(y, x) is None
    assert evaluate_scoring.pearson(np.array([3.0]), np.array([2.0])) is None  # one pair: no direction


# ---------------------------------------------------------------- core/evaluate.py, through the CLI


@pytest.mark.parametrize(
    ("pairs", "said"),
    [
        ([("cat", "dog"), ("king", "queen"), ("man", "woman")], "'cat' and 'dog'"),
        (
            [("cat", "dog"), ("dog", "kitten"), ("king", "queen"), ("man", "woman")],
            "'cat' and 'dog' and 1 other pair",
        ),
        (
            [("cat", "dog"), ("dog", "kitten"), ("dog", "man"), ("king", "queen"), ("man", "woman")],
            "'cat' and 'dog' and 2 other pairs",
        ),
    ],
)
def test_the_note_names_the_first_pair_without_a_cosine_and_counts_the_others(
    tiny: Tiny, tmp_path: Path, pairs: list[tuple[str, str]], said: str
) -> None:
    wte = tiny.wte.copy()
    wte[tiny.id("dog")] = np.nan  # every pair with dog has no cosine
    folder = save_local(dataclasses.replace(tiny, wte=wte), tmp_path / "nan-dog")
    path = tmp_path / "pairs.tsv"
    path.write_text("".join(f"{a}\t{b}\t{n}\n" for n, (a, b) in enumerate(pairs)), encoding="utf-8")
    result = run_cli("similarity", "--eval", str(path), "-m", str(folder), "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["notes"] == [
        f"pearson and spearman are undefined: the cosine of {said} is not a number (the model's rows hold "
        "NaN or infinite values there)"
    ]


def first_spaced_word(tiny: Tiny) -> str:
    """The first word of the space rule: the first token id whose text is a space and then one word."""
    for i in range(tiny.tokenizer.get_vocab_size()):
        text = tiny.tokenizer.decode([i])
        if text.startswith(" ") and text[1:] and not any(ch.isspace() for ch in text[1:]):
            return text[1:]
    raise AssertionError("no spaced word")


def test_an_answer_that_is_the_first_word_counts_and_is_named(tiny: Tiny, tmp_path: Path) -> None:
    """The row of the first word (cat) made the sum 3cosadd (gensim's most_similar) answers man : king ::
    woman : ? with, unit(king) - unit(man) + unit(woman): cat is then the answer, the first word of all (index
    0 of the words)."""
    first = first_spaced_word(tiny)
    assert first == "cat"
    wte = tiny.wte.copy()
    king, man, woman = unit(wte[[tiny.id(w) for w in ("king", "man", "woman")]])
    wte[tiny.id("cat")] = (king - man + woman).astype(np.float32)
    folder = save_local(dataclasses.replace(tiny, wte=wte), tmp_path / "cat-answers")
    path = tmp_path / "questions.txt"
    questions = [
        "man king woman cat",
        "man king woman queen",
        "man king woman zzqx",
    ]  # man : king :: woman : ?
    path.write_text(": royal\n" + "".join(q + "\n" for q in questions), encoding="utf-8")
    result = run_cli(
        "analogy", "--eval", str(path), "-m", str(folder), "--method", "3cosadd", "--errors", "--json"
    )
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    (royal,) = doc["sections"]
    assert (royal["correct"], royal["incorrect"], royal["skipped"]) == (1, 1, 1)  # zzqx is no word: skipped
    assert doc["coverage"] == pytest.approx(2 / 3)  # answered of all the questions
    assert doc["errors"] == [
        {"section": "royal", "question": ["man", "king", "woman"], "expected": "queen", "predicted": "cat"}
    ]


def test_a_restriction_past_the_vocabulary_is_refused_before_anything_is_fetched(
    hub: FakeHub, tmp_path: Path
) -> None:
    path = tmp_path / "questions.txt"
    path.write_text(": royal\nking man woman queen\n", encoding="utf-8")
    result = run_cli("analogy", "--eval", str(path), "--restrict", "60000")
    assert result.exit_code == 2
    assert "--restrict 60000 is more than the 50,257 tokens there are: give at most 50,257" in result.stderr
    assert hub.requests == []  # gpt2's vocabulary size is the registry's: nothing fetched


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (1, "1 line of {path} was skipped, unreadable ({rule}): line 2, "),
        (2, "2 lines of {path} were skipped, unreadable ({rule}): the first is line 2, "),
    ],
)
def test_the_note_on_unreadable_pair_lines_in_the_right_number(tmp_path: Path, bad: int, said: str) -> None:
    path = tmp_path / "pairs.tsv"
    lines = ["cat\tdog\t1", *["man\tking\tabc"] * bad, "king\tqueen\t2"]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    read = evaluate_files.read_pairs(path)
    assert (len(read.pairs), read.unreadable) == (2, bad)
    rule = "a pair is word<TAB>word<TAB>score, the score a finite number"
    assert read.note(path).startswith(said.format(path=path, rule=rule))
