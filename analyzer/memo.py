"""Layer memoization: solve one decoder layer, reuse it for every identical layer.

Decoder layers of a model are the same computation many times (126 in Llama-3.1-405B). Nodes
are grouped into layers by their module scope (``model.layers.K``, ``h.K``, ``blocks.K``).
Each layer gets a *fingerprint* of its structure (op types, domains, attributes, output
shapes, the wiring between its nodes, constants by value, weights by their name with the
layer index removed, their shape and their input relation) that ignores names and metadata.
A run of consecutive layers ``a..b`` whose fingerprints are equal in the sequential graph
and in every rank graph is collapsed to layer ``a``: layers ``a+1..b`` are removed and what
read layer ``b``'s outputs reads layer ``a``'s instead.

Soundness: the collapsed check is an induction over the run. It is only accepted when the
relations found on layer ``a``'s outputs equal those of the inputs it read from layer ``a-1``
(the boundary relations are a fixpoint, with the rank pieces at the same slots); then every
layer of the run maps them to themselves. Otherwise the driver checks the whole graph. A
layer whose structure differs anywhere (a bug in layer 97) is not collapsed, so its report
names its own nodes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import onnx

from analyzer.layout import Layout

__all__ = ["Collapse", "LayerRun", "boundary_is_fixpoint", "collapse_layers", "layer_of"]

_LAYER = re.compile(r"(?:^|[./'\s])(?:layers|layer|h|blocks)[./](\d+)(?=[./']|$)")
_SCOPES_KEY = "pkg.torch.onnx.name_scopes"


def layer_of(node: onnx.NodeProto) -> int | None:
    """The decoder-layer index of a node from its module scope or legacy name, or None."""
    for prop in node.metadata_props:
        if prop.key == _SCOPES_KEY:
            m = _LAYER.search(prop.value)
            return int(m.group(1)) if m else None
    m = _LAYER.search(node.name)
    return int(m.group(1)) if m else None


@dataclass
class LayerRun:
    """Layers ``first..last`` are identical; ``first`` stands for all of them."""

    first: int
    last: int
    # per graph (0 = seq, 1.. = ranks): [(value read by layer first+1 from layer first,
    #                                      value read by layer first from layer first-1)]
    boundary: list[list[tuple[str, str]]] = field(default_factory=list)


@dataclass
class Collapse:
    """The collapsed graphs and the runs that were collapsed."""

    seq: onnx.ModelProto
    ranks: list[onnx.ModelProto]
    runs: list[LayerRun]
    layers: int

    @property
    def removed(self) -> int:
        """Number of layers removed."""
        return sum(r.last - r.first for r in self.runs)


def _shapes(model: onnx.ModelProto) -> dict[str, tuple]:
    out: dict[str, tuple] = {}
    for vi in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
        dims = vi.type.tensor_type.shape.dim
        out[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else d.dim_param for d in dims)
    for init in model.graph.initializer:
        out[init.name] = tuple(init.dims)
    return out


def _value_digest(t: onnx.TensorProto) -> str:
    """Digest of a tensor's type, shape and values (not its name)."""
    c = onnx.TensorProto()
    c.CopyFrom(t)
    c.name = ""
    return hashlib.blake2b(c.SerializeToString(), digest_size=8).hexdigest()


class _Graph:
    """Per-graph index: layer of each node, producer of each value, layer fingerprints."""

    def __init__(self, model: onnx.ModelProto, relations: Mapping[str, Layout]) -> None:
        self.model = model
        g = model.graph
        self.nodes = list(g.node)
        self.layer = [layer_of(n) for n in self.nodes]
        self.producer: dict[str, tuple[int, int]] = {}
        for i, n in enumerate(self.nodes):
            for pos, o in enumerate(n.output):
                self.producer[o] = (i, pos)
        self.members: dict[int, list[int]] = {}
        for i, k in enumerate(self.layer):
            if k is not None:
                self.members.setdefault(k, []).append(i)
        self.local = {i: j for k, idx in self.members.items() for j, i in enumerate(idx)}
        # layers reading each value: a value made in one layer and read by several later
        # ones (a scale or mask the exporter computed once) is shared, not a layer output
        self.reader_layers: dict[str, set] = {}
        for n, k in zip(self.nodes, self.layer):
            for v in n.input:
                self.reader_layers.setdefault(v, set()).add(k)
        self.shapes = _shapes(model)
        self.consts = {
            i.name: _value_digest(i)
            for i in g.initializer
            if not i.data_location and len(i.raw_data) + 4 * len(i.float_data) + 8 * len(i.int64_data) <= 1 << 16
        }
        self.boundary_values = {v.name for v in g.input} | {i.name for i in g.initializer}
        self.relations = relations

    def _weight_key(self, name: str, k: int) -> str:
        return re.sub(rf"(?<=[./]){k}(?=[./])", "#", name)

    def input_key(self, value: str, k: int) -> tuple:
        if not value:
            return ("",)
        if value in self.producer:
            i, pos = self.producer[value]
            owner = self.layer[i]
            if owner == k:
                return ("L", self.local[i], pos)
            chained = self.reader_layers.get(value, set()) <= {owner, owner + 1 if owner is not None else None}
            if owner == k - 1 and chained:  # counted from the end: the first layer may have extra nodes in front
                return ("P", self.local[i] - len(self.members[owner]), pos)
            return ("X", value)
        if value in self.consts and f".{k}." not in value:
            return ("C", self.consts[value])
        lay = self.relations.get(value)
        return ("W", self._weight_key(value, k), self.shapes.get(value), str(lay) if lay else None)

    def fingerprint(self, k: int) -> str:
        h = hashlib.blake2b(digest_size=16)
        for i in self.members.get(k, []):
            n = self.nodes[i]
            attrs = sorted((a.name, a.SerializeToString()) for a in n.attribute)
            item = (
                n.op_type,
                n.domain,
                attrs,
                [self.input_key(v, k) for v in n.input],
                [self.shapes.get(o) for o in n.output],
            )
            h.update(repr(item).encode())
        return h.hexdigest()

    def outputs_read_from(self, k: int) -> list[tuple[str, tuple[int, int]]]:
        """Values of layer k read outside it: (value, (local index, pos))."""
        out = []
        mine = set(self.members.get(k, []))
        for i, n in enumerate(self.nodes):
            if i in mine:
                continue
            for v in n.input:
                p = self.producer.get(v)
                if p is not None and p[0] in mine:
                    out.append((v, (self.local[p[0]], p[1])))
        for o in self.model.graph.output:
            p = self.producer.get(o.name)
            if p is not None and p[0] in mine:
                out.append((o.name, (self.local[p[0]], p[1])))
        return out

    def value_at(self, k: int, slot: tuple[int, int]) -> str:
        i = self.members[k][slot[0]]
        return self.nodes[i].output[slot[1]]


def _runs(graphs: Sequence[_Graph]) -> list[tuple[int, int]]:
    layers = sorted(graphs[0].members)
    if any(sorted(g.members) != layers for g in graphs):
        return []
    prints = [tuple(g.fingerprint(k) for g in graphs) for k in layers]
    runs = []
    start = 0
    for j in range(1, len(layers) + 1):
        if j == len(layers) or prints[j] != prints[start] or layers[j] != layers[j - 1] + 1:
            if j - start >= 2:  # keep the first layer of the run, remove the others
                runs.append((layers[start], layers[j - 1]))
            start = j
    return runs


def _collapse_graph(g: _Graph, first: int, last: int) -> list[tuple[str, str]]:
    """Remove layers first+1..last of g (in place); rewire readers of layer last to layer first.

    Returns the boundary pairs (value of layer `first` at a slot read by the next layer,
    value of layer `first-1` at the matching slot read by layer `first`).
    """
    rename = {v: g.value_at(first, slot) for v, slot in g.outputs_read_from(last)}
    boundary = []
    for i in g.members[first + 1]:
        for v in g.nodes[i].input:
            key = g.input_key(v, first + 1)
            if key[0] == "P":
                prev = g.value_at(first - 1, key[1:]) if first - 1 in g.members else None
                if prev is not None:
                    boundary.append((v, prev))
    drop = {i for k in range(first + 1, last + 1) for i in g.members[k]}
    kept = [n for i, n in enumerate(g.nodes) if i not in drop]
    for n in kept:
        for pos, v in enumerate(n.input):
            if v in rename:
                n.input[pos] = rename[v]
    del g.model.graph.node[:]
    g.model.graph.node.extend(kept)
    _prune(g.model)
    return sorted(set(boundary))


def _prune(model: onnx.ModelProto) -> None:
    """Drop value_info, initializers and graph inputs that no remaining node reads."""
    g = model.graph
    used = {v for n in g.node for v in n.input} | {v for n in g.node for v in n.output}
    used |= {o.name for o in g.output}
    for field_name in ("value_info", "initializer", "input"):
        items = getattr(g, field_name)
        keep = [x for x in items if x.name in used]
        if len(keep) != len(items):
            del items[:]
            items.extend(keep)


def collapse_layers(
    seq: onnx.ModelProto, ranks: Sequence[onnx.ModelProto], relations: Mapping[str, Layout]
) -> Collapse | None:
    """Collapse runs of identical layers in copies of the graphs.

    Args:
        seq: the sequential model (canonical form).
        ranks: the rank models (canonical form).
        relations: input relations by seq value name (part of each weight's fingerprint).

    Returns:
        A :class:`Collapse`, or None when no run of at least 2 identical layers exists.
    """
    copies = []
    for m in (seq, *ranks):
        c = onnx.ModelProto()
        c.CopyFrom(m)
        copies.append(c)
    graphs = [_Graph(m, relations) for m in copies]
    found = _runs(graphs)
    if not found:
        return None
    runs = []
    for first, last in reversed(found):  # from the back, so layer indices stay valid
        graph_outputs = [{o.name for o in g.model.graph.output} for g in graphs]
        if any(v in outs for g, outs in zip(graphs, graph_outputs) for v, _ in g.outputs_read_from(last)):
            continue  # a graph output comes straight out of the run: keep its names
        run = LayerRun(first, last)
        for g in graphs:
            run.boundary.append(_collapse_graph(g, first, last))
            g.__init__(g.model, relations)
        runs.append(run)
    if not runs:
        return None
    total = len(graphs[0].members) + sum(r.last - r.first for r in runs)
    return Collapse(copies[0], copies[1:], list(reversed(runs)), total)


def boundary_is_fixpoint(collapse: Collapse, holds: Mapping[str, set], pieces: Mapping[tuple, set]) -> bool:
    """Whether each collapsed run maps its boundary relations to themselves.

    Args:
        collapse: the collapse that was checked.
        holds: seq value -> set of (kind, axis, param) that hold for it.
        pieces: (seq value, rank, (kind, axis, param)) -> set of rank values.

    Returns:
        True when, for every value that layer ``first+1`` would read from layer ``first``, the
        relations equal those of the value layer ``first`` read from layer ``first-1`` at the
        same slot, with every rank's piece at that slot too.
    """
    for run in collapse.runs:
        rank_next = [{prev: v for v, prev in pairs} for pairs in run.boundary[1:]]
        for w, u in run.boundary[0]:
            if holds.get(u, set()) != holds.get(w, set()):
                return False
            for lay in holds.get(u, set()):
                for r, nxt in enumerate(rank_next):
                    have = pieces.get((w, r, lay), set())
                    if not any(nxt.get(pu) in have for pu in pieces.get((u, r, lay), set())):
                        return False
    return True
