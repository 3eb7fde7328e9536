"""The third verdict: where no rule explains a node, numbers tell a bug from a missing rule.

The rules prove relations; where their chain breaks (a *frontier* node: inputs related, output
not), that is either a bug of the distributed program or a computation no rule knows (the
ranks compute the same value by another route). :func:`triage` asks the numeric witness
(:mod:`analyzer.witness.simulate`: every graph on the same random inputs, collectives simulated)
which one it is:

1. The sequential graph and every rank graph are run once (canonical forms, the names the
   facts use), keeping every value.
2. For each frontier value ``s``, rank values that rebuild it are searched: ``Replicate``
   (each rank holds ``s``), ``Shard(a)`` (rank r holds chunk r of axis a) or ``Partial(sum)``
   (the same-named values of the ranks sum to ``s``), preferring values computed from the
   ranks' pieces of the node's inputs. Values agree when ``max|x - y| <= atol + rtol * max|y|``
   (the max over finite ``|y| < 1e15``: mask sentinels left out)
   (:data:`RTOL`, :data:`ATOL`: float32 round-off of sums taken in another order). For an
   output that is not rebuilt on the rank side, the rank graphs' outputs are searched.
3. A value found is *assumed* (an input relation of source ``numbers``) and the rules run
   again, so the chain continues past the unexplained step and a bug further down is reported
   where it is, not at the first rule that is missing. Repeated until no new value is found.
4. Verdict: a frontier whose value no rank value rebuilds is a ``discrepancy`` (numbers
   differ; its ``numeric_error`` is the error of its paired rank nodes' outputs under the
   layout their shapes say, when there are some); when every output is then explained, or the
   outputs agree on numbers, the check is ``unproven``: each assumed step is listed with the
   rank computation that made the value (the pattern a rule for it must match). Never
   ``verified``: numbers on one draw of inputs are evidence, not a proof.

The witness is not run when the graphs are too large (:data:`MAX_ELEMENTS` elements in the
sequential graph's values), when stored weights' values already refute their relation (the
values prove the bug; the rules name the weight and the rank), when their collectives do not pair
(a ``Check_*`` discrepancy) or one runs over a sub-group (``group_size`` or ``mesh_axis`` other
than this check's ranks), or when a graph cannot be simulated; the rules' verdict stands, and
``Verdict.triage`` says why.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import onnx
from onnx import numpy_helper

from analyzer import progress
from analyzer.inputs.infer import InputRelation
from analyzer.layout import PARTIAL_SUM, REPLICATE, Layout
from analyzer.model import CheckInput, Derivation
from analyzer.verdict.build import Discrepancy, Verdict, build_verdict

__all__ = ["ATOL", "MAX_ELEMENTS", "RTOL", "triage"]

#: Largest number of elements over the sequential graph's values the witness is run for.
MAX_ELEMENTS = 40_000_000
#: Tolerances of "the numbers agree": ``max|x - y| <= ATOL + RTOL * max|y|``. Every relation the
#: rules prove on the bundled examples holds within 2.4e-6 relative (float32 sums in another
#: order); the smallest bug effect in the corpus is 3.6e-5 relative (a gradient norm counting
#: the replicated norm weights twice, llama_tp2_adamw_clip_bug_norm_counts_replicas).
RTOL = 8e-6
ATOL = 1e-7
_SENTINEL = 1e15
_MAX_ROUNDS = 24
_PATTERN_LINES = 16

Rederive = Callable[[CheckInput], Derivation]


def triage(
    inp: CheckInput, deriv: Derivation, verdict: Verdict, rederive: Rederive, *, seed: int = 0
) -> tuple[Derivation, Verdict]:
    """Decide each frontier of a check that is not verified on numbers (module docstring).

    Args:
        inp: the check's inputs.
        deriv: what the rules derived.
        verdict: the rules' verdict (``verified`` is returned unchanged).
        rederive: solves the rules again for a :class:`CheckInput` with more relations.
        seed: seed of the random inputs.

    Returns:
        The last derivation (with the assumed relations as ``InputPiece`` rows) and the verdict:
        ``discrepancy``, ``unproven`` or the rules' own.
    """
    if verdict.verdict == "verified":
        return deriv, verdict
    if inp.value_mismatches or inp.misplaced:
        # the values prove the bug, and the rules' diagnosis (which weight, which rank) stands:
        # a re-derivation on assumed relations could move the first discrepancy off the weight
        verdict.triage = "numbers not checked: stored weights' values refute their relation"
        return deriv, verdict
    if any(d.kind == "collective" for d in verdict.discrepancies):
        verdict.triage = "numbers not checked: the ranks' collectives do not pair"
        return deriv, verdict
    group = _subgroup_collective(inp)
    if group:
        verdict.triage = f"numbers not checked: {group}"
        return deriv, verdict
    size = _elements(inp.seq)
    if size > MAX_ELEMENTS:
        verdict.triage = f"numbers not checked: the graphs are too large for the witness ({size:.3g} elements)"
        return deriv, verdict
    progress.stage("witness")
    sim = _simulate(inp, seed)
    if isinstance(sim, str):
        verdict.triage = f"numbers not checked: {sim}"
        return deriv, verdict
    search = _Search(sim, inp)
    assumed: list[InputRelation] = []
    unproven: list[Discrepancy] = []
    done: set[str] = set()
    for _ in range(_MAX_ROUNDS):
        found = []
        for d, s, where in _open_values(verdict):
            if s in done:
                continue
            match = search.find(s, deriv, d, outputs_only=where == "output")
            done.add(s)
            if match is not None:
                found.append((d, s, match))
        if not found:
            break
        for d, s, (layout, names, err) in found:
            assumed.append(InputRelation(s, layout, tuple(names), source="numbers"))
            unproven.append(_unproven_item(d, s, layout, names, err, search, deriv))
        inp_more = replace(inp, relations=[*inp.relations, *assumed])
        deriv = rederive(inp_more)
        verdict = build_verdict(inp_more, deriv)
        if verdict.verdict == "verified":
            break
    left = [d for d in verdict.discrepancies]
    for d in left:
        if d.kind == "frontier" and d.graph == "seq":
            d.numbers = "differ"
            d.numeric_error = search.paired_error(d, deriv)
    outputs_agree = search.outputs_agree(verdict)
    if not left and unproven:
        verdict.verdict = "unproven"
    elif left and outputs_agree and all(d.kind == "frontier" for d in left):
        # no rank value equals these values, yet every output does: a longer route the
        # rules do not know (say, a softmax shifted by a local max), not a bug on these numbers
        for d in left:
            d.kind = "unproven"
            d.numbers = "outputs agree"
            d.message = "no rank value equals this value, but every output agrees on numbers: a rule is missing"
        unproven.extend(left)
        verdict.discrepancies = []
        verdict.verdict = "unproven"
    verdict.unproven = unproven
    verdict.triage = "frontier checked on numbers" + (
        f" ({len(unproven)} step(s) no rule explains)" if unproven else ""
    )
    return deriv, verdict


def _open_values(verdict: Verdict) -> list[tuple[Discrepancy, str, str]]:
    """(discrepancy, seq value, "frontier" | "output") for each value the numbers may settle."""
    out = []
    for d in verdict.discrepancies:
        if d.kind == "frontier" and d.graph == "seq":
            out.extend((d, s, "frontier") for s in d.outputs)
        elif d.kind == "output":
            out.extend((d, o.name, "output") for o in verdict.outputs if o.relation is None)
    return out


def _subgroup_collective(inp: CheckInput) -> str:
    """Why the witness cannot run these ranks as one group ("" when it can): a collective whose
    ``group_size`` is not the world size, or that names a mesh axis other than the check's (its
    group is other ranks than these, docs/mesh.md)."""
    from analyzer.witness.collectives import find_collectives

    n = inp.world_size
    for r, model in enumerate(inp.ranks):
        wanted = set(find_collectives(model))
        for node in model.graph.node:
            if (node.domain, node.op_type) not in wanted:
                continue
            attrs = {a.name: a for a in node.attribute}
            size = attrs["group_size"].i if "group_size" in attrs else n
            axis = attrs["mesh_axis"].s.decode() if "mesh_axis" in attrs else None
            if size != n or (axis is not None and axis != inp.mesh_axis):
                return f"rank {r}'s {node.op_type} {node.name or ''} runs over a group this check does not simulate"
    return ""


def _elements(model: onnx.ModelProto) -> int:
    """Elements over the values of ``model`` with a known shape (a symbolic dimension counts 4,
    the witness's default)."""
    total = 0
    g = model.graph
    for vi in [*g.input, *g.value_info, *g.output]:
        t = vi.type.tensor_type
        if t.HasField("shape"):
            total += math.prod(d.dim_value if d.HasField("dim_value") else 4 for d in t.shape.dim)
    total += sum(math.prod(t.dims) for t in g.initializer)
    return total


def _simulate(inp: CheckInput, seed: int):
    """The simulation of the canonical graphs with every value kept, or a one-line reason."""
    from analyzer.witness.check import _fed_inputs
    from analyzer.witness.simulate import SimulationError, run_ranks

    fed, aliases = _fed_inputs(inp)
    try:
        return run_ranks(
            inp.canonical_seq or inp.seq,
            inp.canonical_ranks or inp.ranks,
            fed,
            seed=seed,
            keep_intermediates=True,
            aliases=aliases,
            mesh_axis=inp.mesh_axis,
        )
    except SimulationError as exc:
        return f"the graphs cannot be simulated ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
    except MemoryError:
        return "the graphs' values do not fit in memory"
    except (onnx.checker.ValidationError, ValueError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else ""
        return f"the graphs cannot be run ({type(exc).__name__}: {first})"


def agree(x: np.ndarray, y: np.ndarray) -> float | None:
    """``max|x - y|`` when ``x`` and ``y`` agree (same shape and dtype, within the tolerances;
    exact for integers and booleans), else None."""
    if x.shape != y.shape or x.dtype != y.dtype:
        return None
    if x.size == 0:
        return 0.0
    if not np.issubdtype(x.dtype, np.floating):
        return 0.0 if np.array_equal(x, y) else None
    with np.errstate(invalid="ignore", over="ignore"):
        same = (x == y) | (np.isnan(x) & np.isnan(y))
        diff = np.where(same, 0.0, np.abs(x.astype(np.float64) - y.astype(np.float64)))
    if np.isnan(diff).any():
        return None
    err = float(diff.max())
    return err if err <= ATOL + RTOL * _scale(y) else None


def _scale(y: np.ndarray) -> float:
    """Largest ``|y|`` over the finite elements that are no mask sentinels (``|y| < 1e15``:
    an attention mask's ``finfo.min`` would make every finite difference look small)."""
    a = np.abs(y[np.isfinite(y)])
    a = a[a < _SENTINEL]
    return float(a.max()) if a.size else 0.0


class _Search:
    """Rank values by shape and dtype, in graph order, for the searches of one simulation."""

    def __init__(self, sim, inp: CheckInput) -> None:
        self.sim = sim
        self.n = len(sim.ranks)
        self.models = list(inp.canonical_ranks or inp.ranks)
        self.seq_model = inp.canonical_seq or inp.seq
        self.by_shape: list[dict[tuple, list[str]]] = []
        self.order: list[dict[str, int]] = []
        self.outputs = [[o.name for o in m.graph.output] for m in self.models]
        for r, model in enumerate(self.models):
            names = _graph_order(model)
            values = sim.ranks[r]
            index: dict[tuple, list[str]] = defaultdict(list)
            for name in names:
                v = values.get(name)
                if isinstance(v, np.ndarray):
                    index[(v.shape, v.dtype.str)].append(name)
            self.by_shape.append(index)
            self.order.append({name: i for i, name in enumerate(names)})
        self.consumers = [_consumers(m) for m in self.models]

    def find(self, s: str, deriv: Derivation, d: Discrepancy, *, outputs_only: bool = False):
        """(layout, rank value per rank, error) of a relation the numbers show for seq value
        ``s``, or None. Candidates computed from the rank pieces of the node's inputs first."""
        x = self.sim.seq.get(s)
        if not isinstance(x, np.ndarray):
            return None
        cones = [self._cone(r, d, deriv) for r in range(self.n)]
        if outputs_only:
            cones = [set(o) for o in self.outputs]
        for layout, pieces in _layouts(x, self.n):
            names = []
            worst = 0.0
            for r in range(self.n):
                hit = self._match_on_rank(r, pieces[r], cones[r], prefer=names[0] if names else None,
                                          only=outputs_only)
                if hit is None:
                    break
                names.append(hit[0])
                worst = max(worst, hit[1])
            else:
                return layout, names, worst
        return self._partial(x, cones, outputs_only)

    def _match_on_rank(self, r: int, want: np.ndarray, cone: set[str], prefer: str | None, only: bool):
        names = self.by_shape[r].get((want.shape, want.dtype.str), [])
        values = self.sim.ranks[r]
        if prefer is not None and prefer in values and (not only or prefer in cone):
            err = agree(values[prefer], want) if values[prefer].shape == want.shape else None
            if err is not None:
                return prefer, err
        fallback = None
        for name in names:
            if only and name not in cone:
                continue
            err = agree(values[name], want)
            if err is None:
                continue
            if name in cone:
                return name, err
            if fallback is None:
                fallback = (name, err)
        return fallback

    def _partial(self, x: np.ndarray, cones: list[set[str]], only: bool):
        if not np.issubdtype(x.dtype, np.floating):
            return None
        key = (x.shape, x.dtype.str)
        common = [v for v in self.by_shape[0].get(key, []) if all(v in self.sim.ranks[r] for r in range(self.n))]
        ordered = [v for v in common if v in cones[0]] + ([] if only else [v for v in common if v not in cones[0]])
        for name in ordered:
            arrays = [self.sim.ranks[r][name] for r in range(self.n)]
            if any(a.shape != x.shape or a.dtype != x.dtype for a in arrays):
                continue
            if all(agree(a, x) is not None for a in arrays):
                continue  # each rank already holds the whole value (found as Replicate if in reach)
            total = np.sum(np.stack(arrays).astype(np.float64), axis=0).astype(x.dtype)
            err = agree(total, x)
            if err is not None:
                return PARTIAL_SUM, [name] * self.n, err
        return None

    def _cone(self, r: int, d: Discrepancy, deriv: Derivation) -> set[str]:
        """Rank r's values computed from its pieces of the frontier node's inputs."""
        ins = {i.name for i in d.inputs}
        cols = list(deriv.decls["Piece"].column_names)
        si, ri, di = cols.index("s"), cols.index("r"), cols.index("d")
        start = {row[di] for row in deriv.derived.get("Piece", []) if row[ri] == r and row[si] in ins}
        seen = set(start)
        stack = list(start)
        cons = self.consumers[r]
        while stack:
            v = stack.pop()
            for out in cons.get(v, ()):
                if out not in seen:
                    seen.add(out)
                    stack.append(out)
        return seen

    def paired_error(self, d: Discrepancy, deriv: Derivation) -> float | None:
        """Max abs error of the frontier's first output rebuilt from its paired rank nodes'
        outputs under the layout their shapes say (the smaller of ``Replicate`` and
        ``Partial(sum)`` for equal shapes); None without paired nodes."""
        from analyzer.inputs.infer import _layout_from_shapes
        from analyzer.witness.layouts import relation_error

        if not d.outputs or len(d.rank_nodes) != self.n:
            return None
        s = d.outputs[0]
        x = self.sim.seq.get(s)
        if not isinstance(x, np.ndarray):
            return None
        pos = _output_position(self.seq_model, d.node, s)
        names = []
        for r in range(self.n):
            node = _node_named(self.models[r], d.rank_nodes[r][0])
            if node is None or pos is None or pos >= len(node.output) or node.output[pos] not in self.sim.ranks[r]:
                return None
            names.append(node.output[pos])
        pieces = [np.asarray(self.sim.ranks[r][v]) for r, v in enumerate(names)]
        layouts = [_layout_from_shapes(x.shape, [p.shape for p in pieces], self.n) or REPLICATE]
        if layouts[0] == REPLICATE:
            layouts.append(PARTIAL_SUM)
        err = min(relation_error(layout, x, pieces) for layout in layouts)
        return err if math.isfinite(err) else None

    def outputs_agree(self, verdict: Verdict) -> bool:
        """Every seq output agrees with the ranks' outputs on numbers: under its relation when
        one was found, else under some layout of the rank outputs at the same position."""
        from analyzer.witness.layouts import relation_error

        for pos, o in enumerate(verdict.outputs):
            x = self.sim.seq.get(o.name)
            if not isinstance(x, np.ndarray):
                return False
            if o.layout is not None and all(o.rank_values):
                pieces = [self.sim.ranks[r].get(v) for r, v in enumerate(o.rank_values)]
                if any(p is None for p in pieces):
                    return False
                err = relation_error(o.layout, x, pieces)
                scale = _scale(x) if x.size and np.issubdtype(x.dtype, np.number) else 0.0
                if not err <= ATOL + RTOL * scale:
                    return False
                continue
            cone = [{m.graph.output[pos].name} if pos < len(m.graph.output) else set() for m in self.models]
            found = None
            for layout, pieces in _layouts(x, self.n):
                hits = [self._match_on_rank(r, pieces[r], cone[r], None, True) for r in range(self.n)]
                if all(h is not None for h in hits):
                    found = layout
                    break
            if found is None and self._partial(x, cone, True) is None:
                return False
        return True


def _layouts(x: np.ndarray, n: int) -> list[tuple[Layout, list[np.ndarray]]]:
    """``Replicate`` and every ``Shard(a)`` of ``x`` over ``n`` ranks, with each rank's piece."""
    out: list[tuple[Layout, list[np.ndarray]]] = [(REPLICATE, [x] * n)]
    for a, size in enumerate(x.shape):
        if size >= n and size % n == 0:
            out.append((Layout("Shard", axis=a), np.split(x, n, axis=a)))
    return out


def _graph_order(model: onnx.ModelProto) -> list[str]:
    g = model.graph
    names = [i.name for i in g.input] + [t.name for t in g.initializer]
    names += [o for n in g.node for o in n.output if o]
    return names


def _consumers(model: onnx.ModelProto) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for node in model.graph.node:
        for v in node.input:
            if v:
                out[v].extend(o for o in node.output if o)
    return out


def _node_named(model: onnx.ModelProto, name: str) -> onnx.NodeProto | None:
    return next((n for n in model.graph.node if (n.name or "") == name), None)


def _output_position(model: onnx.ModelProto, node: str, value: str) -> int | None:
    n = _node_named(model, node)
    if n is None:
        return None
    return list(n.output).index(value) if value in n.output else None


def _unproven_item(
    d: Discrepancy, s: str, layout: Layout, names: Sequence[str], err: float, search: _Search, deriv: Derivation
) -> Discrepancy:
    """The report of one assumed step: the frontier's details, the relation the numbers show
    and the rank computation of rank 0's value (the pattern a rule must match)."""
    item = replace(d, hints=[], hint_ids=[], origin_node="", origin_scope="", origin_source="")
    item.kind = "unproven" if d.kind == "frontier" else "unproven-output"
    item.outputs = [s]
    item.numbers = "agree"
    item.relation = str(layout)
    item.rank_values = list(names)
    item.numeric_error = err
    item.message = (
        f"no rule explains it, but the numbers agree: {s} = {layout} of "
        f"[{', '.join(dict.fromkeys(names))}] (max abs error {err:.2g}); add a rule for this pattern"
    )
    item.pattern = _pattern(search, deriv, d, s, names[0])
    return item


def _pattern(search: _Search, deriv: Derivation, d: Discrepancy, s: str, d0: str) -> list[str]:
    """The seq node and rank 0's nodes from its pieces (or graph inputs and constants) to
    ``d0``, one ``out = Op(in, ...)`` line each, pieces annotated with their relation."""
    cols = list(deriv.decls["Piece"].column_names)
    si, ri, di, ki, ai, pi = (cols.index(c) for c in ("s", "r", "d", "kind", "axis", "param"))
    piece_of: dict[str, str] = {}
    for row in deriv.derived.get("Piece", []):
        if row[ri] == 0 and row[di] not in piece_of:
            piece_of[row[di]] = f"{Layout.from_row(row[ki], row[ai], row[pi])} of {row[si]}"
    lines = [f"seq:    {s} = {d.op_type}({', '.join(_seq_arg(i) for i in d.inputs)})"]
    model = search.models[0]
    producer = {o: n for n in model.graph.node for o in n.output}
    consts = {t.name: t for t in model.graph.initializer}
    needed: list[onnx.NodeProto] = []
    seen: set[str] = set()
    stack = [d0]
    while stack and len(needed) < 4 * _PATTERN_LINES:
        v = stack.pop()
        if v in seen or v in piece_of or v not in producer:
            continue
        seen.add(v)
        node = producer[v]
        if node not in needed:
            needed.append(node)
            stack.extend(i for i in node.input if i)
    order = {id(n): i for i, n in enumerate(model.graph.node)}
    needed.sort(key=lambda n: order[id(n)])
    if d0 in piece_of:
        lines.append(f"rank 0: {d0} is {piece_of[d0]}")
        return lines
    if len(needed) > _PATTERN_LINES:
        lines.append(f"rank 0: ... ({len(needed) - _PATTERN_LINES} earlier nodes)")
        needed = needed[-_PATTERN_LINES:]
    for node in needed:
        op = f"{node.domain}::{node.op_type}" if node.domain else node.op_type
        args = ", ".join(_rank_arg(v, piece_of, consts, producer) for v in node.input)
        lines.append(f"rank 0: {', '.join(node.output)} = {op}({args})")
    return lines


def _seq_arg(i) -> str:
    if not i.relations and i.producer_op == "Constant":
        return f"{i.name} [constant]"
    return f"{i.name} [{' | '.join(i.relations) or 'no relation'}]"


def _rank_arg(v: str, piece_of: dict, consts: dict, producer: dict) -> str:
    if not v:
        return "''"
    if v in piece_of:
        return f"{v} [{piece_of[v]}]"
    tensor = consts.get(v)
    if tensor is None and v in producer and producer[v].op_type == "Constant":
        attr = next((a for a in producer[v].attribute if a.name == "value"), None)
        tensor = attr.t if attr is not None and attr.HasField("t") else None
    if tensor is not None and math.prod(tensor.dims) <= 4:
        try:
            return f"{v} [{numpy_helper.to_array(tensor).tolist()}]"
        except Exception:  # noqa: BLE001 - an unreadable constant is shown by name
            return v
    return v
