"""NCCL collectives in numpy, paired across rank threads by issue order.

Each rank graph runs in its own thread with its own ``onnx.reference.ReferenceEvaluator``;
collective nodes are custom ``OpRun`` classes (``new_ops``) that hand their inputs to a shared
:class:`Rendezvous`. The k-th collective issued by rank 0 meets the k-th collective issued by
every other rank (NCCL pairs calls on a communicator by issue order). Once all ranks have
arrived, the last one checks that the calls agree (op, attributes, input count, shapes,
dtypes) and computes every rank's outputs.

Semantics (NCCL; onnxruntime ``com.microsoft`` contrib ops, collective_defs.cc and
cuda/collective/nccl_kernels.cc; torch ``_c10d_functional`` names are accepted too).
Variadic inputs are treated one by one, output ``i`` answers input ``i``:

- ``AllReduce``: elementwise reduction over ranks; attribute ``reduction`` (or
  ``reduce_op``) in sum (default) / max / min / prod / avg, or the NCCL enum 0..4.
- ``AllGather``: concatenation of the ranks' inputs along ``axis`` (default 0, as the
  onnxruntime kernel reads it) in rank order.
- ``ReduceScatter``: sum (or ``reduction``) over ranks, then rank ``r`` keeps chunk ``r``
  along ``axis`` (default 0).
- ``AllToAll``: every rank splits its input into N chunks along ``axis`` (default 0, the
  onnxruntime kernel splits the flat buffer, i.e. axis 0); chunk ``j`` goes to rank ``j``;
  every rank concatenates what it received in rank order along ``axis``.
- ``wait_tensor`` / ``WaitTensor``: identity (no pairing).

A rank that finishes or fails while others wait at collective ``k`` wakes them up with
:class:`~analyzer.witness.errors.CollectiveMismatch` (or an abort); a wait also ends after
``timeout`` seconds, so a simulation never hangs.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx.reference.op_run import OpRun

from analyzer.witness.errors import CollectiveMismatch, SimulationError

__all__ = [
    "COLLECTIVE_KINDS",
    "CollectiveCall",
    "AxisRendezvous",
    "MeshRendezvous",
    "RankAborted",
    "Rendezvous",
    "collective_ops_for",
    "find_collectives",
]

#: op_type (in any non-standard domain) -> collective kind
COLLECTIVE_KINDS: dict[str, str] = {
    "AllReduce": "all_reduce",
    "all_reduce": "all_reduce",
    "AllGather": "all_gather",
    "all_gather": "all_gather",
    "all_gather_into_tensor": "all_gather",
    "ReduceScatter": "reduce_scatter",
    "reduce_scatter": "reduce_scatter",
    "reduce_scatter_tensor": "reduce_scatter",
    "AllToAll": "all_to_all",
    "all_to_all": "all_to_all",
    "all_to_all_single": "all_to_all",
    "wait_tensor": "wait",
    "WaitTensor": "wait",
}

_STANDARD_DOMAINS = (
    "",
    "ai.onnx",
    "ai.onnx.ml",
    "ai.onnx.preview",
    "ai.onnx.preview.training",
)
_NCCL_OPS = {0: "sum", 1: "prod", 2: "max", 3: "min", 4: "avg"}
_REDUCERS = {
    "sum": np.add,
    "prod": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
    "avg": np.add,
}


class RankAborted(SimulationError):
    """A rank stopped waiting because another rank failed (the other error is the cause)."""


@dataclass(frozen=True)
class CollectiveCall:
    """One rank's side of one collective.

    Attributes:
        op_type: the node's op type (``AllReduce`` ...).
        kind: the normalised kind (``all_reduce``, ``all_gather``, ...).
        node: the node name (for messages).
        attrs: normalised attributes (``axis``, ``reduction``, ``group_size``).
        inputs: the input arrays.
    """

    op_type: str
    kind: str
    node: str
    attrs: tuple[tuple[str, Any], ...]
    inputs: tuple[np.ndarray, ...] = field(repr=False)

    def signature(self) -> tuple[Any, ...]:
        """What must agree across ranks: kind, attributes, input shapes and dtypes."""
        return (
            self.kind,
            self.attrs,
            tuple((a.shape, a.dtype.str) for a in self.inputs),
        )

    def where(self) -> str:
        """`` (node 'name')`` for messages, empty for an unnamed node."""
        return f" (node {self.node!r})" if self.node else ""

    def describe(self) -> str:
        """``AllGather(axis=1; float32[2,4])`` for messages."""
        atts = ", ".join(f"{k}={v}" for k, v in self.attrs if k != "group_size")
        ins = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self.inputs)
        return f"{self.op_type}({atts + '; ' if atts else ''}{ins})"


@dataclass
class _Slot:
    calls: dict[int, CollectiveCall] = field(default_factory=dict)
    results: list[tuple[np.ndarray, ...]] | None = None
    error: SimulationError | None = None


class Rendezvous:
    """Meeting point of ``n`` rank threads; pairs collectives by issue index.

    Args:
        n: number of ranks.
        timeout: seconds a rank waits at one collective before giving up.
    """

    def __init__(self, n: int, timeout: float = 300.0) -> None:
        self.n = n
        self.timeout = timeout
        self._cond = threading.Condition()
        self._slots: dict[int, _Slot] = {}
        self._issued = [0] * n
        self._finished: dict[int, int] = {}
        self._failed: dict[int, BaseException] = {}

    @property
    def log(self) -> list[tuple[CollectiveCall, ...]]:
        """Completed collectives in issue order, one call per rank."""
        with self._cond:
            return [
                tuple(slot.calls[r] for r in range(self.n))
                for _, slot in sorted(self._slots.items())
                if slot.results is not None
            ]

    def finish(self, rank: int) -> None:
        """Record that ``rank`` ran to the end of its graph."""
        with self._cond:
            self._finished[rank] = self._issued[rank]
            self._cond.notify_all()

    def fail(self, rank: int, error: BaseException) -> None:
        """Record that ``rank`` stopped with ``error``; wakes the waiting ranks."""
        with self._cond:
            self._failed[rank] = error
            self._cond.notify_all()

    def exchange(self, rank: int, call: CollectiveCall) -> tuple[np.ndarray, ...]:
        """Contribute ``call`` as ``rank``'s next collective and wait for the outputs.

        Args:
            rank: the calling rank.
            call: its side of the collective.

        Returns:
            The outputs of ``rank`` (one array per input).

        Raises:
            CollectiveMismatch: the ranks' k-th calls disagree, some rank finished without
                issuing a k-th collective, or the wait timed out.
            RankAborted: another rank failed while this one waited.
        """
        with self._cond:
            k = self._issued[rank]
            self._issued[rank] += 1
            slot = self._slots.setdefault(k, _Slot())
            slot.calls[rank] = call
            if len(slot.calls) == self.n:
                try:
                    slot.results = _combine(k, [slot.calls[r] for r in range(self.n)])
                except SimulationError as exc:
                    slot.error = exc
                except Exception as exc:  # noqa: BLE001 - numpy errors become the slot's error
                    slot.error = SimulationError(
                        f"collective #{k}: {type(exc).__name__}: {exc}"
                    )
                self._cond.notify_all()
            deadline = time.monotonic() + self.timeout
            while slot.results is None and slot.error is None:
                self._check_stalled(k, slot)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    missing = sorted(set(range(self.n)) - set(slot.calls))
                    raise CollectiveMismatch(
                        f"collective #{k}: ranks {sorted(slot.calls)} waited {self.timeout:g} s "
                        f"at {call.describe()} for ranks {missing}"
                    )
                self._cond.wait(remaining)
            if slot.error is not None:
                raise type(slot.error)(str(slot.error))
            return slot.results[rank]  # type: ignore[index]

    def _check_stalled(self, k: int, slot: _Slot) -> None:
        if self._failed:
            failed = sorted(self._failed)
            raise RankAborted(
                f"collective #{k}: aborted because rank(s) {failed} failed"
            )
        done = sorted(r for r, count in self._finished.items() if count <= k)
        if done:
            present = sorted(slot.calls)
            what = slot.calls[present[0]].describe()
            raise CollectiveMismatch(
                f"collective #{k}: rank(s) {present} issued {what} but rank(s) {done} "
                f"finished after {self._finished[done[0]]} collective(s)"
            )


class MeshRendezvous:
    """Rendezvous of the ranks of a device mesh: each collective meets the ranks of its group.

    A collective with the string attribute ``mesh_axis`` (a mesh axis name, docs/mesh.md) is paired,
    by issue order within that process group as NCCL does per communicator, with the ranks that
    share every other mesh coordinate; one without ``mesh_axis`` is over all ranks. Ranks are
    row-major over the axes (``DeviceMesh(arange(N).reshape(sizes))``): rank r has coordinates
    ``numpy.unravel_index(r, sizes)``.

    Args:
        axes: mesh axis name -> size, outermost first.
        timeout: seconds a rank waits at one collective.
    """

    def __init__(self, axes: dict[str, int], timeout: float = 300.0) -> None:
        self.axes = dict(axes)
        sizes = list(self.axes.values())
        self.n = int(np.prod(sizes))
        self._coords = [tuple(int(c) for c in np.unravel_index(r, sizes)) for r in range(self.n)]
        self.world = Rendezvous(self.n, timeout)
        self._groups: dict[tuple[str, tuple[int, ...]], tuple[Rendezvous, list[int]]] = {}
        for a, name in enumerate(self.axes):
            for r in range(self.n):
                key = (name, self._coords[r][:a] + self._coords[r][a + 1 :])
                if key not in self._groups:
                    members = [q for q in range(self.n) if self._coords[q][:a] + self._coords[q][a + 1 :] == key[1]]
                    self._groups[key] = (Rendezvous(len(members), timeout), members)

    def _hub_of(self, rank: int, group: str | None) -> tuple[Rendezvous, int]:
        if group is None:
            return self.world, rank
        if group not in self.axes:
            raise SimulationError(f"a collective names group {group!r}, which is not a mesh axis of {self.axes}")
        a = list(self.axes).index(group)
        hub, members = self._groups[(group, self._coords[rank][:a] + self._coords[rank][a + 1 :])]
        return hub, members.index(rank)

    @property
    def log(self) -> list[tuple[CollectiveCall, ...]]:
        """Completed world-wide collectives (per-group ones are not logged)."""
        return self.world.log

    def exchange(self, rank: int, call: CollectiveCall) -> tuple[np.ndarray, ...]:
        """As :meth:`Rendezvous.exchange`, within the group the call names."""
        hub, local = self._hub_of(rank, dict(call.attrs).get("mesh_axis"))
        return hub.exchange(local, call)

    def _all(self, rank: int) -> list[tuple[Rendezvous, int]]:
        out = [(self.world, rank)]
        for hub, members in self._groups.values():
            if rank in members:
                out.append((hub, members.index(rank)))
        return out

    def finish(self, rank: int) -> None:
        """Record that ``rank`` ran to the end (in every group it belongs to)."""
        for hub, local in self._all(rank):
            hub.finish(local)

    def fail(self, rank: int, error: BaseException) -> None:
        """Record that ``rank`` failed (wakes the ranks waiting in its groups)."""
        for hub, local in self._all(rank):
            hub.fail(local, error)


class AxisRendezvous:
    """Rendezvous of the ranks of one group of a mesh check (docs/mesh.md), run on their own.

    A collective over this group's mesh axis (``mesh_axis`` equal to ``axis``, or none) meets
    the group's ranks; one over another mesh axis (the dp gradient all-reduce in a check along
    tp) meets no other rank and returns its inputs (a reduction, gather or scatter over one
    member), on the ranks and on the sequential side (the replica, run as a group of one)
    alike: the check of one group with that axis of size 1.

    Args:
        n: ranks of the group.
        axis: the mesh axis of the check.
        timeout: seconds a rank waits at one collective.
    """

    def __init__(self, n: int, axis: str, timeout: float = 300.0) -> None:
        self.n = n
        self.axis = axis
        self.group = Rendezvous(n, timeout)

    @property
    def log(self) -> list[tuple[CollectiveCall, ...]]:
        """Completed collectives of the group (those over another axis are not logged)."""
        return self.group.log

    def exchange(self, rank: int, call: CollectiveCall) -> tuple[np.ndarray, ...]:
        """As :meth:`Rendezvous.exchange`; a collective over another axis returns at once."""
        if dict(call.attrs).get("mesh_axis") not in (None, self.axis):
            return tuple(np.array(x, copy=True) for x in call.inputs)
        return self.group.exchange(rank, call)

    def finish(self, rank: int) -> None:
        """Record that ``rank`` ran to the end."""
        self.group.finish(rank)

    def fail(self, rank: int, error: BaseException) -> None:
        """Record that ``rank`` failed (wakes the ranks waiting in the group)."""
        self.group.fail(rank, error)


def _combine(k: int, calls: Sequence[CollectiveCall]) -> list[tuple[np.ndarray, ...]]:
    """Check that the ranks' k-th calls agree and compute every rank's outputs."""
    n = len(calls)
    first = calls[0]
    for r, call in enumerate(calls[1:], start=1):
        if call.signature() != first.signature():
            raise CollectiveMismatch(
                f"collective #{k}: rank 0 issued {first.describe()}{first.where()} "
                f"but rank {r} issued {call.describe()}{call.where()}"
            )
    attrs = dict(first.attrs)
    group = attrs.get("group_size")
    if group is not None and group != n:
        raise CollectiveMismatch(
            f"collective #{k}: {first.op_type}{first.where()} has group_size={group} "
            f"but {n} rank graphs were given"
        )
    outputs: list[list[np.ndarray]] = [[] for _ in range(n)]
    for i in range(len(first.inputs)):
        per_rank = _combine_one(k, first, [c.inputs[i] for c in calls], attrs)
        for r in range(n):
            outputs[r].append(per_rank[r])
    return [tuple(o) for o in outputs]


def _combine_one(
    k: int, call: CollectiveCall, xs: list[np.ndarray], attrs: dict[str, Any]
) -> list[np.ndarray]:
    n = len(xs)
    kind = call.kind
    if kind == "all_reduce":
        total = _reduce(xs, attrs.get("reduction", "sum"))
        return [total.copy() for _ in range(n)]
    axis = _norm_axis(k, call, attrs.get("axis", 0), xs[0].ndim)
    if kind == "all_gather":
        full = np.concatenate(xs, axis=axis)
        return [full.copy() for _ in range(n)]
    if xs[0].shape[axis] % n:
        raise SimulationError(
            f"collective #{k}: {call.op_type}{call.where()} splits axis {axis} of size "
            f"{xs[0].shape[axis]} into {n} ranks"
        )
    if kind == "reduce_scatter":
        total = _reduce(xs, attrs.get("reduction", "sum"))
        return [c.copy() for c in np.split(total, n, axis=axis)]
    # all_to_all
    sent = [np.split(x, n, axis=axis) for x in xs]
    return [
        np.concatenate([sent[src][dst] for src in range(n)], axis=axis)
        for dst in range(n)
    ]


def _reduce(xs: list[np.ndarray], reduction: str) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):  # float16 overflows to inf, as on the device
        total = functools.reduce(_REDUCERS[reduction], xs)
    if reduction == "avg":
        total = total / len(xs)
    return np.asarray(total, dtype=xs[0].dtype)


def _norm_axis(k: int, call: CollectiveCall, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise SimulationError(
            f"collective #{k}: {call.op_type}{call.where()}: axis {axis} out of range "
            f"for rank {ndim}"
        )
    return axis % ndim


def _norm_attrs(op_type: str, raw: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Normalise the node attributes that matter for pairing and semantics."""
    out: dict[str, Any] = {}
    for name in ("reduction", "reduce_op", "reduceOp"):
        if name in raw:
            value = raw[name]
            if isinstance(value, (int, np.integer)):
                value = _NCCL_OPS.get(int(value), str(value))
            value = str(value).lower()
            if value not in _REDUCERS:
                raise SimulationError(f"{op_type}: unsupported reduction {raw[name]!r}")
            out["reduction"] = value
    for name in ("axis", "group_size"):
        if name in raw:
            out[name] = int(raw[name])
    if raw.get("mesh_axis") is not None:  # the mesh axis of the process group (docs/mesh.md)
        axis = raw["mesh_axis"]
        out["mesh_axis"] = axis.decode() if isinstance(axis, bytes) else str(axis)
    return tuple(sorted(out.items()))


class _CollectiveOpRun(OpRun):
    """Base of the generated per-rank collective ops (see :func:`collective_ops_for`)."""

    op_domain = "com.microsoft"
    rank: int = 0
    hub: Rendezvous | None = None
    kind: str = "wait"

    def _run(self, *inputs: Any, **attributes: Any) -> tuple[Any, ...]:
        if self.kind == "wait":
            return tuple(inputs)
        op_type = self.onnx_node.op_type
        # only what the node sets: onnx.reference fills in a registered schema's defaults
        # (analyzer.export registers com.microsoft collectives with group_size=1)
        given = {a.name for a in self.onnx_node.attribute}
        call = CollectiveCall(
            op_type=op_type,
            kind=self.kind,
            node=self.onnx_node.name,
            attrs=_norm_attrs(op_type, {k: v for k, v in attributes.items() if k in given}),
            inputs=tuple(np.asarray(x) for x in inputs),
        )
        assert self.hub is not None
        return self.hub.exchange(self.rank, call)


def _walk_nodes(graph: onnx.GraphProto) -> Iterable[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for att in node.attribute:
            if att.type == onnx.AttributeProto.GRAPH:
                yield from _walk_nodes(att.g)
            elif att.type == onnx.AttributeProto.GRAPHS:
                for g in att.graphs:
                    yield from _walk_nodes(g)


def find_collectives(model: onnx.ModelProto) -> list[tuple[str, str]]:
    """The ``(domain, op_type)`` pairs of collective nodes in a model.

    Args:
        model: the model (main graph, subgraphs and local functions are scanned).

    Returns:
        Sorted distinct pairs whose op type is in :data:`COLLECTIVE_KINDS` and whose
        domain is not a standard ONNX domain.
    """
    found: set[tuple[str, str]] = set()
    nodes = list(_walk_nodes(model.graph))
    for fn in model.functions:
        nodes.extend(fn.node)
    for node in nodes:
        if node.domain not in _STANDARD_DOMAINS and node.op_type in COLLECTIVE_KINDS:
            found.add((node.domain, node.op_type))
    return sorted(found)


def collective_ops_for(
    model: onnx.ModelProto, rank: int, hub: Rendezvous
) -> list[type[OpRun]]:
    """``new_ops`` classes that simulate the collectives of ``model`` as ``rank``.

    Args:
        model: the rank's model.
        rank: its rank index.
        hub: the rendezvous shared by all ranks of this simulation.

    Returns:
        One ``OpRun`` subclass per ``(domain, op_type)`` from :func:`find_collectives`,
        named after the op type (``ReferenceEvaluator`` keys ``new_ops`` by class name).
    """
    return [
        type(
            op_type,
            (_CollectiveOpRun,),
            {
                "op_domain": domain,
                "rank": rank,
                "hub": hub,
                "kind": COLLECTIVE_KINDS[op_type],
            },
        )
        for domain, op_type in find_collectives(model)
    ]
