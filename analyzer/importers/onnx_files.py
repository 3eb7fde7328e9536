"""Graph files in: ONNX files, and torch.fx dumps through :mod:`analyzer.importers.fx`.

Every graph of a check is loaded here and comes out as an ``onnx.ModelProto``; nothing after
this stage knows where a graph came from. A rank file whose graph is stored byte for byte like
an earlier file's is recorded as such (:class:`KnownGraphs`), so later stages reuse its checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import onnx

from analyzer.errors import InputError
from analyzer.facts.extract import GraphKey, ModelFile, load_model_file
from analyzer.importers.hlo import is_hlo_path
from analyzer.speedups.proofs import WireProofs

__all__ = ["KnownGraphs", "bind_constants", "check_same_model", "load_graph", "load_ranks", "select_outputs"]


def check_same_model(
    seq_path: str,
    seq: onnx.ModelProto,
    rank_paths: Sequence[str],
    ranks: Sequence[onnx.ModelProto],
    same: Sequence[int] = (),
) -> None:
    """Refuse rank files that are not exports of the sequential model: another number of
    outputs, or no input or weight name in common.

    Raises:
        InputError: naming the rank file.
    """
    seq_outputs = len(seq.graph.output)
    seq_names = {i.name for i in seq.graph.initializer} | {i.name for i in seq.graph.input}
    for r, (path, model) in enumerate(zip(rank_paths, ranks)):
        if len(same) == 1 + len(ranks) and same[r + 1] != r + 1:
            continue  # its graph is stored like an earlier one's, checked already
        if len(model.graph.output) != seq_outputs:
            raise InputError(
                f"{path}: rank {r} has {len(model.graph.output)} outputs but {seq_path} has {seq_outputs}: "
                "is it an export of another model?"
            )
        names = {i.name for i in model.graph.initializer} | {i.name for i in model.graph.input}
        if seq_names and not names & seq_names:
            raise InputError(
                f"{path}: rank {r} shares no input or weight name with {seq_path}: is it an export of another model?"
            )


def select_outputs(path: str, model: onnx.ModelProto, positions: Sequence[int] | None) -> onnx.ModelProto:
    """``model`` with only the graph outputs at ``positions`` (a copy; the file is untouched)."""
    if positions is None:
        return model
    outs = list(model.graph.output)
    bad = [i for i in positions if i >= len(outs)]
    if bad:
        raise InputError(f"{path}: the spec selects output {bad[0]} but the graph has {len(outs)} outputs")
    picked = onnx.ModelProto()
    picked.CopyFrom(model)
    del picked.graph.output[:]
    picked.graph.output.extend(outs[i] for i in positions)
    return picked


@dataclass
class KnownGraphs:
    """The graphs loaded so far: the stored bytes of each distinct ONNX graph (``keys``, of
    the graph loaded ``first``, whose model is ``models``), for each graph the index of the
    first one stored like it (``same``, see :class:`analyzer.model.CheckInput`), and each file's own
    ``metadata_props`` (``metadata``: a model shared with an earlier file carries that
    file's)."""

    keys: list[GraphKey] = field(default_factory=list)
    first: list[int] = field(default_factory=list)
    models: list[onnx.ModelProto] = field(default_factory=list)
    same: list[int] = field(default_factory=list)
    metadata: list[dict[str, str]] = field(default_factory=list)

    def add(self, loaded: ModelFile | None, model: onnx.ModelProto | None = None, twin: int | None = None) -> None:
        """Record the next graph (None: not an ONNX file, loaded as ``model``; ``twin``: the
        index of an earlier graph it is the same as, an SPMD file imported once for all ranks)."""
        i = len(self.same)
        if twin is not None:
            self.metadata.append({})
            self.same.append(self.same[twin])
            return
        own = loaded.own or loaded.model if loaded is not None else model
        self.metadata.append({p.key: p.value for p in own.metadata_props} if own is not None else {})
        if loaded is not None and loaded.same_as is not None:
            self.same.append(self.first[loaded.same_as])
            return
        self.same.append(i)
        if loaded is not None and loaded.graph_key is not None:
            self.keys.append(loaded.graph_key)
            self.first.append(i)
            self.models.append(loaded.model)


def load_graph(
    path: str | Path,
    *,
    sequential: bool,
    outputs: Sequence[int] | None = None,
    constants: Mapping | None = None,
    groups: Mapping | None = None,
    known: KnownGraphs | None = None,
    proofs: WireProofs | None = None,
) -> onnx.ModelProto:
    """Load one graph: an ONNX file, a torch.fx dump (``.py``) imported by :mod:`analyzer.importers.fx`,
    or an XLA HLO file (``.hlo``, ``.pb``) imported by :mod:`analyzer.importers.hlo` (the
    sequential one as a single process: its collectives are identities). ``known``
    records it (an ONNX graph stored like a known one is not checked again); ``proofs`` takes
    its string and shape checks (:func:`analyzer.facts.load_model_file`).

    Raises:
        InputError: as :func:`analyzer.facts.load_model` and :func:`analyzer.importers.fx.import_fx`.
    """
    if is_hlo_path(path):
        from analyzer.importers.hlo import import_hlo

        model = import_hlo(path, rank=0, world_size=1) if sequential else import_hlo(path)
        if known is not None:
            known.add(None, model)
        return select_outputs(str(path), model, outputs)
    if str(path).endswith(".py"):
        from analyzer.importers.fx import import_fx

        p = Path(path)
        model = import_fx(
            p, world_size=1 if sequential else None, constants=constants, outputs=outputs, group_sizes=groups
        )
        if known is not None:
            known.add(None, model)
        return model
    if known is not None:
        loaded = load_model_file(path, known.keys, known.models, proofs)
    else:
        loaded = load_model_file(path, proofs=proofs)
    if known is not None:
        known.add(loaded)
    return select_outputs(str(path), bind_constants(str(path), loaded.model, constants), outputs)


def bind_constants(path: str, model: onnx.ModelProto, constants: Mapping[str, float] | None) -> onnx.ModelProto:
    """``model`` with each graph input named in ``constants`` turned into an initializer of
    that value (its dtype and shape from the input's type): what ``shardlog import-fx`` leaves
    as a graph input when not given ``--constant`` gets the spec's value, as the torch.fx dump
    itself would (:func:`analyzer.importers.fx.import_fx`). A copy; the file is untouched.

    Raises:
        InputError: a named input without a fixed shape or of a dtype numpy cannot fill.
    """
    names = {i.name for i in model.graph.input} & set(constants or {})
    if not names:
        return model
    import numpy as np
    from onnx import helper, numpy_helper

    bound = onnx.ModelProto()
    bound.CopyFrom(model)
    kept = []
    for vi in bound.graph.input:
        if vi.name not in names:
            kept.append(vi)
            continue
        t = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        if not t.HasField("shape") or None in dims:
            raise InputError(f"{path}: constant {vi.name!r} is a graph input without a fixed shape")
        try:
            array = np.full(dims, constants[vi.name], dtype=helper.tensor_dtype_to_np_dtype(t.elem_type))
        except (KeyError, TypeError, ValueError):
            raise InputError(f"{path}: constant {vi.name!r} has a dtype the spec's number cannot fill") from None
        bound.graph.initializer.append(numpy_helper.from_array(array, vi.name))
    del bound.graph.input[:]
    bound.graph.input.extend(kept)
    return bound


def load_ranks(rank_paths, known: KnownGraphs, proofs, extra) -> list[onnx.ModelProto]:
    """The rank graphs; an HLO file is parsed once and imported for each rank r of N (once for
    all ranks when the program does not read its rank)."""
    from analyzer.importers.hlo import hlo_to_onnx, load_module, reads_rank

    n = len(rank_paths)
    ranks: list[onnx.ModelProto] = []
    hlo: dict[str, tuple] = {}  # path -> (module, its shared model and first index, or None)
    for r, p in enumerate(rank_paths):
        if not is_hlo_path(p):
            ranks.append(load_graph(p, sequential=False, known=known, proofs=proofs, **extra))
            continue
        if str(p) not in hlo:
            module = load_module(p)
            hlo[str(p)] = (module, None)
        module, shared = hlo[str(p)]
        if shared is not None:
            ranks.append(shared[0])
            known.add(None, twin=shared[1])
            continue
        model = select_outputs(str(p), hlo_to_onnx(module, rank=r, world_size=n), extra.get("outputs"))
        known.add(None, model)
        if not reads_rank(module):
            hlo[str(p)] = (module, (model, len(known.same) - 1))
        ranks.append(model)
    return ranks
