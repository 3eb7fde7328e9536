"""The numeric witness for a check: errors of the seq outputs rebuilt from the rank outputs,
and the derived relations the numbers refute.

Runs :func:`analyzer.witness.simulate.witness` with the check's input relations, on
:data:`SEEDS` seeds (``seed``, ``seed + 1``, ...: each draws other random inputs, with ignore
indices and vocab-boundary ids, :mod:`analyzer.witness.inputs`). An output that the rules
explain is rebuilt with the relation found; an output they do not explain is rebuilt from the
rank outputs at the same position with the layout their shapes say
(:func:`output_layout_from_shapes`: ``Replicate`` when the shapes are the seq output's, else
``Shard`` on the divided axis; what a user of the distributed program would read), so a bug
report carries the size of the error it causes.

The witness can veto: an output relation, or an intermediate ``Holds`` relation, whose error
exceeds :func:`tolerance` is a :class:`~analyzer.model.Contradiction` (the rules derived
something false), and the check's verdict becomes ``inconsistent``. A witness that cannot run
(an op the reference evaluator lacks, a collective mismatch, an index out of range) leaves the
verdict as it was and says why (``WitnessRun.skipped``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx

from analyzer import progress
from analyzer.inputs.infer import _layout_from_shapes
from analyzer.layout import REPLICATE, Layout
from analyzer.model import CheckInput, Contradiction, Derivation, OutputError, WitnessRun
from analyzer.verdict.build import Verdict
from analyzer.witness.layouts import BLOCK, relation_error
from analyzer.witness.simulate import SimulationError, run_ranks

__all__ = [
    "ATOL",
    "RTOL",
    "SEEDS",
    "check_intermediates",
    "confirm_relations",
    "output_layout_from_shapes",
    "record_outputs",
    "run_witness",
    "tolerance",
    "witness_failure",
]

#: seeds the witness runs with by default (``seed``, ``seed + 1``, ...)
SEEDS = 3
#: relative tolerance: float32 sums over a few thousand terms in another order (a rank's
#: partial sums added by an all-reduce) differ by well under 1e-5 of the largest magnitude
RTOL = 1e-4
#: absolute tolerance for values near zero
ATOL = 1e-5


def tolerance(scale: float) -> float:
    """The largest error rounding explains for a value whose largest finite magnitude is
    ``scale``: ``ATOL + RTOL * scale``."""
    return ATOL + RTOL * scale


def _scale(value) -> float:
    """Largest finite ``|x|`` of an array (0 when there is none); scanned in blocks, so a large
    float16 value does not take a float64 copy of itself."""
    try:
        arr = np.asarray(value)
        flat = arr.reshape(-1)
        flat[:1].astype(np.float64)
    except (TypeError, ValueError):
        return 0.0
    worst = 0.0
    for start in range(0, flat.size, BLOCK):
        block = flat[start : start + BLOCK].astype(np.float64)
        finite = np.abs(block[np.isfinite(block)])
        if finite.size:
            worst = max(worst, float(finite.max()))
    return worst


def witness_failure(exc: BaseException) -> str | None:
    """One line saying why the witness could not run, for the exceptions a simulation raises
    on graphs it cannot run; None for any other exception (a bug of ours: re-raised)."""
    if isinstance(exc, SimulationError):
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, MemoryError):
        return "the graphs' values do not fit in memory"
    if isinstance(exc, (onnx.checker.ValidationError, ValueError, KeyError, RecursionError)):
        first = str(exc).splitlines()[0] if str(exc) else ""
        return f"the graphs cannot be run ({type(exc).__name__}: {first})"
    return None


def run_witness(
    inp: CheckInput,
    verdict: Verdict,
    deriv: Derivation | None = None,
    *,
    seed: int = 0,
    seeds: int = SEEDS,
    intermediates: bool = True,
) -> WitnessRun:
    """Run the numeric witness on a check (see module docstring).

    Args:
        inp: the check's inputs.
        verdict: its verdict (the output relations are checked).
        deriv: its derivation; with ``intermediates``, every ``Holds`` relation the rules derived
            is checked on the numbers too (:func:`confirm_relations`).
        seed: the first seed.
        seeds: how many seeds.
        intermediates: also check the derived intermediate relations.

    Returns:
        The :class:`~analyzer.model.WitnessRun`; never raises for graphs it cannot run
        (``skipped`` says why).
    """
    progress.stage("witness")
    run = WitnessRun(seeds=list(range(seed, seed + seeds)))
    fed, aliases = _fed_inputs(inp)
    wanted: dict[str, tuple[Layout, list[str], bool]] = {}
    for pos, out in enumerate(verdict.outputs):
        if out.layout is not None and all(out.rank_values):
            wanted[out.name] = (out.layout, list(out.rank_values), True)
        else:  # no relation: compare under the layout the output shapes say (Replicate if equal)
            layout = output_layout_from_shapes(inp.seq, inp.ranks, pos)
            wanted[out.name] = (layout, [m.graph.output[pos].name for m in inp.ranks], False)
    outputs = {o.name for m in inp.ranks for o in m.graph.output}
    keep = any(n not in outputs for _, names, _ in wanted.values() for n in names)

    def one_seed(s: int) -> dict[str, tuple[float, float]]:
        sim = run_ranks(inp.seq, inp.ranks, fed, seed=s, keep_intermediates=keep, aliases=aliases,
                        mesh_axis=inp.mesh_axis)
        errors = {}
        for name, (layout, names, _) in wanted.items():
            if name not in sim.seq:
                raise SimulationError(f"seq: no output named {name!r}")
            errors[name] = (relation_error(layout, sim.seq[name], sim.pieces(names)), _scale(sim.seq[name]))
        return errors

    derived = {name: (str(layout), names) for name, (layout, names, ok) in wanted.items() if ok}
    record_outputs(run, one_seed, derived, _upstream(inp))
    if run.contradictions:
        _recheck_outputs(run, inp, {name: layout for name, (layout, _, _) in wanted.items()})
    if intermediates and deriv is not None and not run.skipped:
        check_intermediates(run, inp, deriv)
    return run


def _recheck_outputs(run: WitnessRun, inp: CheckInput, layouts: dict[str, Layout]) -> None:
    """Re-check each output contradiction of ``run`` in float64 on its seed (as
    :func:`confirm_relations` does for intermediate ones): one within the tolerance there goes
    (``run.rechecked``), one beyond keeps its float64 error; the float64 error of every
    re-checked output is recorded on its :class:`~analyzer.model.OutputError`."""
    kept = []
    for c in run.contradictions:
        if c.kind != "output":
            kept.append(c)
            continue
        entry = (c.value, c.relation, c.rank_values, c.error, c.tolerance,
                 lambda sim, c=c: _relation_error(sim, c.value, layouts[c.value], c.rank_values))
        notes: dict = {}
        survivors = _recheck(inp, [entry], c.seed, lambda _s, t=c.tolerance: t, notes)
        err64 = notes.get("float64", {}).get((c.value, c.relation, tuple(c.rank_values)))
        out = run.outputs.get(c.value)
        if survivors:
            c.float64_error = err64
            kept.append(c)
        else:
            run.rechecked += 1
        if out is not None and err64 is not None:
            out.float64_error = err64
    run.contradictions[:] = kept


def record_outputs(
    run: WitnessRun,
    one_seed: Callable[[int], dict[str, tuple[float, float]]],
    derived: dict[str, tuple[str, list[str]]],
    upstream: Callable[[str], list[str]],
) -> None:
    """Run ``one_seed(s)`` (``{output: (max abs error, largest finite |seq value|)}``) for every
    seed of ``run`` and record the outputs' errors; an output in ``derived`` (``{output:
    (relation text, rank values)}``, the relations the rules derived) whose error exceeds the
    tolerance is a contradiction. A simulation that cannot run sets ``run.skipped``."""
    try:
        for s in run.seeds:
            for name, (err, scale) in one_seed(s).items():
                old = run.outputs.get(name)
                if old is None or not err <= old.error:
                    run.outputs[name] = OutputError(err, max(scale, old.scale if old else 0.0), 0.0, s)
                else:
                    old.scale = max(old.scale, scale)
    except Exception as exc:  # noqa: BLE001 - sorted by witness_failure, others re-raised
        reason = witness_failure(exc)
        if reason is None:
            raise
        run.outputs.clear()
        run.skipped = reason
        return
    for name, out in run.outputs.items():
        out.tolerance = tolerance(out.scale)
        if name in derived and not out.error <= out.tolerance:
            relation, names = derived[name]
            run.contradictions.append(
                Contradiction("output", name, relation, names, out.error, out.tolerance, out.seed, upstream(name))
            )


def check_intermediates(run: WitnessRun, inp: CheckInput, deriv: Derivation) -> None:
    """Check the intermediate relations of one derivation on every seed of ``run``
    (:func:`confirm_relations` with ``sound_only``); each refuted one is a contradiction (of kind
    ``input`` when the value has an input relation: a weight whose stored values do not fit its
    inferred relation, a spec's relation of an intermediate value). A
    simulation that cannot run sets ``run.intermediates_skipped``."""
    upstream = _upstream(inp)
    declared = {rel.seq_value for rel in inp.relations}
    seen = {(c.value, c.relation) for c in run.contradictions}
    try:
        for s in run.seeds:
            notes: dict = {}
            checked, refuted = confirm_relations(inp, deriv.derived, deriv.decls, seed=s, tol=tolerance,
                                                 sound_only=True, notes=notes)
            run.intermediates += checked
            run.rechecked += notes.get("rechecked", 0)
            wide = notes.get("float64", {})
            for value, relation, names, err, tol in refuted:
                if (value, relation) not in seen and value not in run.outputs:
                    seen.add((value, relation))
                    kind = "input" if value in declared else "intermediate"
                    run.contradictions.append(Contradiction(kind, value, relation, names, err, tol, s, upstream(value),
                                                            float64_error=wide.get((value, relation, tuple(names)))))
    except Exception as exc:  # noqa: BLE001 - as in record_outputs
        reason = witness_failure(exc)
        if reason is None:
            raise
        run.intermediates_skipped = reason


def _upstream(inp: CheckInput) -> Callable[[str], list[str]]:
    """``value -> the input relations upstream of it in the seq graph`` (``name = layout [established]``),
    for the values of the given graph and of its canonical form."""
    rels: dict[str, list] = {}
    for rel in inp.relations:
        rels.setdefault(rel.seq_value, []).append(rel)
    graphs = [inp.seq.graph]

    def inputs_of(value: str) -> list[str]:
        if inp.canonical_seq is not None and inp.canonical_seq.graph not in graphs:
            graphs.append(inp.canonical_seq.graph)
        found: set[str] = set()
        for graph in graphs:
            producer = {o: node for node in graph.node for o in node.output}
            if value not in producer and value not in rels:
                continue
            todo, seen = [value], set()
            while todo:
                v = todo.pop()
                if v in seen:
                    continue
                seen.add(v)
                if v in rels:
                    found.add(v)
                node = producer.get(v)
                if node is not None:
                    todo.extend(node.input)
        return [f"{name} = {rel.layout} [{rel.established}]" for name in sorted(found) for rel in rels[name]]

    return inputs_of


def _fed_inputs(inp: CheckInput) -> tuple[dict[str, Layout], dict[str, tuple[str, Layout]]]:
    """The layouts of the fed inputs named alike on every side, and the rank inputs named
    otherwise (a spec's ``micro_batches``: one name per micro-batch, the same on every rank)."""
    init = {i.name for i in inp.seq.graph.initializer}
    fed: dict[str, Layout] = {}
    aliases: dict[str, tuple[str, Layout]] = {}
    for rel in inp.relations:
        if rel.seq_value in init:
            continue
        if all(v == rel.seq_value for v in rel.rank_values):
            fed[rel.seq_value] = rel.layout
        elif rel.layout.micro is not None and len(set(rel.rank_values)) == 1:
            aliases[rel.rank_values[0]] = (rel.seq_value, rel.layout)
    return fed, aliases


def output_layout_from_shapes(seq: onnx.ModelProto, ranks: list[onnx.ModelProto], pos: int) -> Layout:
    """The layout the shapes of output ``pos`` say (as for inferred input relations):
    ``Shard(a)`` when the ranks' outputs have the seq output's shape with axis a divided by N,
    else ``Replicate``."""
    shapes = [_output_dims(m, pos) for m in ranks]
    return _layout_from_shapes(_output_dims(seq, pos), shapes, len(ranks)) or REPLICATE


def _output_dims(model: onnx.ModelProto, pos: int) -> tuple:
    """Static shape of output ``pos`` (symbolic or unknown dims as strings)."""
    dims = model.graph.output[pos].type.tensor_type.shape.dim
    return tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in dims)


def confirm_relations(
    inp: CheckInput,
    derived: dict[str, list[tuple]],
    decls: dict,
    *,
    seed: int = 0,
    tol: float | Callable[[float], float] = tolerance,
    sound_only: bool = False,
    float64: bool = True,
    notes: dict | None = None,
) -> tuple[int, list]:
    """Confirm on numbers every relation the rules derived (``Holds`` with its ``Piece`` rows).

    Every rank alternative is checked: for each holding relation, the first piece of every
    rank is taken, and each other piece of a rank is swapped in once. Pieces of a ``Partial``
    relation are not each a function of the seq value (two ways to split a sum into terms do
    not mix), so with ``sound_only`` a ``Partial`` relation with more than one piece on some
    rank is not checked, and the refutations list the rank values.

    Args:
        inp: the check's inputs.
        derived: derived relations (``Piece``, ``Holds``) as tuples.
        decls: declarations for their column order.
        seed: random seed of the simulation.
        tol: largest accepted max abs error, or a function of the seq value's largest finite
            magnitude giving it (default :func:`tolerance`, the witness's: float rounding grows
            with the magnitude, a float32 sum of values near 8192 is off by multiples of 2**-10).
        sound_only: check only what a correct derivation must satisfy (see above).
        float64: re-check each refutation in float64 before it counts
            (:mod:`analyzer.witness.recheck`: the parts of the graphs it needs, on the same
            inputs, with the same tolerance); a relation within the tolerance there is not
            refuted (the error was rounding). A re-run that cannot run leaves the refutations.
        notes: when given, receives ``rechecked`` (refutations the float64 re-run put within
            the tolerance), ``float64`` (``{(seq value, layout text, rank values): float64 error}``
            of every refutation re-run, rank values as in the refutations) and
            ``recheck_skipped`` (why the re-run could not run).

    Returns:
        (number of relations checked, refuted ones): ``(seq value, layout text, error)`` each,
        or with ``sound_only`` ``(seq value, layout text, [rank value per rank], error, tolerance)``.
    """
    from collections import defaultdict

    from analyzer.verdict.build import layout_of

    cols = list(decls["Piece"].column_names)
    holds = {tuple(row) for row in derived.get("Holds", [])}
    pieces: dict[tuple, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for row in derived.get("Piece", []):
        p = dict(zip(cols, row))
        key = (p["s"], p["kind"], p["axis"], p["param"])
        if key in holds:
            pieces[key][p["r"]].append(p["d"])
    fed, aliases = _fed_inputs(inp)
    sim = run_ranks(
        inp.canonical_seq or inp.seq,
        inp.canonical_ranks or inp.ranks,
        fed,
        seed=seed,
        keep_intermediates=True,
        aliases=aliases,
        mesh_axis=inp.mesh_axis,
    )
    limit = tol if callable(tol) else (lambda _scale, t=tol: t)
    checks = []
    for (s, kind, axis, param), per_rank in pieces.items():
        layout = layout_of(kind, axis, param)
        if layout.kind == "Partial" and layout.micro is not None:
            continue  # checked with the other micro-batches of the same value, below
        counts = [len(per_rank.get(r, ())) for r in range(inp.world_size)]
        if sound_only and ((layout.kind == "Partial" and max(counts) > 1) or min(counts) == 0):
            continue
        base = [sorted(per_rank[r])[0] if per_rank[r] else "" for r in range(inp.world_size)]
        checks.append((s, layout, base))
        for r in range(inp.world_size):
            for alt in sorted(per_rank[r])[1:]:
                checks.append((s, layout, [*base[:r], alt, *base[r + 1 :]]))
    refuted: list = []  # (seq value, layout text, rank names, error, bound, error in a simulation)
    for s, layout, names in checks:
        err = _relation_error(sim, s, layout, names)
        bound = limit(_scale(sim.seq[s]) if s in sim.seq else 0.0)
        if not err <= bound:
            present = s in sim.seq and all(n in vals for n, vals in zip(names, sim.ranks))
            refuted.append((s, str(layout), names, err, bound,
                            (lambda run, s=s, layout=layout, names=names: _relation_error(run, s, layout, names))
                            if present else None))
    failed: list = []
    # one micro-batch's terms of a Partial(sum) say nothing alone: the M relations of the same seq
    # value are checked together (every rank's piece of every micro-batch, summed)
    groups: dict[tuple, dict[int, list]] = defaultdict(dict)
    for (s, kind, axis, param), per_rank in pieces.items():
        layout = layout_of(kind, axis, param)
        if layout.kind == "Partial" and layout.micro is not None:
            groups[(s, layout.micro[0])][layout.micro[1]] = per_rank
    micro_checks = 0
    for (s, count), by_k in groups.items():
        text = f"Partial(sum, micro=*/{count})"
        if sorted(by_k) != list(range(count)):
            if not sound_only:  # a relation of some micro-batches only: not refuted by numbers
                failed.append((s, text + f" (micro-batches {sorted(by_k)} only)", float("inf")))
                micro_checks += 1
            continue
        if sound_only and any(len(by_k[k][r]) > 1 for k in range(count) for r in range(inp.world_size)):
            continue
        base = [[sorted(by_k[k][r])[0] for k in range(count)] for r in range(inp.world_size)]
        variants = [base]
        for r in range(inp.world_size):
            for k in range(count):
                for alt in sorted(by_k[k][r])[1:]:
                    variant = [list(row) for row in base]
                    variant[r][k] = alt
                    variants.append(variant)
        for names in variants:
            micro_checks += 1
            err = _micro_error(sim, s, "Partial", None, names)
            bound = limit(_scale(sim.seq[s]) if s in sim.seq else 0.0)
            if not err <= bound:
                present = s in sim.seq and all(v in sim.ranks[r] for r, row in enumerate(names) for v in row)
                refuted.append((s, text, names, err, bound,
                                (lambda run, s=s, names=names: _micro_error(run, s, "Partial", None, names))
                                if present else None))
    del sim  # the float64 re-run below needs none of its values
    kept = _recheck(inp, refuted, seed, limit, notes) if float64 and refuted else refuted
    for s, text, names, err, bound, _ in kept:
        flat = list(_flat(names))
        failed.append((s, text, flat, err, bound) if sound_only else (s, text, err))
    return len(checks) + micro_checks, failed


def _relation_error(sim, s: str, layout: Layout, names: list[str]) -> float:
    """Max abs error of seq value ``s`` rebuilt from the rank values ``names`` under ``layout``;
    ``inf`` when a value is missing."""
    present = s in sim.seq and all(n in vals for n, vals in zip(names, sim.ranks))
    return relation_error(layout, sim.seq[s], sim.pieces(names)) if present else float("inf")


def _recheck(inp: CheckInput, refuted: list, seed: int, limit: Callable[[float], float], notes: dict | None) -> list:
    """The refutations that a float64 re-run of the values they read keeps (module
    :mod:`analyzer.witness.recheck`); all of them when the re-run cannot run. Fills ``notes``
    (see :func:`confirm_relations`)."""
    from analyzer.witness.recheck import rerun_float64

    n = inp.world_size
    again = [r for r in refuted if r[5] is not None]  # a missing value is no rounding
    if not again:
        return refuted
    seq_values = [r[0] for r in again]
    rank_values = [[v for r in again for v in _rank_names(r[2], k)] for k in range(n)]
    fed, aliases = _fed_inputs(inp)
    try:
        wide = rerun_float64(inp.canonical_seq or inp.seq, inp.canonical_ranks or inp.ranks, fed, seq_values,
                             rank_values, seed=seed, aliases=aliases, mesh_axis=inp.mesh_axis)
    except Exception as exc:  # noqa: BLE001 - sorted by witness_failure, others re-raised
        reason = witness_failure(exc)
        if reason is None:
            raise
        if notes is not None:
            notes["recheck_skipped"] = reason
        return refuted
    kept = []
    for entry in refuted:
        s, text, _, _, _, error_in = entry
        if error_in is None:
            kept.append(entry)
            continue
        err64 = error_in(wide)
        if notes is not None:
            notes.setdefault("float64", {})[(s, text, _flat(entry[2]))] = err64
        if err64 <= limit(_scale(wide.seq[s]) if s in wide.seq else 0.0):
            if notes is not None:
                notes["rechecked"] = notes.get("rechecked", 0) + 1
            continue
        kept.append(entry)
    return kept


def _flat(names: list) -> tuple[str, ...]:
    """A check's rank values, one text per rank (micro-batch pieces joined by `` + ``)."""
    return tuple(" + ".join(n) if isinstance(n, list) else n for n in names)


def _rank_names(names: list, r: int) -> list[str]:
    """Rank r's value names of a check (one name, or one per micro-batch)."""
    return list(names[r]) if isinstance(names[r], list) else [names[r]]


def _micro_error(sim, s: str, kind: str, axis: int | None, names: list[list[str]]) -> float:
    """Max abs error of seq value ``s`` rebuilt from ``names[r][k]``, rank r's piece of
    micro-batch k (:func:`analyzer.witness.layouts.rebuild_micro`); ``inf`` when a value is missing
    or the pieces do not fit."""
    from analyzer.witness.layouts import max_abs_diff, rebuild_micro

    if s not in sim.seq or any(n not in sim.ranks[r] for r, row in enumerate(names) for n in row):
        return float("inf")
    try:
        rebuilt = rebuild_micro(kind, axis, [[sim.ranks[r][n] for n in row] for r, row in enumerate(names)])
    except ValueError:
        return float("inf")
    return max_abs_diff(rebuilt, sim.seq[s])
