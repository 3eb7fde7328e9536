"""The numeric witness for a check: errors of the seq outputs rebuilt from the rank outputs.

Runs :func:`analyzer.witness.simulate.witness` with the check's input relations. An output that the
rules explain is rebuilt with the relation found; an output they do not explain is rebuilt
from the rank outputs at the same position with the layout their shapes say
(:func:`output_layout_from_shapes`: ``Replicate`` when the shapes are the seq output's, else
``Shard`` on the divided axis; what a user of the distributed program would read), so a bug
report carries the size of the error it causes.
"""

from __future__ import annotations

import onnx

from analyzer.errors import InputError
from analyzer.inputs.infer import _layout_from_shapes
from analyzer.layout import REPLICATE, Layout
from analyzer.model import CheckInput
from analyzer.verdict.build import Verdict
from analyzer.witness.simulate import SimulationError, witness

__all__ = ["numeric_errors", "output_layout_from_shapes"]


def numeric_errors(inp: CheckInput, verdict: Verdict, *, seed: int = 0) -> dict[str, float]:
    """Max abs error of every seq output, rebuilt from the ranks (see module docstring).

    Raises:
        InputError: the graphs cannot be simulated (one-line reason).
    """
    fed, aliases = _fed_inputs(inp)
    wanted = {}
    for pos, out in enumerate(verdict.outputs):
        if out.layout is not None and all(out.rank_values):
            wanted[out.name] = (out.layout, out.rank_values)
        else:  # no relation: compare under the layout the output shapes say (Replicate if equal)
            layout = output_layout_from_shapes(inp.seq, inp.ranks, pos)
            wanted[out.name] = (layout, [m.graph.output[pos].name for m in inp.ranks])
    try:
        return witness(inp.seq, inp.ranks, fed, wanted, seed=seed, aliases=aliases)
    except SimulationError as exc:
        raise InputError(f"numeric witness: {exc}") from None
    except MemoryError:
        raise InputError("numeric witness: the graphs' inputs do not fit in memory") from None
    except (onnx.checker.ValidationError, ValueError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise InputError(f"numeric witness: the graphs cannot be run ({type(exc).__name__}: {first})") from None


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
    inp: CheckInput, derived: dict[str, list[tuple]], decls: dict, *, seed: int = 0, tol: float = 1e-4
) -> tuple[int, list[tuple[str, str, float]]]:
    """Confirm on numbers every relation the rules derived (``Holds`` with its ``Piece`` rows).

    Every rank alternative is checked: for each holding relation, the first piece of every
    rank is taken, and each other piece of a rank is swapped in once.

    Args:
        inp: the check's inputs.
        derived: derived relations (``Piece``, ``Holds``) as tuples.
        decls: declarations for their column order.
        seed: random seed of the simulation.
        tol: largest accepted max abs error.

    Returns:
        (number of relations checked, [(seq value, layout text, error)] of refuted ones).
    """
    from collections import defaultdict

    from analyzer.verdict.build import layout_of
    from analyzer.witness.simulate import check_relations, run_ranks

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
    checks = []
    for (s, kind, axis, param), per_rank in pieces.items():
        layout = layout_of(kind, axis, param)
        if layout.kind == "Partial" and layout.micro is not None:
            continue  # checked with the other micro-batches of the same value, below
        base = [sorted(per_rank[r])[0] for r in range(inp.world_size)]
        checks.append((s, layout, base))
        for r in range(inp.world_size):
            for alt in sorted(per_rank[r])[1:]:
                checks.append((s, layout, [*base[:r], alt, *base[r + 1 :]]))
    failed = [(s, str(layout), err) for s, layout, err in check_relations(sim, checks, tol)]
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
            failed.append((s, text + f" (micro-batches {sorted(by_k)} only)", float("inf")))
            micro_checks += 1
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
            if not err <= tol:
                failed.append((s, text, err))
    return len(checks) + micro_checks, failed


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
