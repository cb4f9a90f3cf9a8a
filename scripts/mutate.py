"""Mutation testing, run by hand (never in CI): does the suite notice each small change to a core module?

Each mutant is one change to the module's source (a comparison flipped or negated, `and`/`or` swapped, an
arithmetic operator swapped, a number changed, True/False swapped, `not` dropped, a `raise` or a call
statement dropped, a returned value replaced by None), written over the module file in place, so the tests
that start `gpt2emb` in a subprocess run the mutant too (mutmut copies the code aside, which they would not
see). Run it in a separate git worktree, never in a tree where people are working:

    git worktree add --detach /tmp/mut main && cd /tmp/mut
    python scripts/mutate.py --module src/gpt2emb/ops.py --list              # the mutants, nothing run
    python scripts/mutate.py --module src/gpt2emb/ops.py --json ops.json     # all of them
    python scripts/mutate.py --module src/gpt2emb/ops.py --sample 60 --seed 1 --only-lines 100-250
    python scripts/mutate.py --module src/gpt2emb/ops.py --survivors-of ops.json --new-first --json ops.json

How a mutant is judged: one traced run of the module's tests (DEFAULT_TESTS, or --tests) records which
lines of the module each test executes, in-process and in the `gpt2emb` processes it starts (a
sitecustomize on PYTHONPATH traces those); each mutant is then run against the tests that execute its
line, fastest first, stopping at the first failure (killed). A mutant in module-level code (a constant
table, a default argument) runs against the tests that execute the lines using what its statement
defines. A mutant that no test executes survives without a run. A run that exceeds the timeout is killed
with its process group and counts as killed. The module file is restored after each mutant and on any exit
(Ctrl-C included).

The module's own tests (ids starting with --new-tests, by default tests/units/) run after the others, so
one run gives the score with and without them. A mutant that only they kill survived the rest.
--survivors-of reruns the survivors of an earlier run (after new tests were written), and --new-first runs
the new tests first, to see quickly what kills them.

Survivors that no test could notice (the mutant behaves exactly as the original) are listed with a reason
in scripts/mutants-equivalent.txt; the score is also given over the mutants that are not equivalent.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = Path(__file__).resolve().with_name("mutants-equivalent.txt")

# The tests that exercise each module: the traced run covers these files, and each mutant runs the subset
# that executes its line. Kept small: the files about what the module does, not every file that passes
# through it (every command opens a checkpoint; the slow process-level tests of test_hardening.py add
# minutes to each surviving mutant and test no checkpoint arithmetic).
_CHECKPOINT_TESTS = [
    *("tests/test_damaged_files.py", "tests/test_store.py"),
    *("tests/commands/test_sizes.py", "tests/units/store/test_verify.py", "tests/test_revision.py"),
    "tests/test_redirect.py",
    *("tests/test_config_shapes.py", "tests/test_damaged_model_files.py"),  # configs and tokenizers refused
    "tests/test_unreachable_hub.py",  # the whole weights' probe (absent_weights)
    *("tests/units/store/test_checkpoint.py", "tests/units/store/test_checkpoint_files.py"),
    *("tests/units/store/test_formats.py", "tests/units/store/test_table_rows.py"),
    *("tests/units/store/test_tokenizer_files.py", "tests/units/store/test_whole_weights.py"),
]
# the files that hold what was tests/test_cli.py: the commands' own files, the app's, what a run imports
# A command checks the rows it shows against their checksums: the test that damages rows and asks for them.
_ROWS_CHECKED = "tests/units/store/test_verify.py::test_damage_is_found_refused_and_repaired"
_COMMAND_TESTS = [
    *(f"tests/commands/test_{stem}.py" for stem in ("vector", "neighbors", "analogy", "similarity")),
    *(f"tests/commands/test_{stem}.py" for stem in ("positions", "tying", "cache")),
    *("tests/test_app.py", "tests/test_imports.py"),
]
_OPS_TESTS = [
    *("tests/units/test_ops.py", "tests/test_invariance.py", *_COMMAND_TESTS, "tests/units/test_batch.py"),
    *("tests/commands/test_text.py", "tests/commands/test_geometry.py"),  # what was test_chapter_input.py
    *("tests/test_correlation.py", "tests/units/test_candidates.py"),
    *("tests/units/test_measures.py", "tests/units/test_tables.py", "tests/units/test_sums.py"),
]
_EVALUATE_TESTS = [
    *("tests/units/core/test_evaluate.py", "tests/units/core/test_evaluate_files.py"),
    *("tests/units/core/test_evaluate_scoring.py", "tests/test_correlation.py"),
]
# Every module of plot/ runs against every figure's tests: a test of one figure often holds another module
# (canvas, place, the file written) to its answer.
_PLOT_MODULES = ["init", "analogy", "canvas", "context", "geometry", "logits", "neighbors", "place"]
_PLOT_MODULES += ["positions", "similarity", "sizes", "vector"]
_PLOT_TESTS = [
    *("tests/test_figures.py", "tests/test_overlaps.py", "tests/test_figure_text.py"),
    "tests/test_heatmap_legend.py",
    *(f"tests/units/plot/test_{name}.py" for name in _PLOT_MODULES),
]
_PAGE_TESTS = [
    *("tests/commands/test_lab.py", "tests/units/core/test_lab.py", "tests/test_lab_browser.py"),
    "tests/test_figure_text.py::test_the_issue_s_command_lines_answer_and_write_their_file",
    *("tests/units/output/pages/test_lab.py", "tests/units/output/pages/test_init.py"),
]
_WORD_TESTS = [
    # forms are tested in tests/commands/test_neighbors.py
    *("tests/units/test_tokens.py", "tests/units/test_candidates.py", *_COMMAND_TESTS),
    *("tests/test_word_lists.py", "tests/units/test_bpe.py", "tests/test_encodings.py"),
    *("tests/test_damaged_model_files.py", "tests/test_handle_contract.py"),
    "tests/test_exact_families.py",
    *("tests/test_family_bert.py", "tests/test_family_distilbert.py", "tests/test_family_gpt_neo.py"),
    *("tests/test_family_roberta.py", "tests/test_family_rotary.py"),
    *("tests/units/test_queries.py", "tests/units/test_quoting.py", "tests/units/test_tokenizer_library.py"),
    "tests/units/test_word_lists.py",
]
DEFAULT_TESTS: dict[str, list[str]] = {  # keyed by the module's file name (plot/, output/: its path, key_of)
    # ---- plot/ and output/pages/ (issue 53): the figures and the page, read back and measured
    **{
        f"plot/{name}.py": _PLOT_TESTS
        for name in ("__init__", "analogy", "canvas", "context", "geometry", "neighbors", "place")
    },
    **{f"plot/{name}.py": _PLOT_TESTS for name in ("similarity", "sizes", "vector")},
    "plot/logits.py": [
        *(*_PLOT_TESTS, "tests/commands/test_logits.py"),
        "tests/commands/test_logits_masked.py::test_the_grid_fills_in_the_positions_around_the_mask",
    ],
    "plot/positions.py": [
        *(*_PLOT_TESTS, "tests/commands/test_positions.py", "tests/units/core/test_positions.py"),
    ],
    "output/pages/__init__.py": _PAGE_TESTS,
    "output/pages/lab.py": _PAGE_TESTS,
    # store/checkpoint.py, and the modules that hold the rest of what was checkpoint.py (issue 58)
    "checkpoint.py": _CHECKPOINT_TESTS,
    "checkpoint_files.py": _CHECKPOINT_TESTS,
    "formats.py": _CHECKPOINT_TESTS,
    "table_rows.py": [
        *_CHECKPOINT_TESTS,
        *("tests/units/store/test_landing.py", "tests/units/store/test_partial.py"),  # kept and landed
        "tests/commands/test_tying.py",  # an untied output layer's rows
    ],
    "tokenizer_files.py": _CHECKPOINT_TESTS,
    "whole_weights.py": [  # the whole model's weight files: the runs that need them, and the Hub's probe
        *("tests/units/store/test_whole_weights.py", "tests/test_unreachable_hub.py"),
        "tests/commands/test_tying.py",
    ],
    # ops.py, and measures.py, which holds what was ops.py from cosine_matrix on
    "ops.py": _OPS_TESTS,
    "measures.py": _OPS_TESTS,
    # sums.py: the analogy's math that was ops.py's (issue 49)
    "sums.py": [
        "tests/units/test_sums.py",
        "tests/commands/test_analogy.py",
        "tests/units/test_ops.py",
        "tests/test_extreme_rows.py",
    ],
    # what was evaluate.py: core/evaluate_files.py (the files read) and core/evaluate_scoring.py (the scores)
    "evaluate_files.py": _EVALUATE_TESTS,
    "evaluate_scoring.py": _EVALUATE_TESTS,
    "evaluate_compare.py": ["tests/test_side_by_side.py"],  # --eval of several models (issue 56)
    # tokens.py and the modules that hold the rest of what it held (issue 58) share one list. It holds the
    # files about words and tokens: ids, splits, refusals, display, each family's rule, and the tokenizers
    # library's faults. The slow process-level tests of test_hardening.py and bpe.py's own long runs
    # (test_bpe_long.py) are left out.
    **dict.fromkeys(
        ("tokens.py", "queries.py", "quoting.py", "tokenizer_library.py", "word_lists.py"), _WORD_TESTS
    ),
    # ---- store/ (group A)
    # store/build.py, and the modules that hold the rest of what was build.py (issue 58)
    "build.py": [
        *("tests/test_store.py", "tests/units/store/test_verify.py", "tests/test_windows_cache.py"),
        *("tests/units/store/test_partial.py", "tests/commands/test_cache.py", "tests/test_whole_checks.py"),
        *("tests/units/store/test_landing.py", "tests/units/store/test_build.py"),
        "tests/units/store/test_install.py",  # the lock: an entry built while a first use waited for it
    ],
    "encoder_files.py": [
        *("tests/units/test_bpe.py", "tests/test_exact_families.py", "tests/test_family_roberta.py"),
        "tests/units/store/test_encoder_files.py",
    ],
    "install.py": [
        *("tests/test_store.py", "tests/test_windows_cache.py", "tests/test_full_disk.py"),
        *("tests/test_cache_env.py", "tests/units/store/test_build.py", "tests/units/store/test_install.py"),
    ],
    "writing.py": [
        *("tests/test_store.py", "tests/test_full_disk.py", "tests/units/store/test_verify.py"),
        *("tests/units/store/test_build.py", "tests/units/store/test_landing.py"),
        "tests/units/store/test_writing.py",
    ],
    "entries.py": [
        *("tests/test_store.py", "tests/units/store/test_verify.py", "tests/test_windows_cache.py"),
        *("tests/test_cache_env.py", "tests/test_damaged_files.py", "tests/test_damaged_cache_fuzz.py"),
        *("tests/test_whole_checks.py", "tests/test_records.py", "tests/commands/test_cache.py"),
        "tests/units/store/test_entries.py",
        "tests/test_vocab_roundtrip.py::test_an_entry_of_format_4_is_read_without_a_rebuild",
        # types.npy and norm.npy, which only some families have
        "tests/test_family_roberta.py::test_input_is_transformers_own_embedding_output",
    ],
    "hub.py": [
        *("tests/test_store.py", "tests/test_redirect.py", "tests/test_revision.py"),
        "tests/units/store/test_partial.py",
        *("tests/test_damaged_files.py", "tests/test_process_state.py", "tests/units/store/test_hub.py"),
        "tests/test_unreachable_hub.py",
    ],
    "landing.py": [
        *("tests/units/store/test_landing.py", "tests/units/store/test_partial.py"),
        *("tests/units/store/test_checkpoint.py", "tests/units/store/test_table_rows.py"),
    ],
    "manage.py": [
        *("tests/test_store.py", "tests/commands/test_cache.py", "tests/test_revision.py"),
        *("tests/test_windows_cache.py", "tests/units/store/test_partial.py", "tests/test_records.py"),
        "tests/units/store/test_manage.py",
    ],
    "partial.py": ["tests/test_store.py", "tests/units/store/test_partial.py"],
    "revisions.py": [
        *("tests/test_revision.py", "tests/test_records.py", "tests/test_store.py", "tests/test_redirect.py"),
        *("tests/test_damaged_cache_fuzz.py", "tests/commands/test_cache.py"),
        "tests/units/store/test_revisions.py",
    ],
    "static.py": [
        "tests/units/store/test_static.py",
        "tests/test_static_files.py",
        "tests/test_static_fuzz.py",
    ],
    "keys.py": ["tests/units/store/test_static.py", "tests/test_static_files.py"],
    "verify.py": [
        *("tests/units/store/test_verify.py", "tests/test_store.py", "tests/commands/test_cache.py"),
        *("tests/test_records.py", "tests/test_windows_cache.py"),
    ],
    # ---- end of group A
    # ---- core/ per command (group B)
    "analogy.py": [
        "tests/commands/test_analogy.py",
        *("tests/test_handle_commands.py", "tests/test_handle_contract.py"),
        "tests/units/test_batch.py",
        "tests/units/test_candidates.py",
        _ROWS_CHECKED,
        "tests/units/core/test_analogy.py",
        "tests/units/test_sums.py",
    ],
    "cache.py": [
        *(
            "tests/commands/test_cache.py",
            "tests/units/store/test_verify.py",
            "tests/test_handle_commands.py",
        ),
        "tests/units/core/test_cache.py",
    ],
    "compare.py": [
        *(
            "tests/commands/test_neighbors.py",
            "tests/commands/test_analogy.py",
            "tests/test_handle_commands.py",
            "tests/test_side_by_side.py",
        ),
    ],
    "lab.py": [
        "tests/commands/test_lab.py",
        "tests/units/core/test_lab.py",
    ],
    "neighbors.py": [
        "tests/commands/test_neighbors.py",
        *("tests/test_handle_commands.py", "tests/test_handle_contract.py"),
        "tests/units/test_batch.py",
        "tests/units/test_candidates.py",
        _ROWS_CHECKED,
        "tests/units/core/test_neighbors.py",
    ],
    "open.py": [
        *_COMMAND_TESTS,
        *("tests/test_handle_commands.py", "tests/test_handle_contract.py"),
        *("tests/commands/test_text.py", "tests/test_family_roberta.py", "tests/test_family_bert.py"),
        "tests/commands/test_lab.py::test_each_part_is_its_own_command_s_document",  # RankOptions' defaults
        "tests/test_family_rotary.py::test_a_long_text_has_no_position_wall",  # finite(None): no wpe
        "tests/test_family_rotary.py::test_input_is_the_token_rows_alone",  # no_position_table's words
        "tests/units/core/test_open.py",
    ],
    "positions.py": [
        *("tests/commands/test_positions.py", "tests/test_heatmap_legend.py", "tests/test_family_roberta.py"),
        *("tests/test_handle_commands.py", "tests/test_handle_contract.py"),
        _ROWS_CHECKED,
        "tests/units/core/test_positions.py",
    ],
    "schema.py": [
        *("tests/commands/test_schema.py", "tests/test_generated.py"),
        "tests/units/core/test_schema.py",
    ],
    "similarity.py": [
        *("tests/commands/test_similarity.py", "tests/units/test_batch.py", "tests/test_endless_stdin.py"),
        *("tests/test_handle_commands.py", "tests/test_handle_contract.py"),
        _ROWS_CHECKED,
        "tests/units/core/test_similarity.py",
    ],
    "sizes.py": [
        *("tests/commands/test_sizes.py", "tests/test_family_rotary.py", "tests/test_handle_commands.py"),
        "tests/commands/test_cache.py::test_models_and_cache_management",  # `models`
        "tests/units/core/test_sizes.py",
    ],
    "tying.py": [
        *("tests/commands/test_tying.py", "tests/test_family_rotary.py", "tests/test_family_bert.py"),
        *("tests/test_handle_commands.py", "tests/test_handle_contract.py"),
        "tests/units/core/test_tying.py",
        "tests/test_unreachable_hub.py",  # --load's weights probed before the meta model
    ],
    "vector.py": [
        "tests/commands/test_vector.py",
        *("tests/test_handle_commands.py", "tests/test_handle_contract.py"),
        "tests/units/test_batch.py",
        _ROWS_CHECKED,
    ],
    "whole.py": [
        *("tests/commands/test_text.py", "tests/commands/test_tying.py", "tests/test_family_roberta.py"),
        "tests/units/core/test_whole.py",
    ],
    "words.py": [
        *("tests/commands/test_neighbors.py", "tests/commands/test_analogy.py", "tests/test_extreme_rows.py"),
        *("tests/test_handle_commands.py", "tests/test_handle_contract.py"),
        "tests/units/test_batch.py",
        "tests/units/core/test_words.py",
    ],
    # ---- end of group B
    # ---- core/ math and text, top-level math (group C)
    "evaluate.py": _EVALUATE_TESTS,  # what the files read and the scores are for: the same files
    "export.py": [
        *("tests/commands/test_export.py", "tests/test_export_sources.py", "tests/test_write_targets.py"),
        "tests/units/core/test_export.py",
    ],
    "geometry.py": [
        *("tests/commands/test_geometry.py", "tests/test_correlation.py", "tests/test_handle_commands.py"),
        "tests/units/store/test_verify.py",  # damaged rows are refused
        "tests/test_family_rotary.py",  # a model with no position table
        "tests/units/core/test_geometry.py",
    ],
    "logits.py": [
        *("tests/commands/test_logits.py", "tests/commands/test_logits_masked.py"),
        "tests/test_handle_contract.py",
    ],
    "logits_masked.py": ["tests/commands/test_logits_masked.py"],
    "text.py": [
        *("tests/commands/test_text.py", "tests/test_handle_commands.py", "tests/test_family_rotary.py"),
        *("tests/test_family_bert.py", "tests/test_family_roberta.py"),  # token types, tokens added
        "tests/units/core/test_text.py",
    ],
    "batch.py": [
        *("tests/units/test_batch.py", "tests/test_endless_stdin.py", "tests/test_handle_contract.py"),
        "tests/commands/test_text.py",  # input -, batch.text
    ],
    "candidates.py": [
        *("tests/units/test_candidates.py", "tests/test_word_lists.py"),
        *("tests/commands/test_neighbors.py", "tests/commands/test_analogy.py"),
    ],
    "tables.py": [
        *("tests/commands/test_geometry.py", "tests/commands/test_text.py", "tests/test_correlation.py"),
        "tests/units/test_tables.py",
    ],
    "targets.py": [
        *("tests/test_write_targets.py", "tests/commands/test_export.py", "tests/test_figures.py"),
        "tests/units/test_targets.py",
    ],
    "kept.py": ["tests/units/test_kept.py", "tests/test_export_sources.py", "tests/test_cache_env.py"],
    # ---- end of group C
    # ---- top-level words, contract, errors, registry (group D)
    "bpe.py": [
        *("tests/units/test_bpe.py", "tests/units/test_tokens.py"),
        *("tests/test_family_bert.py", "tests/test_family_rotary.py"),
    ],
    "choices.py": [
        "tests/commands/test_analogy.py",
        "tests/units/core/test_evaluate.py",
    ],  # no mutants: enums only
    "contract.py": [
        *("tests/test_handle_contract.py", "tests/test_handle_commands.py", "tests/commands/test_analogy.py"),
        "tests/units/test_batch.py",
        "tests/units/test_contract.py",
    ],
    "errors.py": [
        *("tests/test_handle_contract.py", "tests/units/test_batch.py", "tests/test_output_streams.py"),
        *("tests/test_app.py", "tests/units/test_registry.py", "tests/test_config_shapes.py"),
        *("tests/commands/test_analogy.py", "tests/commands/test_neighbors.py"),
        "tests/test_revision.py",  # cache refresh: the exit code of the first repo that failed (error_for)
        "tests/units/test_errors.py",
    ],
    "forms.py": ["tests/commands/test_neighbors.py", "tests/units/test_forms.py"],
    "handle.py": [
        *("tests/test_handle_contract.py", "tests/test_handle_commands.py", "tests/commands/test_analogy.py"),
        *("tests/units/test_batch.py", "tests/test_notebook.py", "tests/commands/test_tying.py"),
        "tests/units/test_handle.py",
    ],
    "heavy.py": [
        *("tests/commands/test_tying.py", "tests/commands/test_text.py", "tests/test_process_state.py"),
        *("tests/test_config_shapes.py", "tests/test_damaged_model_files.py"),
        *("tests/test_changed_while_read.py", "tests/test_family_gpt_neo.py"),
        *("tests/test_family_rotary.py", "tests/units/store/test_checkpoint_files.py"),
        "tests/units/store/test_checkpoint.py",
        *("tests/commands/test_logits.py", "tests/commands/test_logits_masked.py"),  # read_out, read_masked
        "tests/units/test_heavy.py",
    ],
    "limits.py": [
        *("tests/test_word_lists.py", "tests/test_endless_stdin.py", "tests/test_damaged_files.py"),
        *("tests/test_correlation.py", "tests/test_cache_env.py", "tests/test_vocab_roundtrip.py"),
        "tests/units/test_limits.py",
    ],
    "piece_lines.py": [
        *("tests/test_vocab_roundtrip.py", "tests/units/test_tokens.py", "tests/test_exact_families.py"),
        "tests/units/test_piece_lines.py",
    ],
    "registry.py": [
        *("tests/units/test_registry.py", "tests/commands/test_sizes.py", "tests/test_revision.py"),
        *("tests/test_special_tokens.py", "tests/test_once_per_run.py"),
    ],
    "report.py": ["tests/test_process_state.py", "tests/units/test_report.py"],
    # ---- end of group D
}


# ---------------------------------------------------------------- the mutants


@dataclass(frozen=True)
class Site:
    """One way to change one node: the replacement node, and where it goes in the tree."""

    parent: ast.AST
    field: str
    index: int | None  # the position in the parent's list field, None for a single node
    old: ast.AST
    new: ast.AST
    kind: str
    scope: str  # the enclosing function or class, dotted; <module> outside any
    module_level: bool  # runs when the module is imported (outside any function body)
    match: list[tuple[int, int]]  # the lines a test must execute to reach it (any of them)


@dataclass
class Mutant:
    index: int
    line: int
    col: int
    kind: str
    scope: str
    before: str
    after: str
    key: str  # "scope: before -> after", numbered when a scope holds the same change twice
    module_level: bool
    match: list[tuple[int, int]]
    source: str = field(repr=False)
    status: str = "not run"  # killed, survived, timeout, equivalent (a survivor listed as such)
    tests: list[str] = field(default_factory=list)
    failed: str | None = None
    seconds: float = 0.0


_COMPARE: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Lt: (ast.LtE, ast.GtE),
    ast.LtE: (ast.Lt, ast.Gt),
    ast.Gt: (ast.GtE, ast.LtE),
    ast.GtE: (ast.Gt, ast.Lt),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
_BINARY: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
    ast.BitXor: ast.BitAnd,
}
_SIMPLE_STATEMENTS = (
    ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.Delete, ast.Assert,
)  # fmt: skip


def _changed(node: ast.AST, **fields: Any) -> ast.AST:
    new = copy.deepcopy(node)
    for name, value in fields.items():
        setattr(new, name, value)
    return new


def _changes(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """Each mutation of this node itself: (kind, the node that replaces it)."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            others = _COMPARE.get(type(op), ())
            for other in others:
                ops = [*node.ops[:i], other(), *node.ops[i + 1 :]]
                negated = other is others[-1]  # (boundary moved, negated), or negated alone
                yield ("comparison negated" if negated else "comparison boundary"), _changed(node, ops=ops)
    elif isinstance(node, ast.BoolOp):
        yield "and/or swapped", _changed(node, op=ast.Or() if isinstance(node.op, ast.And) else ast.And())
    elif isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _BINARY:
        yield "operator swapped", _changed(node, op=_BINARY[type(node.op)]())
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
        yield "unary dropped", copy.deepcopy(node.operand)
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield "boolean flipped", _changed(node, value=not node.value)
    elif isinstance(node, ast.Constant) and isinstance(node.value, int):
        yield "number changed", _changed(node, value=node.value + 1)
    elif isinstance(node, ast.Constant) and isinstance(node.value, float):
        yield "number changed", _changed(node, value=node.value * 2 if node.value else 1.0)
    elif isinstance(node, ast.Raise):
        yield "raise dropped", ast.Pass()
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        yield "call dropped", ast.Pass()
    elif isinstance(node, ast.Return) and not (node.value is None or _is_none(node.value)):
        yield "return None", ast.Return(value=ast.Constant(value=None))


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _skipped_fields(node: ast.AST) -> set[str]:
    """Fields never mutated: annotations (not evaluated, the module uses `from __future__ import
    annotations`), decorators (`@dataclass(frozen=True)`: class machinery, and a mutant of it runs every
    test that builds the class), assertions (internal invariants), `if TYPE_CHECKING` blocks."""
    if isinstance(node, ast.arg):
        return {"annotation"}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return {"returns", "decorator_list"}
    if isinstance(node, ast.ClassDef):
        return {"decorator_list"}
    if isinstance(node, ast.AnnAssign):
        return {"annotation"}
    if isinstance(node, ast.Assert):
        return {"test", "msg"}
    if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
        return {"test", "body", "orelse"}
    return set()


def sites(tree: ast.Module, lines: list[str]) -> list[Site]:
    """Every mutation of the module, in source order; a line ending in `# no mutate` is left alone."""
    found: list[Site] = []
    uses = _uses(tree)

    def visit(
        node: ast.AST, scope: str, level: bool, statement: ast.stmt | None, top: ast.stmt | None
    ) -> None:
        skip = _skipped_fields(node)
        for name, value in ast.iter_fields(node):
            if name in skip:
                continue
            children = value if isinstance(value, list) else [value]
            for i, child in enumerate(children):
                if not isinstance(child, ast.AST):
                    continue
                index = i if isinstance(value, list) else None
                inner_scope, inner_level, inner_statement = scope, level, statement
                inner_top = child if isinstance(node, ast.Module) and isinstance(child, ast.stmt) else top
                if isinstance(child, ast.stmt):
                    inner_statement = child if isinstance(child, _SIMPLE_STATEMENTS) else None
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and name == "body":
                    inner_level = False  # defaults and decorators run at definition, the body when called
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    inner_scope = child.name if scope == "<module>" else f"{scope}.{child.name}"
                lineno = getattr(child, "lineno", None)
                if lineno is not None and not lines[lineno - 1].rstrip().endswith("# no mutate"):
                    if inner_level:  # runs at import: reached through what the statement defines
                        match = uses.get(id(inner_top), [])
                    elif isinstance(child, ast.stmt) or inner_statement is None:
                        end = lineno if isinstance(child, ast.stmt) and inner_statement is None else None
                        match = [(lineno, end or getattr(child, "end_lineno", None) or lineno)]
                    else:
                        match = [(inner_statement.lineno, inner_statement.end_lineno or lineno)]
                    for kind, new in _changes(child):
                        found.append(
                            Site(node, name, index, child, new, kind, inner_scope, inner_level, match)
                        )
                visit(child, inner_scope, inner_level, inner_statement, inner_top)

    visit(tree, "<module>", True, None, None)
    return found


def _uses(tree: ast.Module) -> dict[int, list[tuple[int, int]]]:
    """For each top-level statement (by id), the lines that use what it defines: where its names are read,
    and the bodies of the functions and classes it defines. A mutant in module-level code (a constant, a
    default, a decorator) runs against the tests that execute those lines."""
    reads: dict[str, list[tuple[int, int]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            reads.setdefault(node.id, []).append((node.lineno, node.lineno))
    found: dict[int, list[tuple[int, int]]] = {}
    for top in tree.body:
        names: list[str] = []
        spans: list[tuple[int, int]] = []
        if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(top.name)
            spans += [(b.lineno, b.end_lineno or b.lineno) for b in top.body]
        elif isinstance(top, ast.Assign | ast.AnnAssign):
            targets = top.targets if isinstance(top, ast.Assign) else [top.target]
            names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        found[id(top)] = spans + [span for name in names for span in reads.get(name, [])]
    return found


def _replace(site: Site, new: ast.AST) -> None:
    if site.index is None:
        setattr(site.parent, site.field, new)
    else:
        getattr(site.parent, site.field)[site.index] = new


def _offset(lines: list[str], lineno: int, col: int) -> int:
    """A character offset in the source from an ast position (col_offset counts UTF-8 bytes)."""
    line = lines[lineno - 1]
    return sum(len(x) for x in lines[: lineno - 1]) + len(line.encode()[:col].decode())


def _spliced(source: str, lines: list[str], site: Site) -> str:
    """The source with the node's text replaced: an expression in parentheses, a statement by its new text,
    padded with newlines so every other line keeps its number."""
    old = site.old
    start = _offset(lines, old.lineno, old.col_offset)  # type: ignore[attr-defined]
    end = _offset(lines, old.end_lineno, old.end_col_offset)  # type: ignore[attr-defined]
    text = ast.unparse(site.new).replace("\n", " ")
    pad = "\n" * (old.end_lineno - old.lineno)  # type: ignore[attr-defined]
    text = f"{text}{pad}" if isinstance(old, ast.stmt) else f"({text}{pad})"
    return source[:start] + text + source[end:]


def mutants(path: Path) -> list[Mutant]:
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    found: list[Mutant] = []
    seen: dict[str, int] = {}
    for site in sites(tree, lines):
        _replace(site, site.new)
        try:
            expected = ast.dump(tree)
            whole = None
            text = _spliced(source, lines, site)
            try:
                ok = ast.dump(ast.parse(text)) == expected
            except SyntaxError:
                ok = False
            if not ok:  # a position the splice cannot use (rare): the whole module unparsed, comments lost
                whole = ast.unparse(tree)
                assert ast.dump(ast.parse(whole)) == expected
            after = "pass" if isinstance(site.new, ast.Pass) else _shown(site, site.new)
        finally:
            _replace(site, site.old)
        before = _shown(site, site.old)
        key = f"{site.scope}: {before} -> {after}"
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key = f"{key} #{seen[key]}"
        found.append(
            Mutant(
                index=len(found),
                line=site.old.lineno,  # type: ignore[attr-defined]
                col=site.old.col_offset,  # type: ignore[attr-defined]
                kind=site.kind,
                scope=site.scope,
                before=before,
                after=after,
                key=key,
                module_level=site.module_level,
                match=site.match,
                source=whole or text,
            )
        )
    return found


def _shown(site: Site, node: ast.AST) -> str:
    """A changed number with its context: the dict entry or the short expression it is part of."""
    if isinstance(site.old, ast.Constant):
        parent = site.parent
        if isinstance(parent, ast.Dict) and site.index is not None and site.field == "values":
            key = parent.keys[site.index]
            return f"{_short(key) if key else '**'}: {_short(node)}"
        if isinstance(parent, ast.expr) and len(ast.unparse(parent)) <= 60:
            return _short(parent)
    return _short(node)


def _short(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 90 else text[:87] + "..."


# ---------------------------------------------------------------- which tests execute which line

_TRACER = """
import json, os, sys, threading, time

_TARGET = os.environ["MUTATE_TRACE_TARGET"]
_FILES = {_TARGET, os.path.realpath(_TARGET)}
_lines = set()


def _local(frame, event, arg):
    if event == "line":
        _lines.add(frame.f_lineno)
    return _local


def _global(frame, event, arg):
    if frame.f_code.co_filename in _FILES:
        _lines.add(frame.f_lineno)
        return _local
    return None


def start():
    _lines.clear()
    threading.settrace(_global)
    sys.settrace(_global)


def stop():
    sys.settrace(None)
    threading.settrace(None)
    return sorted(_lines)
"""

_SITECUSTOMIZE = """
import atexit, json, os
import _mutate_tracer

if os.environ.get("MUTATE_TRACE_TEST"):
    _mutate_tracer.start()

    def _write():
        lines = _mutate_tracer.stop()
        out = os.path.join(os.environ["MUTATE_TRACE_OUT"], f"child-{os.getpid()}.json")
        with open(out, "w") as f:
            json.dump({"test": os.environ["MUTATE_TRACE_TEST"], "lines": lines}, f)

    atexit.register(_write)
"""

_PLUGIN = """
import json, os, time
import pytest
import _mutate_tracer

_seen = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    os.environ["MUTATE_TRACE_TEST"] = item.nodeid
    began = time.perf_counter()
    _mutate_tracer.start()
    try:
        yield
    finally:
        lines = _mutate_tracer.stop()
        os.environ.pop("MUTATE_TRACE_TEST", None)
        record = _seen.setdefault(item.nodeid, {"lines": [], "seconds": 0.0, "passed": True})
        record["lines"] = lines
        record["seconds"] = time.perf_counter() - began


def pytest_runtest_logreport(report):
    if report.failed or (report.skipped and report.when == "call"):
        _seen.setdefault(report.nodeid, {"lines": [], "seconds": 0.0, "passed": True})["passed"] = False


def pytest_sessionfinish(session):
    with open(os.path.join(os.environ["MUTATE_TRACE_OUT"], "tests.json"), "w") as f:
        json.dump(_seen, f)
"""


@dataclass
class Coverage:
    lines: dict[str, set[int]]  # test id -> lines of the module it executes
    seconds: dict[str, float]
    failing: list[str]  # tests that fail (or skip) on the unmutated code: never used


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {**os.environ, **extra, "PYTHONDONTWRITEBYTECODE": "1"}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), *extra.get("PYTHONPATH", "").split(os.pathsep), os.environ.get("PYTHONPATH", "")]
    ).strip(os.pathsep)
    return env


def _pytest(args: list[str]) -> list[str]:
    # addopts emptied: a parallel (-n) or random order from the project's settings would defeat -x
    return [sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider", *args]


def trace(module: Path, tests: list[str]) -> Coverage:
    """One run of the tests with every line of the module they execute recorded, per test."""
    with tempfile.TemporaryDirectory(prefix="mutate-trace-") as tmp:
        tracer = Path(tmp)
        (tracer / "_mutate_tracer.py").write_text(_TRACER)
        (tracer / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        (tracer / "_mutate_plugin.py").write_text(_PLUGIN)
        env = _env({"PYTHONPATH": tmp, "MUTATE_TRACE_TARGET": str(module), "MUTATE_TRACE_OUT": tmp})
        print(f"tracing {len(tests)} test files over {module.name} ...", file=sys.stderr, flush=True)
        began = time.perf_counter()
        done = subprocess.run(
            _pytest(["-q", "-p", "_mutate_plugin", *tests]), cwd=ROOT, env=env, capture_output=True, text=True
        )
        if not (tracer / "tests.json").is_file():
            sys.exit(f"the traced run did not finish:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        raw = json.loads((tracer / "tests.json").read_text())
        lines = {test: set(r["lines"]) for test, r in raw.items()}
        for child in tracer.glob("child-*.json"):
            record = json.loads(child.read_text())
            lines.setdefault(record["test"], set()).update(record["lines"])
    failing = sorted(t for t, r in raw.items() if not r["passed"])
    print(
        f"traced {len(raw)} tests in {time.perf_counter() - began:.0f} s; {len(failing)} fail or skip "
        "on the unmutated code and are left out",
        file=sys.stderr,
    )
    return Coverage(
        {t: ls for t, ls in lines.items() if t not in failing},
        {t: r["seconds"] for t, r in raw.items()},
        failing,
    )


def traced(module: Path, tests: list[str]) -> Coverage:
    """trace(), kept in the temp folder under a hash of the module, the test list and every file in tests/:
    a second run over the same code and tests (another sample, the survivors again) reuses it."""
    digest = hashlib.sha256(module.read_bytes() + "\0".join(tests).encode())
    for path in sorted((ROOT / "tests").rglob("*.py")):
        digest.update(path.read_bytes())
    kept = Path(tempfile.gettempdir()) / "gpt2emb-mutate" / f"{module.stem}-{digest.hexdigest()[:16]}.json"
    if kept.is_file():
        raw = json.loads(kept.read_text())
        print(f"reusing the traced run in {kept}", file=sys.stderr)
        return Coverage({t: set(ls) for t, ls in raw["lines"].items()}, raw["seconds"], raw["failing"])
    cov = trace(module, tests)
    kept.parent.mkdir(exist_ok=True)
    lines = {t: sorted(ls) for t, ls in cov.lines.items()}
    kept.write_text(json.dumps({"lines": lines, "seconds": cov.seconds, "failing": cov.failing}))
    return cov


def tests_for(m: Mutant, cov: Coverage, new: str, new_first: bool) -> list[str]:
    """The tests that execute the mutant's lines (see `_uses` for module-level code), fastest first; the new
    tests (ids starting with `new`) after the others, so that a mutant they alone kill is one that survived
    before them (or first, with new_first: the quicker way to see what they kill)."""
    wanted = {n for lo, hi in m.match for n in range(lo, hi + 1)}
    if m.module_level and not wanted:  # nothing in the module uses what it defines by name
        chosen = [t for t, ls in cov.lines.items() if ls]
    else:
        chosen = [t for t, ls in cov.lines.items() if not ls.isdisjoint(wanted)]
    return sorted(chosen, key=lambda t: (t.startswith(new) != new_first, cov.seconds.get(t, 0.0)))


# ---------------------------------------------------------------- running a mutant


def _drop_bytecode(module: Path) -> None:
    for pyc in (module.parent / "__pycache__").glob(f"{module.stem}.*.pyc"):
        pyc.unlink(missing_ok=True)


def run(
    m: Mutant, module: Path, original: str, tests: list[str], timeout: float | None, cov: Coverage
) -> None:
    m.tests = tests
    if not m.tests:
        m.status = "survived"  # no test executes it
        return
    limit = timeout or 30 + 3 * sum(cov.seconds.get(t, 1.0) for t in m.tests)
    module.write_text(m.source, encoding="utf-8")
    _drop_bytecode(module)
    began = time.perf_counter()
    proc = subprocess.Popen(
        _pytest(["-x", "-q", "-W", "ignore::pytest.PytestUnraisableExceptionWarning", *m.tests]),
        cwd=ROOT,
        env=_env({}),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: a hung mutant is killed with its children
    )
    try:
        out, _ = proc.communicate(timeout=limit)
        if proc.returncode == 0:
            m.status = "survived"
        elif proc.returncode == 5:
            sys.exit(f"pytest collected none of {m.tests[:3]}...: is the coverage map stale?")
        else:
            m.status = "killed"
            failed = re.search(r"^(?:FAILED|ERROR) (\S+)", out, re.MULTILINE)
            m.failed = failed.group(1) if failed else f"pytest exit {proc.returncode}"
    except subprocess.TimeoutExpired:
        m.status = "timeout"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        module.write_text(original, encoding="utf-8")
        _drop_bytecode(module)
        m.seconds = time.perf_counter() - began


# ---------------------------------------------------------------- equivalent mutants, the report


PACKAGE = ROOT / "src" / "gpt2emb"
# packages whose modules share names with core/'s (plot/neighbors.py, output/pages/lab.py)
BY_PATH = ("plot", "output")


def key_of(module: Path) -> str:
    """The name DEFAULT_TESTS and the equivalents know a module by: its file name, or for a module of plot/
    or output/ its path in the package (output/pages/lab.py is not core/lab.py)."""
    try:
        inside = module.resolve().relative_to(PACKAGE)
    except ValueError:
        return module.name
    return inside.as_posix() if inside.parts[0] in BY_PATH else module.name


def units_file(module: Path) -> str:
    """Where a module's own tests live: src/gpt2emb/P/X.py in tests/units/P/test_X.py, and a package's
    __init__.py in tests/units/P/test_init.py."""
    try:
        inside = module.resolve().relative_to(PACKAGE)
    except ValueError:
        inside = Path(module.name)
    name = "init" if inside.stem == "__init__" else inside.stem
    return (Path("tests/units") / inside.parent / f"test_{name}.py").as_posix()


def module_tests(module: Path) -> list[str]:
    """A module's tests: its list in DEFAULT_TESTS, or else the rule a new module follows, so that it needs
    no list. The rule: a module's own tests are its units file. A command's core (core/STEM.py) is also
    tested by its command's file, tests/commands/test_STEM.py."""
    listed = DEFAULT_TESTS.get(key_of(module))
    if listed:
        return listed
    own = [units_file(module)]
    if module.parent.name == "core":
        own.insert(0, f"tests/commands/test_{module.stem}.py")
    return [t for t in own if (ROOT / t).is_file()]


def read_equivalent(path: Path = EQUIVALENT) -> dict[tuple[str, str], str]:
    """(module, mutant key) -> why, from lines `module:line | key | why` (the line is for the reader: the
    key survives edits above it)."""
    found: dict[tuple[str, str], str] = {}
    if not path.is_file():
        return found
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        where, rest = line.split(" | ", 1)
        key, _, why = rest.rpartition(" | ")
        if not key or not why:
            sys.exit(f"{path}:{n}: expected `module:line | key | why`")
        found[(where.split(":")[0], key)] = why
    return found


def summary(ms: list[Mutant], new: str | None) -> dict[str, Any]:
    """The counts and scores; with `new` (the new tests ran last), also the scores without them: a mutant
    only a new test killed survived the others."""
    count = {s: sum(m.status == s for m in ms) for s in ("killed", "timeout", "survived", "equivalent")}
    killed = count["killed"] + count["timeout"]
    total = len(ms)
    non_equivalent = total - count["equivalent"]
    found: dict[str, Any] = {
        **count,
        "total": total,
        "score": killed / total if total else 1.0,
        "non_equivalent": non_equivalent,
        "score_non_equivalent": killed / non_equivalent if non_equivalent else 1.0,
    }
    if new is not None:
        before = killed - sum(m.status == "killed" and (m.failed or "").startswith(new) for m in ms)
        found["before"] = {
            "killed": before,
            "score": before / total if total else 1.0,
            "score_non_equivalent": before / non_equivalent if non_equivalent else 1.0,
        }
    return found


def report(module: Path, ms: list[Mutant], new: str | None, stream: Any = sys.stdout) -> None:
    name = key_of(module)
    for m in ms:
        if m.status in ("survived", "equivalent"):
            note = "  (listed as equivalent)" if m.status == "equivalent" else ""
            runs = f"{len(m.tests)} tests" if m.tests else "no test executes it"
            print(f"SURVIVED {name}:{m.line}  {m.kind}: {m.key}  [{runs}]{note}", file=stream)
        elif new is not None and m.status == "killed" and (m.failed or "").startswith(new):
            print(f"KILLED BY NEW {name}:{m.line}  {m.kind}: {m.key}  <- {m.failed}", file=stream)
    s = summary(ms, new)
    print(file=stream)
    if "before" in s:
        b = s["before"]
        print(
            f"without the new tests ({new}*): {b['killed']}/{s['total']} = {b['score']:.1%} killed, "
            f"{b['killed']}/{s['non_equivalent']} = {b['score_non_equivalent']:.1%} of the non-equivalent",
            file=stream,
        )
    print(
        "| module | mutants | killed | timeout | survived | equivalent | score | non-equivalent |",
        file=stream,
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |", file=stream)
    print(
        f"| {name} | {s['total']} | {s['killed']} | {s['timeout']} | {s['survived']} | {s['equivalent']} "
        f"| {s['score']:.1%} | {s['killed'] + s['timeout']}/{s['non_equivalent']} = "
        f"{s['score_non_equivalent']:.1%} |",
        file=stream,
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--module", required=True, type=Path, help="e.g. src/gpt2emb/ops.py")
    p.add_argument("--tests", nargs="+", help="test files or ids to trace (default: DEFAULT_TESTS)")
    p.add_argument("--sample", type=int, help="run a random sample of this many mutants")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only-lines", help="A-B: only the mutants on these lines")
    p.add_argument("--list", action="store_true", help="list the mutants and run nothing")
    p.add_argument("--timeout", type=float, help="seconds per mutant (default: 30 + 3x its tests' time)")
    p.add_argument("--json", type=Path, help="write every mutant's result here")
    p.add_argument("--new-tests", default="tests/units/", help="id prefix of the new tests (run last)")
    p.add_argument("--new-first", action="store_true", help="run the new tests first (no before score)")
    p.add_argument(
        "--survivors-of",
        type=Path,
        help="run only the survivors of this earlier --json; report (and write) it with their new results",
    )
    args = p.parse_args(argv)

    module = (ROOT / args.module).resolve()
    if not module.is_file() or not module.is_relative_to(ROOT / "src"):
        p.error(f"{module} is not a module of {ROOT / 'src'}, whose tests this script runs")
    ms = mutants(module)
    if args.only_lines:
        lo, _, hi = args.only_lines.partition("-")
        ms = [m for m in ms if int(lo) <= m.line <= int(hi or lo)]
    earlier: list[dict[str, Any]] = []
    if args.survivors_of:
        earlier = json.loads(args.survivors_of.read_text(encoding="utf-8"))["mutants"]
        keys = {m["key"] for m in earlier if m["status"] in ("survived", "equivalent")}
        ms = [m for m in ms if m.key in keys]
    if args.sample is not None and args.sample < len(ms):
        ms = sorted(random.Random(args.seed).sample(ms, args.sample), key=lambda m: m.index)
    if args.list:
        for m in ms:
            print(f"{m.index:4d} {module.name}:{m.line}:{m.col}  {m.kind}: {m.key}")
        print(f"{len(ms)} mutants", file=sys.stderr)
        return 0

    name = key_of(module)
    tests = args.tests or module_tests(module)
    if not tests:
        p.error(f"no default tests for {name}: name them with --tests")
    tests = [t for t in tests if "::" in t or (ROOT / t).exists()]
    original = module.read_text(encoding="utf-8")
    equivalent = read_equivalent()
    interrupted = False
    try:
        cov = traced(module, tests)
        began = time.perf_counter()
        for n, m in enumerate(ms, 1):
            run(m, module, original, tests_for(m, cov, args.new_tests, args.new_first), args.timeout, cov)
            if m.status == "survived" and (name, m.key) in equivalent:
                m.status = "equivalent"
            print(
                f"[{n}/{len(ms)} {time.perf_counter() - began:.0f}s] {m.status:9} {name}:{m.line} "
                f"{m.kind}: {m.key}" + (f"  <- {m.failed}" if m.failed else ""),
                file=sys.stderr,
                flush=True,
            )
    except KeyboardInterrupt:
        interrupted = True
        print("interrupted: the report covers the mutants run so far", file=sys.stderr)
    finally:
        module.write_text(original, encoding="utf-8")
        _drop_bytecode(module)
    done = [m for m in ms if m.status != "not run"]
    if earlier:  # the earlier run, its survivors' results replaced by this run's
        merged = {e["key"]: Mutant(**{**e, "source": ""}) for e in earlier}
        merged.update((m.key, m) for m in done)
        done = list(merged.values())
        for m in done:
            if m.status in ("survived", "equivalent"):
                m.status = "equivalent" if (name, m.key) in equivalent else "survived"
    for m in done:
        if m.status == "killed" and (name, m.key) in equivalent:
            print(f"note: {m.key} is listed as equivalent but was killed", file=sys.stderr)
    new = None if args.new_first and not earlier else args.new_tests
    report(module, done, new)
    if args.json:
        doc = {
            "module": str(module.relative_to(ROOT)),
            "tests": tests,
            "sampled": args.sample,
            "seed": args.seed,
            "only_lines": args.only_lines,
            "interrupted": interrupted,
            "summary": summary(done, new),
            "mutants": [{k: v for k, v in asdict(m).items() if k != "source"} for m in done],
        }
        args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 130 if interrupted else 0


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM too restores the module


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    raise SystemExit(main())
