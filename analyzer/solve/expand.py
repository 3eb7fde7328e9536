"""The driver's rewrite loop: fused ops on the frontier expanded, and the rules run again.

A check that is not verified may stop at a fused op (``Softmax`` over a vocab the ranks shard
and normalize by hand) or at a rank node that calls one where the sequential graph spells it
out. The op types with a function body of two or more ops (:mod:`analyzer.rewrite.functions`;
not a one-op rename such as ``Relu`` = ``Max(x, 0)``) among the frontier's seq nodes, the seq
nodes that read a frontier node's output, and the
rank nodes that read a piece but make none are expanded on every graph, and the rules solve
again. The expansion is kept when it proves more: more seq outputs rebuilt, or
as many and a larger share of the expanded calls' outputs related; when the op types of a round
together prove no more, each is tried alone (at most :data:`MAX_SINGLES`), since expanding one
side's op can hide the form another rule reads; otherwise the fused form
stays (a bug is reported at the op the user wrote). Repeated while new op types come up (at
most :data:`MAX_ROUNDS` times); op types tried are remembered on the
:class:`~analyzer.model.CheckInput`, so a second solve of the same check does not retry them.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from analyzer.model import CheckInput, Derivation
from analyzer.rewrite.functions import callable_ops, fuses_several_ops, local_only_on_some_side

__all__ = ["MAX_ROUNDS", "MAX_SINGLES", "expand_fused_ops"]

MAX_ROUNDS = 4
MAX_SINGLES = 4  # op types tried alone in a round when expanding them all together proves no more
_STANDARD = ("", "ai.onnx")


def expand_fused_ops(inp: CheckInput, deriv: Derivation, solve: Callable[[], Derivation]) -> Derivation:
    """Expand fused frontier ops while that proves more (module docstring).

    Args:
        inp: the check's inputs; ``expand_ops`` and ``expand_tried`` are updated.
        deriv: the derivation of the graphs as they are.
        solve: solves the check again from ``inp`` (its canonical forms recomputed).

    Returns:
        The derivation kept.
    """
    for _ in range(MAX_ROUNDS):
        if _verified(deriv):
            return deriv
        models = [inp.seq, *inp.ranks]
        wanted = _frontier_ops(deriv) - inp.expand_tried
        ops = {
            k
            for k in callable_ops(models, wanted)
            if local_only_on_some_side(models, k) and any(fuses_several_ops(m, k) for m in models)
        }
        inp.expand_tried = inp.expand_tried | wanted
        if not ops:
            return deriv
        kept = inp.expand_ops
        # all together first; when that proves no more, each alone (a rank's GreaterOrEqual
        # expanded beside the seq's fused loss hides the rank's mask from the rule the loss needs)
        in_seq = {("" if n.domain in _STANDARD else n.domain, n.op_type) for n in inp.seq.graph.node}
        singles = sorted(ops, key=lambda k: (k not in in_seq, k))[:MAX_SINGLES]  # the seq's first
        trials = [ops] if len(ops) == 1 else [ops, *({k} for k in singles)]
        for trial in trials:
            calls = _call_outputs(deriv, trial)
            before = _score(deriv, calls)
            inp.expand_ops = kept | trial
            inp.defer_canonical()
            new = solve()
            if _score(new, calls) > before:
                deriv = new
                break
            inp.expand_ops = kept
            inp.defer_canonical()
    return deriv


def _rows(deriv: Derivation, rel: str, *cols: str) -> list[tuple]:
    names = list(deriv.decls[rel].column_names)
    pick = operator.itemgetter(*(names.index(c) for c in cols))
    rows = deriv.derived.get(rel, deriv.facts.get(rel, []))
    return [(pick(r),) for r in rows] if len(cols) == 1 else [pick(r) for r in rows]


def _verified(deriv: Derivation) -> bool:
    outputs = {v for g, v in _rows(deriv, "GraphOutput", "g", "value") if g == "seq"}
    explained = {s for (s,) in _rows(deriv, "OutputRelation", "s")}
    checks = any(deriv.derived.get(rel) for rel in deriv.decls if rel.startswith("Check_"))
    return outputs <= explained and not checks


def _frontier_ops(deriv: Derivation) -> set[tuple[str, str]]:
    nodes = _rows(deriv, "Node", "g", "node", "op", "domain")
    op_of = {(g, n): ("" if d in _STANDARD else d, op) for g, n, op, d in nodes}
    frontier = {n for (n,) in _rows(deriv, "Frontier", "n")}
    out = {op_of[("seq", n)] for n in frontier if ("seq", n) in op_of}
    # the seq ops reading a frontier node's output: a view that pairs with nothing is often the
    # flattened input of a fused op one side calls (Gemm's x in view -> addmm -> view) and a
    # rank spells out another way (a 3-D MatMul with no bias)
    made = {v for g, n, v in _rows(deriv, "Node_Output", "g", "node", "value") if g == "seq" and n in frontier}
    readers = {n for g, n, _, v in _rows(deriv, "Node_Input", "g", "node", "pos", "value") if g == "seq" and v in made}
    out |= {op_of[("seq", n)] for n in readers if ("seq", n) in op_of}
    out |= {op_of[(g, m)] for g, m in _rows(deriv, "RankFrontier", "g", "m") if (g, m) in op_of}
    return out


def _call_outputs(deriv: Derivation, ops: set[tuple[str, str]]) -> set[str]:
    calls = {n for g, n, op, d in _rows(deriv, "Node", "g", "node", "op", "domain")
             if g == "seq" and ("" if d in _STANDARD else d, op) in ops}
    return {v for g, n, v in _rows(deriv, "Node_Output", "g", "node", "value") if g == "seq" and n in calls}


def _score(deriv: Derivation, calls: set[str]) -> tuple[int, float]:
    """(seq outputs rebuilt, share of the calls' outputs present in this derivation that hold)."""
    explained = len({s for (s,) in _rows(deriv, "OutputRelation", "s")})
    present = {v for g, v in _rows(deriv, "Node_Output", "g", "value") if g == "seq"} & calls
    related = {s for (s,) in _rows(deriv, "Holds", "s")} & present
    return explained, (len(related) / len(present) if present else 0.0)
