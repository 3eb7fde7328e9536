"""Layer memoization: solve one decoder layer, reuse it for every identical layer.

Decoder layers of a model are the same computation many times (126 in Llama-3.1-405B). Nodes
are grouped into layers by their module scope (``model.layers.K``, ``h.K``, ``blocks.K``).
Each layer gets a *fingerprint* of its structure (op types, domains, attributes, output
shapes, the wiring between its nodes, constants by value, weights by their name with the
layer index removed, their shape and their input relation) that ignores names and metadata.
A run of consecutive layers ``a..b`` whose fingerprints are equal in the sequential graph
and in every rank graph is collapsed to layer ``a``: layers ``a+1..b`` are removed and what
read layer ``b``'s outputs reads layer ``a``'s instead.

Graphs whose nodes carry no module scope (torch.fx dumps, :mod:`analyzer.importers.fx`) get their layers
from repetition instead (:mod:`analyzer.speedups.repeats`: the longest tandem repeat of node signatures,
cut at a signature common to all graphs). For those layers, what a layer alone reads from the
layer before it, or from before the first layer (the embedding's output), is keyed by the order
in which the layer first reads it (:meth:`_Graph.entries`), so a run can start at layer 0; and
a graph input named by position (``primals_19``, ``native_dropout.3``) that one layer alone
reads is keyed by (its prefix, N minus that layer's smallest N for the prefix).

Soundness: the collapsed check is an induction over the run. It is only accepted when the
relations found on layer ``a``'s outputs equal those of the inputs it read from layer ``a-1``
(the boundary relations are a fixpoint, with the rank pieces at the same slots, and every
related value a rank's layer ``a+1`` reads from layer ``a`` is such a piece); then every layer of the
run maps them to themselves. Otherwise the driver checks the whole graph. A layer whose
structure differs anywhere (a bug in layer 97) is not collapsed, so its report names its own
nodes. Only the first layer of a run may read from before the layers, and only its last may
have values read beyond the next layer (the others are removed).

Weights named by position: the collapsed check pairs a seq weight with the rank weight of the
same name, and layer k's fingerprint only says that layer k reads, at each offset, a weight
of the same shape and input relation as layer a does. A rank whose layer 1 read layer 2's
weights (names shifted by a whole layer, same shapes) would have fingerprints equal to the
sequential graph's and the collapse would hide it. So a layer joins a run only when each
prefix's smallest N moved by the same amount from the layer before in the sequential graph
and in every rank graph (:func:`_runs`, from :func:`_side`; the forked child sends them as
they are): then layer k pairs its weights by name exactly as layer a does.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

import onnx

from analyzer.facts.extract import copy_fields, with_graph
from analyzer.layout import Layout
from analyzer.rewrite.canonical import canonical_forms
from analyzer.speedups.beside import can_fork, read_exactly, write_all
from analyzer.speedups.repeats import Repeat, choose_anchor, find_repeat, layer_numbers, node_signature

if TYPE_CHECKING:
    from analyzer.model import Derivation
    from analyzer.speedups.proofs import WireProofs

__all__ = ["Collapse", "LayerRun", "boundary_is_fixpoint", "collapse_layers", "layer_of", "solve_collapsed"]

_LAYER = re.compile(r"(?:^|[./'\s])(?:layers|layer|h|blocks)[./](\d+)(?=[./']|$)")
_SCOPES_KEY = "pkg.torch.onnx.name_scopes"
# a maximal run of digits between dots or slashes: it equals the text of k exactly where
# ``(?<=[./])k(?=[./])`` matches (k has no leading zero, so its match is a whole run)
_NUMBER = re.compile(r"(?<=[./])[0-9]+(?=[./])")
# a graph input named by position (torch.fx: ``primals_19``, ``native_dropout.3``)
_NUMBERED = re.compile(r"(.*?)([0-9]+)")


def layer_of(node: onnx.NodeProto) -> int | None:
    """The decoder-layer index of a node from its module scope or legacy name, or None."""
    for prop in node.metadata_props:
        if prop.key == _SCOPES_KEY:
            m = _LAYER.search(prop.value)
            return int(m.group(1)) if m else None
    m = _LAYER.search(node.name)
    return int(m.group(1)) if m else None


class _ScopeLayers:
    """:func:`layer_of` for scope texts, cached by the text before its last ``", "`` (the
    scope list without the node's own name, which many nodes share).

    A match of ``_LAYER`` in that prefix that ends before the prefix does (so its look-ahead
    read a character of the prefix) is the first match in the whole text too: a match that
    starts earlier in the whole text and reaches past the prefix would contain this one's
    first character, which no character of a match (``layers``, ``.``, digits) can be."""

    def __init__(self) -> None:
        self.by_prefix: dict[str, int | None] = {}

    def __call__(self, text: str) -> int | None:
        cut = text.rfind(", ")
        prefix = text[:cut] if cut > 0 else ""
        found = self.by_prefix.get(prefix, _UNKNOWN)
        if found is _UNKNOWN:
            m = _LAYER.search(prefix)
            found = self.by_prefix[prefix] = int(m.group(1)) if m and m.end() < len(prefix) else None
        if found is not None:
            return found
        m = _LAYER.search(text)
        return int(m.group(1)) if m else None


_UNKNOWN = object()


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
    """Value name -> dims (``dim_value``, else ``dim_param``); initializers over value infos.
    Equal types serialize to equal bytes, so each distinct type is decoded once."""
    out: dict[str, tuple] = {}
    decoded: dict[bytes, tuple] = {}
    for vi in (*model.graph.value_info, *model.graph.input, *model.graph.output):
        t = vi.type
        key = t.SerializeToString()
        dims = decoded.get(key)
        if dims is None:
            shape = t.tensor_type.shape.dim
            dims = decoded[key] = tuple(d.dim_value if d.HasField("dim_value") else d.dim_param for d in shape)
        out[vi.name] = dims
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
    """Per-graph index: the nodes as tuples (read from the protos once), the layer of each
    node, the producer of each value, layer fingerprints; collapsing a run edits the tuples,
    and :meth:`collapsed` builds the model that is left."""

    def __init__(self, model: onnx.ModelProto, relations: Mapping[str, Layout]) -> None:
        self.model = model
        self.relations = relations
        g = model.graph
        self.shapes = shapes = _shapes(model)
        self.layer, self.ins, self.outs, self.items, self.out_shapes = [], [], [], [], []
        layer, ins, outs, items = self.layer.append, self.ins.append, self.outs.append, self.items.append
        out_shapes, get_shape = self.out_shapes.append, shapes.get
        scope_layer, scopes_key, search = _ScopeLayers(), _SCOPES_KEY, _LAYER.search
        for n in g.node:  # one pass over the protos (each field read builds Python objects)
            for prop in n.metadata_props:
                if prop.key == scopes_key:
                    layer(scope_layer(prop.value))
                    break
            else:
                m = search(n.name)
                layer(int(m.group(1)) if m else None)
            ins(n.input[:])  # lists (slicing a repeated field is the fastest copy)
            o = n.output[:]
            outs(o)
            out_shapes(tuple([get_shape(v) for v in o]))
            attrs = n.attribute
            items((n.op_type, n.domain, tuple(sorted([a.SerializeToString() for a in attrs])) if attrs else ()))
        self.position = list(range(len(self.ins)))
        self.consts = {
            i.name: _value_digest(i)
            for i in g.initializer
            if not i.data_location and len(i.raw_data) + 4 * len(i.float_data) + 8 * len(i.int64_data) <= 1 << 16
        }
        self.graph_outputs = [o.name for o in g.output]
        # layers from repetition (analyzer/speedups/repeats.py) when no node has a scope-derived layer
        self.repeat: Repeat | None = None
        self.sigs: list[tuple] = []
        self.by_repetition = False
        self.own_inputs: dict[str, int] = {}  # graph input -> the one layer that reads it
        self.bases: dict[int, dict[str, int]] = {}  # layer -> input-name prefix -> smallest N
        if all(k is None for k in self.layer):
            self.sigs = [node_signature(n) for n in g.node]
            self.repeat = find_repeat(self.sigs)
        self._index()

    def number_layers(self, anchor) -> None:
        """Number the periods of :attr:`repeat` cut at ``anchor`` as layers 0..L-1 (nothing
        when there is no repeat or no anchor): see :mod:`analyzer.speedups.repeats`."""
        if self.repeat is None or anchor is None:
            return
        numbers = layer_numbers(self.sigs, self.repeat, anchor)
        if not numbers:
            return
        self.layer = [numbers.get(i) for i in range(len(self.ins))]
        self.by_repetition = True
        self._index()
        readers: dict[str, set] = {}
        for i, k in enumerate(self.layer):
            if k is not None:
                for v in self.ins[i]:
                    if v and v not in self.producer and v not in self.consts:
                        readers.setdefault(v, set()).add(k)
        self.own_inputs = {v: next(iter(ks)) for v, ks in readers.items() if len(ks) == 1}
        for v, k in self.own_inputs.items():
            m = _NUMBERED.fullmatch(v)
            if m:
                base = self.bases.setdefault(k, {})
                base[m.group(1)] = min(base.get(m.group(1), int(m.group(2))), int(m.group(2)))

    def _index(self) -> None:
        self.prints: dict[int, tuple] = {}
        self._entries: dict[int, dict[str, int]] = {}
        layer = self.layer
        self.producer: dict[str, tuple[int, int]] = {}
        for i, outs in enumerate(self.outs):
            for pos, o in enumerate(outs):
                self.producer[o] = (i, pos)
        self.members: dict[int, list[int]] = {}
        for i, k in enumerate(layer):
            if k is not None:
                self.members.setdefault(k, []).append(i)
        self.local = {i: j for k, idx in self.members.items() for j, i in enumerate(idx)}
        # reads of a value made by a node of another layer (or of none), in node order
        get = self.producer.get
        self.cross = [
            (i, v, p)
            for i, ins in enumerate(self.ins)
            for v in ins
            if (p := get(v)) is not None and layer[p[0]] != layer[i]
        ]
        # layers reading each such value: a value made in one layer and read by several later
        # ones (a scale or mask the exporter computed once) is shared, not a layer output
        self.foreign: dict[str, set] = {}
        for i, v, _ in self.cross:
            self.foreign.setdefault(v, set()).add(layer[i])

    def _weight_key(self, name: str, k: int) -> str | tuple:
        """``name`` with each ``k`` written between dots or slashes (``layers.5.mlp``) as ``#``;
        for layers found by repetition, a name ending in a number N read by layer k alone
        (``primals_19``) is (its prefix, N minus layer k's smallest N for that prefix)."""
        if self.by_repetition:
            m = _NUMBERED.fullmatch(name)
            if m and self.own_inputs.get(name) == k:
                return (m.group(1), int(m.group(2)) - self.bases[k][m.group(1)])
            return name
        text = str(k)
        if text not in name:
            return name
        return _NUMBER.sub(lambda m: "#" if m.group() == text else m.group(), name)

    def input_key(self, value: str, k: int) -> tuple:
        """Where layer k's read of ``value`` comes from: ``("L", local index, pos)`` inside
        layer k; ``("P", index from the end, pos)`` from layer k-1 when only layer k reads it
        there; ``("X", value)`` from elsewhere; ``("C", digest)`` a constant; else a weight
        ``("W", name with k written #, shape, input relation)``."""
        if not value:
            return ("",)
        p = self.producer.get(value)
        if p is not None:
            return self._produced_key(value, p, k)
        if value in self.consts and f".{k}." not in value:
            return ("C", self.consts[value])
        lay = self.relations.get(value)
        return ("W", self._weight_key(value, k), self.shapes.get(value), str(lay) if lay else None)

    def _produced_key(self, value: str, p: tuple[int, int], k: int) -> tuple:
        i, pos = p
        owner = self.layer[i]
        if owner == k:
            return ("L", self.local[i], pos)
        if self.by_repetition:
            if owner is None or owner == k - 1:
                entry = self.entries(k).get(value)
                if entry is not None:
                    return ("P", entry)
            return ("X", value)
        if owner == k - 1:
            readers = self.foreign.get(value)
            if not readers or (len(readers) == 1 and k in readers):
                # counted from the end: the first layer may have extra nodes in front
                return ("P", self.local[i] - len(self.members[owner]), pos)
        return ("X", value)

    def entries(self, k: int) -> dict[str, int]:
        """For layers found by repetition: the values layer k alone reads from the layer before
        it or from a node of no layer (what went in before the first layer), numbered in the
        order layer k first reads them. Layer 0 reads the embedding's output where layer 1 reads
        layer 0's: both are ``("P", number)``, so a run can start at layer 0."""
        found = self._entries.get(k)
        if found is None:
            found = self._entries[k] = {}
            layer, get = self.layer, self.producer.get
            for i in self.members.get(k, ()):
                for v in self.ins[i]:
                    p = get(v) if v else None
                    if p is None or v in found or layer[p[0]] not in (None, k - 1):
                        continue
                    if self.foreign.get(v) == {k}:
                        found[v] = len(found)
        return found

    def fed_from_outside(self) -> set[int]:
        """Layers found by repetition that read a value of no layer as an entry (only the first
        layer of a run may: the boundary test compares the entries of the first two layers)."""
        layer, producer = self.layer, self.producer
        return {k for k in self.members if any(layer[producer[v][0]] is None for v in self.entries(k))}

    def fingerprint(self, k: int) -> tuple:
        """Layer k's structure: per node op type, domain, attributes, where each input comes
        from (:meth:`input_key`) and the output shapes (equal tuples for identical layers)."""
        if k not in self.prints:
            self.prints[k] = self._fingerprint(k)
        return self.prints[k]

    def _fingerprint(self, k: int) -> tuple:
        producer, layer, local = self.producer, self.layer, self.local
        key, produced = self.input_key, self._produced_key
        ins_of, items_of, out_shapes = self.ins, self.items, self.out_shapes
        items = []
        for i in self.members.get(k, ()):
            ins = []
            for v in ins_of[i]:
                p = producer.get(v) if v else None
                if p is None:
                    ins.append(key(v, k))
                elif layer[p[0]] == k:
                    ins.append(("L", local[p[0]], p[1]))
                else:
                    ins.append(produced(v, p, k))
            items.append((*items_of[i], tuple(ins), out_shapes[i]))
        return tuple(items)

    def outputs_read_from(self, k: int) -> list[tuple[str, tuple[int, int]]]:
        """Values of layer k read outside it: (value, (local index, pos))."""
        local, layer, producer = self.local, self.layer, self.producer
        out = [(v, (local[j], pos)) for _, v, (j, pos) in self.cross if layer[j] == k]
        for o in self.graph_outputs:
            p = producer.get(o)
            if p is not None and layer[p[0]] == k:
                out.append((o, (local[p[0]], p[1])))
        return out

    def value_at(self, k: int, slot: tuple[int, int]) -> str:
        i = self.members[k][slot[0]]
        return self.outs[i][slot[1]]

    def keep(self, kept: list[int], rename: Mapping[str, str]) -> None:
        """Keep only the nodes at the indices ``kept``, reading ``rename[v]`` for each v."""
        self.position = [self.position[i] for i in kept]
        self.layer = [self.layer[i] for i in kept]
        self.ins = [tuple(rename.get(v, v) for v in self.ins[i]) for i in kept]
        self.outs = [self.outs[i] for i in kept]
        self.items = [self.items[i] for i in kept]
        self.out_shapes = [self.out_shapes[i] for i in kept]
        self._index()

    def collapsed(self) -> onnx.ModelProto:
        """The model with only the kept nodes (inputs renamed), and only the value infos,
        initializers and graph inputs that they read or write."""
        g = self.model.graph
        out = onnx.ModelProto()
        copy_fields(self.model, out, {"graph"})
        copy_fields(g, out.graph, {"node", "value_info", "initializer", "input"})
        for p, ins in zip(self.position, self.ins):
            node = out.graph.node.add()
            node.CopyFrom(g.node[p])
            if node.input[:] != list(ins):
                node.input[:] = ins
        used = {o for outs in self.outs for o in outs} | {v for ins in self.ins for v in ins} | set(self.graph_outputs)
        for name in ("value_info", "initializer", "input"):
            getattr(out.graph, name).extend(x for x in getattr(g, name) if x.name in used)
        return out


class _Side(NamedTuple):
    """What the run search needs of one graph (pickled to the other process on the forked path).

    Attributes:
        layers: its layer numbers, ascending.
        prints: layer -> fingerprint (or a 128-bit digest of it).
        out_layers: layers a graph output comes out of (a run ending there keeps its names).
        leaky: layers a value of which is read beyond the next layer, and ``out_layers`` (only
            the last layer of a run may be one: the others are removed).
        bases: layer -> input-name prefix -> smallest N (:attr:`_Graph.bases`, weights named by
            position).
        fed: layers found by repetition that read a value of no layer (only the first layer of
            a run may).
    """

    layers: list[int]
    prints: dict[int, object]
    out_layers: set[int]
    leaky: set[int]
    bases: dict[int, dict[str, int]]
    fed: set[int]


def _side(g: _Graph, digest: bool) -> _Side:
    """The :class:`_Side` of ``g``; fingerprints as digests when they go to another process."""
    layers = sorted(g.members)
    if digest:
        prints = {k: hashlib.blake2b(repr(g.fingerprint(k)).encode(), digest_size=16).digest() for k in layers}
    else:
        prints = {k: g.fingerprint(k) for k in layers}
    out_layers = {g.layer[g.producer[o][0]] for o in g.graph_outputs if o in g.producer}
    layer = g.layer
    leaky = {layer[j] for i, _, (j, _) in g.cross if layer[j] is not None and layer[i] != layer[j] + 1}
    fed = g.fed_from_outside() if g.by_repetition else set()
    return _Side(layers, prints, out_layers, leaky | out_layers, g.bases, fed)


def _shifts(side: _Side, k: int) -> tuple:
    """How far each input-name prefix's base moves from layer k-1 to layer k in one graph."""
    now, before = side.bases.get(k, {}), side.bases.get(k - 1, {})
    return tuple(sorted((p, n - before[p] if p in before else None) for p, n in now.items()))


def _runs(sides: Sequence[_Side]) -> list[tuple[int, int]]:
    """Runs ``(first, last)`` of at least 2 consecutive layers equal in every graph (one
    :func:`_side` per distinct graph), but those a graph output comes out of; back to front,
    the order they are collapsed in (so layer indices stay valid).

    A layer joins the run of the layer before it when its fingerprints equal the run's first
    layer's in every graph, that layer is not read beyond its next layer (it would be removed),
    and each weight-name prefix's base moves by the same amount from the layer before in every
    graph (weights named by position: the collapsed check pairs names, see the module doc)."""
    layers = sides[0].layers
    if any(s.layers != layers for s in sides):
        return []
    prints = [tuple(s.prints[k] for s in sides) for k in layers]
    leaky = set().union(*(s.leaky for s in sides))
    fed = set().union(*(s.fed for s in sides))
    found, start = [], 0
    for j in range(1, len(layers) + 1):
        if (
            j == len(layers)
            or prints[j] != prints[start]
            or layers[j] != layers[j - 1] + 1
            or (j - 1 > start and layers[j - 1] in leaky)
            or layers[j] in fed
            or len({_shifts(s, layers[j]) for s in sides}) > 1
        ):
            if j - start >= 2:  # keep the first layer of the run, remove the others
                found.append((layers[start], layers[j - 1]))
            start = j
    return [(a, b) for a, b in reversed(found) if not any(b in s.out_layers for s in sides)]


def _collapse_graph(g: _Graph, first: int, last: int) -> list[tuple[str, str]]:
    """Remove layers first+1..last of g; rewire readers of layer last to layer first.

    Returns the boundary pairs (value of layer `first` at a slot read by the next layer,
    value of layer `first-1` at the matching slot read by layer `first`).
    """
    rename = {v: g.value_at(first, slot) for v, slot in g.outputs_read_from(last)}
    if g.by_repetition:  # entries matched by the order they are first read
        before = {j: v for v, j in g.entries(first).items()}
        boundary = [(v, before[j]) for v, j in g.entries(first + 1).items() if j in before]
    else:
        boundary = []
        for i in g.members[first + 1]:
            for v in g.ins[i]:
                key = g.input_key(v, first + 1)
                if key[0] == "P":
                    prev = g.value_at(first - 1, key[1:]) if first - 1 in g.members else None
                    if prev is not None:
                        boundary.append((v, prev))
    drop = {i for k in range(first + 1, last + 1) for i in g.members[k]}
    g.keep([i for i in range(len(g.ins)) if i not in drop], rename)
    return sorted(set(boundary))


def collapse_layers(
    seq: onnx.ModelProto,
    ranks: Sequence[onnx.ModelProto],
    relations: Mapping[str, Layout],
    same: Sequence[int] | None = None,
    proofs: WireProofs | None = None,
) -> Collapse | None:
    """Collapse runs of identical layers in copies of the graphs.

    Args:
        seq: the sequential model (canonical form).
        ranks: the rank models (canonical form).
        relations: input relations by seq value name (part of each weight's fingerprint).
        same: for each model (seq first), the index of an earlier model with the same graph
            (its own index when none): its index, fingerprints and collapse are reused.
        proofs: the files' string and shape checks, started here: in the child that does the
            rank graph's part when there is one, else in their own.

    Returns:
        A :class:`Collapse`, or None when no run of at least 2 identical layers exists.
    """
    models = (seq, *ranks)
    if same is not None and len(same) > 1 and same[:2] == [0, 1] and all(j in (0, 1) for j in same):
        beside = _collapse_beside(seq, ranks, relations, same, proofs)
        if beside is not _NO_CHILD:
            return beside
    if proofs is not None:
        proofs.start()
    graphs: list[_Graph] = []
    for i, model in enumerate(models):
        graphs.append(graphs[same[i]] if same is not None and same[i] != i else _Graph(model, relations))
        if i == 0 and graphs[0].repeat is None and all(k is None for k in graphs[0].layer):
            return None  # a sequential graph without layers has no run to collapse: skip the ranks
    unique = list({id(g): g for g in graphs}.values())
    anchor = choose_anchor(unique[0].repeat, [g.repeat for g in unique[1:]])
    for g in unique:
        g.number_layers(anchor)
    runs = []
    for first, last in _runs([_side(g, digest=False) for g in unique]):
        boundary = {id(g): _collapse_graph(g, first, last) for g in unique}
        runs.append(LayerRun(first, last, [boundary[id(g)] for g in graphs]))
    if not runs:
        return None
    return _result(graphs, models, runs)


def _result(graphs: Sequence[_Graph], models: Sequence[onnx.ModelProto], runs: list[LayerRun]) -> Collapse:
    total = len(graphs[0].members) + sum(r.last - r.first for r in runs)
    built: dict[int, onnx.ModelProto] = {}
    copies = []
    for g, model in zip(graphs, models):
        if id(g) not in built:
            copies.append(built.setdefault(id(g), g.collapsed()))
        elif model is g.model:  # one model object for several ranks: one collapsed model too
            copies.append(built[id(g)])
        else:
            copies.append(with_graph(model, built[id(g)].graph))
    return Collapse(copies[0], copies[1:], list(reversed(runs)), total)


# --- the rank graph beside the sequential one -------------------------------------------
#
# With one distinct rank graph (an SPMD export), indexing, fingerprinting and collapsing it is
# as much work as the sequential graph's and independent of it but for which runs to collapse.
# A forked child does the rank graph's part while this process does the sequential graph's;
# they exchange each layer's fingerprint digest and the layers a graph output comes out of,
# both find the same runs (:func:`_runs` on digests), and the
# child sends back its collapsed model and boundary pairs (a few hundred KB for 405B). Any
# failure of the child falls back to doing both here.

#: graphs with fewer nodes than this (the two together) are collapsed in one process
BESIDE_MIN_NODES = 6000
_NO_CHILD = object()


def _collapse_beside(seq, ranks, relations, same, proofs: WireProofs | None) -> Collapse | None | object:
    """:func:`collapse_layers` with the one distinct rank graph done in a forked child, which
    then runs ``proofs`` (waited for when they settle); ``_NO_CHILD`` when that does not pay
    or cannot be done."""
    import os
    import pickle

    if not can_fork():
        return _NO_CHILD
    if len(seq.graph.node) + len(ranks[0].graph.node) < BESIDE_MIN_NODES:
        return _NO_CHILD
    child_reads, parent_writes = os.pipe()  # (read end, write end)
    parent_reads, child_writes = os.pipe()
    job = proofs.child_job() if proofs is not None else None
    try:
        pid = os.fork()
    except OSError:
        for fd in (child_reads, parent_writes, parent_reads, child_writes):
            os.close(fd)
        if job is not None:
            proofs.abandon()
        return _NO_CHILD
    if pid == 0:  # the child: the rank graph's part
        code = 0
        try:
            os.close(parent_writes)
            os.close(parent_reads)
            g = _Graph(ranks[0], relations)
            _send(child_writes, g.repeat)
            g.number_layers(_receive(child_reads))
            _send(child_writes, _side(g, digest=True))
            runs = _receive(child_reads)
            boundary = [_collapse_graph(g, first, last) for first, last in runs]
            _send(child_writes, (boundary, g.collapsed().SerializeToString()))
            os.close(child_writes)
            if job is not None:
                job()
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(child_reads)
    os.close(child_writes)
    if job is not None:
        proofs.adopt(pid)  # the child goes on with the proofs: they wait for it
    try:
        g = _Graph(seq, relations)
        anchor = choose_anchor(g.repeat, [_receive(parent_reads)])
        _send(parent_writes, anchor)
        g.number_layers(anchor)
        mine = _side(g, digest=True)
        theirs = _receive(parent_reads)
        runs = _runs([mine, theirs])
        _send(parent_writes, runs)
        seq_boundary = [_collapse_graph(g, first, last) for first, last in runs]
        rank_boundary, rank_bytes = _receive(parent_reads)
    except (EOFError, OSError, pickle.UnpicklingError, ValueError):
        return _NO_CHILD  # the child failed: do both here
    finally:
        os.close(parent_writes)
        os.close(parent_reads)
        if job is None:
            os.waitpid(pid, 0)
    if not runs:
        return None
    rank = onnx.ModelProto.FromString(rank_bytes)
    layer_runs = [
        LayerRun(first, last, [sb if j == 0 else rb for j in same])
        for (first, last), sb, rb in zip(runs, seq_boundary, rank_boundary)
    ]
    total = len(g.members) + sum(last - first for first, last in runs)
    copies = [g.collapsed()]
    for model in ranks:
        copies.append(rank if model is ranks[0] else with_graph(model, rank.graph))
    return Collapse(copies[0], copies[1:], list(reversed(layer_runs)), total)


def _send(fd: int, obj) -> None:
    """``obj`` pickled, after its length (8 bytes), through the pipe ``fd``."""
    import pickle

    data = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    write_all(fd, len(data).to_bytes(8, "little") + data)


def _receive(fd: int):
    """What :func:`_send` sent through the other end of the pipe ``fd``."""
    import pickle

    return pickle.loads(read_exactly(fd, int.from_bytes(read_exactly(fd, 8), "little")))


def boundary_is_fixpoint(collapse: Collapse, holds: Mapping[str, set], pieces: Mapping[tuple, set]) -> bool:
    """Whether each collapsed run maps its boundary relations to themselves.

    Args:
        collapse: the collapse that was checked.
        holds: seq value -> set of (kind, axis, param) that hold for it.
        pieces: (seq value, rank, (kind, axis, param)) -> set of rank values.

    Returns:
        True when, for every value that layer ``first+1`` would read from layer ``first``, the
        relations equal those of the value layer ``first`` read from layer ``first-1`` at the
        same slot, with every rank's piece at that slot too; and every value a rank's layer
        ``first+1`` reads from layer ``first`` that is a piece of some seq value is such a
        piece (a rank whose layers were cut at another phase reads values no seq slot
        accounts for; values with no relation at all, after a bug, are left to the check).
    """
    related = {(r, v) for (_, r, _), values in pieces.items() for v in values}
    for run in collapse.runs:
        rank_next = [{prev: v for v, prev in pairs} for pairs in run.boundary[1:]]
        matched: list[set] = [set() for _ in rank_next]
        for w, u in run.boundary[0]:
            if holds.get(u, set()) != holds.get(w, set()):
                return False
            for lay in holds.get(u, set()):
                for r, nxt in enumerate(rank_next):
                    have = pieces.get((w, r, lay), set())
                    found = [pu for pu in pieces.get((u, r, lay), set()) if nxt.get(pu) in have]
                    if not found:
                        return False
                    matched[r].update(found)
        for r, (nxt, seen) in enumerate(zip(rank_next, matched)):
            if any(v not in seen and (r, v) in related for v in nxt):
                return False  # a rank's layer reads a related value no seq boundary slot explains
    return True

def solve_collapsed(
    inp, solve: Callable[[onnx.ModelProto, list[onnx.ModelProto]], Derivation]
) -> tuple[Derivation | None, str]:
    """Solve ``inp`` with its runs of identical decoder layers collapsed to one layer each.

    Args:
        inp: the :class:`~analyzer.model.CheckInput`.
        solve: runs the rules on a sequential graph and its rank graphs.

    Returns:
        The derivation and a note saying what was collapsed, or None and the reason the whole
        graph must be checked (no run of identical layers; a boundary value rewritten away; the
        boundary relations not a fixpoint).
    """
    t0 = time.perf_counter()
    same = inp.same_graph if len(inp.same_graph) == 1 + inp.world_size else None
    relations = {r.seq_value: r.layout for r in inp.relations}
    collapse = collapse_layers(inp.seq, inp.ranks, relations, same, proofs=inp.proofs)
    if collapse is None:
        return None, "no run of identical layers"
    collapse = _canonical_collapse(collapse, same, inp.expand_ops)
    if collapse is None:
        return None, "a boundary value of the collapsed layers is rewritten away: whole graph checked"
    t_memo = time.perf_counter() - t0
    deriv = solve(collapse.seq, collapse.ranks)
    deriv.timings["memo"] = t_memo
    holds, pieces = _relation_index(deriv)
    if not boundary_is_fixpoint(collapse, holds, pieces):
        return None, "boundary relations of the collapsed layers are not a fixpoint: whole graph checked"
    spans = ", ".join(f"{r.first}..{r.last}" for r in collapse.runs)
    deriv.memo = f"layers {spans} solved once each ({collapse.removed} of {collapse.layers} layers reused)"
    return deriv, deriv.memo


def _canonical_collapse(collapse: Collapse, same: Sequence[int] | None, expand=frozenset()) -> Collapse | None:
    """The collapse with its graphs in canonical form, or None when the rewrite removed a value
    the boundary test reads (it would find no relation on either side and pass vacuously).

    Layers are fingerprinted and collapsed as exported, and only what is left is rewritten:
    the rewrite keeps each graph's semantics, so the induction over a run is unchanged."""
    canonical = canonical_forms([collapse.seq, *collapse.ranks], same or [], expand)
    defined_in: dict[int, set[str]] = {}  # by model object: rank models may be one object
    for run in collapse.runs:
        for model, pairs in zip(canonical, run.boundary):
            defined = defined_in.get(id(model))
            if defined is None:
                defined = defined_in[id(model)] = _defined_values(model)
            if any(w not in defined or u not in defined for w, u in pairs):
                return None
    return replace(collapse, seq=canonical[0], ranks=canonical[1:])


def _defined_values(model: onnx.ModelProto) -> set[str]:
    g = model.graph
    out = {o for n in g.node for o in n.output}
    out.update(i.name for i in g.input)
    out.update(i.name for i in g.initializer)
    return out


def _relation_index(deriv: Derivation) -> tuple[dict, dict]:
    holds: dict[str, set] = {}
    for s, k, a, p in deriv.derived.get("Holds", []):
        holds.setdefault(s, set()).add((k, a, p))
    cols = list(deriv.decls["Piece"].column_names)
    pieces: dict[tuple, set] = {}
    for row in deriv.derived.get("Piece", []):
        x = dict(zip(cols, row))
        pieces.setdefault((x["s"], x["r"], (x["kind"], x["axis"], x["param"])), set()).add(x["d"])
    return holds, pieces
