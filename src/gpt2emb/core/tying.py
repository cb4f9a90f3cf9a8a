"""tying: whether the output layer reuses wte; --compare and --grad."""

from __future__ import annotations

import numpy as np

from gpt2emb import families, measures, ops, registry
from gpt2emb.core.open import refuse_static
from gpt2emb.core.whole import encode, open_for_whole, weights_folder
from gpt2emb.errors import (
    BadModel,
    UsageError,
    option,
    spelt,
)
from gpt2emb.quoting import quote
from gpt2emb.registry import ModelRef
from gpt2emb.report import QuietReporter, Reporter
from gpt2emb.results.tying import Check, Comparison, GradientResult, PathGradient, TyingResult
from gpt2emb.store import build, checkpoint, checkpoint_files, revisions, table_rows, whole_weights
from gpt2emb.store.checkpoint import CheckpointInfo


def tying(
    model: str,
    load_model: bool = False,
    revision: str | None = None,
    grad: str | None = None,
    reporter: Reporter | None = None,
    compare: bool = False,
) -> TyingResult:
    """Whether lm_head reuses wte: config, a model on the meta device, the header; load_model adds data_ptr()
    on the loaded model, grad the gradient of the language-model loss on a text by each of wte's two uses,
    compare how far an untied output layer's rows are from wte's."""
    check_grad(grad)
    ref = registry.resolve(model, revision)
    refuse_static(ref, "it has no output layer that could reuse its rows")
    return tying_of(ref, model, load_model, grad, reporter, compare)


def check_grad(grad: str | None) -> None:
    if grad is not None and not grad:
        raise UsageError(
            f"{option('grad')} needs a text of at least two tokens, as in: "
            + spelt("tying --grad 'the cat sat'", "tying(grad='the cat sat')")
        )


def tying_of(
    ref: ModelRef, model: str, load_model: bool, grad: str | None, reporter: Reporter | None, compare: bool
) -> TyingResult:
    """tying for a model resolved (`model`: as it was named, for the messages)."""
    from gpt2emb import heavy

    reporter = reporter or QuietReporter()
    info = revisions.checkpoint_info(ref)
    if load_model:  # where its weights cannot be fetched, told now, not after torch built the meta model
        whole_weights.absent_weights(ref, info)
    family = families.of_config(info.config, ref.name)
    shape = family.shape(info.config, ref.name)
    tie = family.tied(info.config)
    saved = shape.vocab_size * shape.d_model
    checks = [Check("config", tie, f"config.json: tie_word_embeddings = {str(tie).lower()}")]
    # read_info counts the blocks a safetensors header names. A pickle's names are read here, before the
    # meta model is built, since that builds any number of blocks, however slowly. The meta model's tensors
    # are then checked against the checkpoint's shapes. A Hub pickle's are known only once it is loaded.
    label, file = checkpoint.config_label(ref), info.weights_file
    shapes = {k: t.shape for k, t in info.tensors.items()} if file != checkpoint_files.PICKLE else None
    if ref.folder is not None and file == checkpoint_files.PICKLE:
        shapes = heavy.check_blocks(ref.folder, shape.n_layer, label)
    weights = str(ref.folder / file) if ref.folder is not None else f"{ref.repo}'s {file}"
    same, n_params = heavy.meta_model_ties(info.config, family.classes, label, shapes, weights)
    output, table = family.lm_names
    checks.append(
        Check(
            "meta_model",
            same,
            f"{family.classes[2]} built on the meta device ({n_params:,} parameters, no weights): "
            f"{output} {'is' if same else 'is not'} {table}",
        )
    )
    own, stored = checkpoint.output_key(info, family), family.output_names[0]
    if info.tensors:
        head = stored.split(".")[0] + "."  # a masked language model's head: cls., lm_head., vocab_projector.
        if own:
            found = f"a separate {own}"
        elif not family.causal and not any(k.startswith(head) for k in info.tensors):
            found = (
                f"no {head}* tensor: a {family.classes[1]} without the language-model head, which "
                f"{family.classes[2]} ties to wte and whose other layers it starts at random"
            )
        else:
            found = f"no {stored}: the output layer is read from wte"
        checks.append(
            Check(
                "checkpoint",
                own is None,
                f"{info.weights_file} stores {len(info.tensors):,} tensors and {found}",
            )
        )
    if grad is not None and not family.causal:
        raise UsageError(
            f"{ref.name} is a masked language model ({family.title}), not a next-token one: "
            f"{option('grad')} takes the gradient of the next-token loss, which it was not trained on; use a "
            "next-token model (gpt2, GPT-Neo, a tied rotary model)"
        )
    if grad is not None and not (tie and same):
        raise UsageError(untied_grad(ref.name, model, comparable=bool(info.tensors) and own is not None))
    if compare and not info.tensors:
        raise UsageError(
            f"{ref.name} stores its weights in {info.weights_file}: {option('compare')} reads the output "
            "layer by byte ranges of a safetensors checkpoint; use a model saved as safetensors"
        )
    if compare and own is None:
        raise UsageError(
            f"{ref.name} stores no {stored} of its own: its output layer is wte itself, so there is nothing "
            f"to compare; {option('compare')} is for an untied model"
        )
    gradient = None
    if grad is not None:
        gradient = _gradient(ref, info, grad, reporter)
    comparison = _compare_output_layer(ref, info, own, reporter) if compare and own is not None else None
    if load_model:
        equal, pa, pb = heavy.loaded_model_ties(
            weights_folder(ref, info, reporter), family.classes, checkpoint.config_label(ref)
        )
        checks.append(
            Check(
                "loaded_model",
                equal,
                f"from_pretrained: {output}.data_ptr() = {pa:#x}, {table}.data_ptr() = {pb:#x}",
            )
        )
    tied = all(c.passed for c in checks)
    return TyingResult(ref.name, tied, saved if tied else 0, tuple(checks), gradient, comparison)


def untied_grad(name: str, model: str, comparable: bool) -> str:
    """Why --grad refuses an untied model, and what to use instead (comparable: --compare can read its
    output layer)."""
    m = f" -m {model}"
    compare = spelt(f"gpt2emb tying{m} --compare", "tying(compare=True)")
    checks = spelt(f"gpt2emb tying{m}", "tying()")
    context = spelt(f"gpt2emb context WORD SENTENCE SENTENCE{m}", "context(word, sentences)")
    instead = f"to compare its output layer with wte: {compare}" if comparable else f"its checks: {checks}"
    return (
        f"{name} is not tied: its output layer has a matrix of its own, so no gradient of it reaches wte, "
        f"and {option('grad')} needs a tied model (gpt2, say); {instead}; to follow a word through its "
        f"layers: {context}"
    )


COMPARE_ALL_BYTES = 1_000_000_000  # an output layer up to 1 GB is compared whole; a larger one is sampled


COMPARE_SAMPLE, COMPARE_RUN, COMPARE_SEED = 4096, 64, 0  # rows of the sample, in runs of 64, seeded


def _compare_output_layer(ref: ModelRef, info: CheckpointInfo, key: str, reporter: Reporter) -> Comparison:
    """An untied output layer's rows, fetched by byte ranges (all, or a seeded sample of a large one), each
    against its own row of wte and against a seeded random other row of wte."""
    m = build.open_model(ref, reporter, info.commit)
    t = info.tensors[key]
    if t.shape != m.wte.shape:
        raise BadModel(
            f"{ref.name}'s {key} is {list(t.shape)} and its token table {list(m.wte.shape)}: their rows do "
            "not pair up, so they cannot be compared"
        )
    n = t.shape[0]
    sampled = t.end - t.start > COMPARE_ALL_BYTES and n > COMPARE_SAMPLE
    runs = measures.sample_runs(n, COMPARE_SAMPLE, COMPARE_RUN, COMPARE_SEED) if sampled else [range(n)]
    ids = np.concatenate([np.arange(r.start, r.stop) for r in runs])
    others = measures.other_rows(ids, n, COMPARE_SEED)
    matching, random = np.empty(len(ids)), np.empty(len(ids))
    at = 0
    for rows, block in table_rows.read_rows(ref, info, key, runs, reporter):
        mine = slice(at, at + len(rows))
        matching[mine] = measures.paired_cosines(block, m.wte[rows.start : rows.stop])
        random[mine] = measures.paired_cosines(block, m.wte[others[mine]])
        at += len(rows)
    m.check_rows(np.union1d(ids, others))
    return Comparison(
        len(ids),
        sampled,
        measures.mean_defined(matching),
        measures.mean_defined(random),
        n,
        key,
        (t.end - t.start) // n * len(ids),
    )


def _gradient(ref: ModelRef, info: CheckpointInfo, text: str, reporter: Reporter) -> GradientResult:
    from gpt2emb import heavy

    m, vocab = open_for_whole(ref, info, reporter)
    tokens = encode(vocab, text, m, spelt(f"--grad {quote(text, 40)}", f"grad={quote(text, 40)}"))
    if len(tokens) < 2:
        raise UsageError(
            f"{spelt(f'--grad {quote(text)}', f'grad={quote(text)}')} is {len(tokens)} token: the loss "
            "predicts each next token from the ones before, so the text needs at least two; give a longer "
            "text"
        )
    ids = tuple(t.id for t in tokens)
    loss, by_input, by_output, tied = heavy.lm_gradients(
        weights_folder(ref, info, reporter), m.family.classes, ids, checkpoint.config_label(ref)
    )

    def touched(g: np.ndarray) -> np.ndarray:
        return np.flatnonzero(np.any(g != 0, axis=1))

    rows_in, rows_out = touched(by_input), touched(by_output)
    shared = np.intersect1d(rows_in, rows_out)
    tied_norm = ops.norm(tied.ravel())
    difference = ops.norm((by_input.astype(np.float64) + by_output - tied).ravel())
    relative = difference / tied_norm if tied_norm > 0 else (0.0 if difference == 0 else None)
    notes = []
    if tied_norm == 0:
        notes.append(
            "the gradient is all zeros: the loss does not change with wte at all here (weights of zeros, as "
            "in a synthetic checkpoint, give every token the same score whatever its row)"
        )
    elif len(rows_in) < len(set(ids)):
        notes.append(
            f"the input path touches {len(rows_in):,} of the text's {len(set(ids)):,} distinct tokens: the "
            "last position predicts nothing inside the text, so its token's row gets nothing by that path "
            "unless it occurs earlier"
        )
    return GradientResult(
        text,
        loss,
        PathGradient(ops.norm(by_input.ravel()), len(rows_in)),
        PathGradient(ops.norm(by_output.ravel()), len(rows_out)),
        ops.cosine(by_input[shared].ravel(), by_output[shared].ravel()) if len(shared) else None,
        difference <= 1e-5 * tied_norm,
        tokens,
        len(shared),
        tied_norm,
        relative,
        tuple(notes),
        len(m.wte),
    )
