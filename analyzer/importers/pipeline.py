"""Pipeline parallelism: stage graphs chained by boundary tensor names into one graph per rank.

A pipeline-parallel model (``torch.distributed.pipelining``, torchtitan, Megatron-LM) runs
stage s on its own group of processes; what crosses a stage boundary is a list of tensors
sent point to point. shardlog takes one ONNX file per process, as for tensor parallelism,
in global-rank order with the tensor-parallel rank varying fastest (Megatron's default rank
order, torchtitan's ``("pp", ..., "tp")`` device mesh)::

    shardlog check seq.onnx stage0.onnx stage1.onnx --pp 2                  # PP 2
    shardlog check seq.onnx s0_tp0.onnx s0_tp1.onnx s1_tp0.onnx s1_tp1.onnx --pp 2   # PP 2 x TP 2

File ``f`` is stage ``f // T``, tensor-parallel rank ``f % T`` with ``T = files / PP``. The
stages of tensor-parallel rank t are chained into one graph by :func:`chain_stages`: an
input of stage s is connected to the output of the same name of an earlier stage (the
boundary tensor), or is a graph input of the sequential model (``input_ids`` read again by
a later stage). The chain is built with ``onnx.compose.merge_models`` (io_map from the
names); intermediate values of stage s >= 1 are renamed ``stage{s}/<name>`` first
(``onnx.compose.add_prefix_graph``) because every stage was exported on its own and reuses
names such as ``val_3``. Each node records its stage in the metadata prop
``shardlog.stage``. The T chained graphs are then checked as T tensor-parallel ranks (for PP
alone: one rank, every relation ``Replicate``), so the rule library proves chain ==
sequential without knowing about stages.

Errors (one line, :class:`InputError`): a stage input that no earlier stage produces and
that is not an input of the sequential graph; a boundary tensor whose dtype or shape differs
between the producing and the reading stage; a stage output that reuses the name of a value
of an earlier stage; files that do not split into the given number of stages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import onnx
import onnx.compose

from analyzer.errors import InputError

__all__ = ["PipelineInfo", "STAGE_KEY", "chain_stages", "split_stages", "stage_of"]

STAGE_KEY = "shardlog.stage"  # node metadata prop: the stage index of a chained node


@dataclass
class PipelineInfo:
    """The pipeline layout of a check.

    Attributes:
        stages: ``stages[s][t]`` is the file of stage s, tensor-parallel rank t.
        boundaries: ``boundaries[s]`` are the tensor names stage s >= 1 receives from earlier
            stages (tensor-parallel rank 0's files).
    """

    stages: list[list[str]]
    boundaries: list[list[str]] = field(default_factory=list)

    @property
    def degree(self) -> int:
        """Number of stages (PP)."""
        return len(self.stages)


def split_stages(paths: Sequence[str], pp: int) -> list[list[str]]:
    """Group files in global-rank order (tensor-parallel rank fastest) into ``pp`` stages.

    Returns:
        ``stages[s][t]``: the file of stage s, tensor-parallel rank t.

    Raises:
        InputError: ``pp`` < 1 or the number of files is not a multiple of ``pp``.
    """
    if pp < 1:
        raise InputError(f"--pp {pp}: the number of pipeline stages must be at least 1")
    if len(paths) % pp:
        raise InputError(f"{len(paths)} rank files do not split into {pp} pipeline stages of equal size")
    tp = len(paths) // pp
    return [list(paths[s * tp : (s + 1) * tp]) for s in range(pp)]


def _type_text(t: onnx.TypeProto) -> str:
    """``float32[1,8,64]``-style text of a tensor type (symbolic dims by name, ``?`` unknown)."""
    if not t.HasField("tensor_type"):
        return "non-tensor"
    tt = t.tensor_type
    name = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type).name if tt.elem_type else "?"
    if not tt.HasField("shape"):
        return name
    dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
    return f"{name}[{','.join(dims)}]"


def _same_type(a: onnx.TypeProto, b: onnx.TypeProto) -> bool:
    """Equal dtype and rank, and equal sizes on every axis where both sides give a number."""
    if not (a.HasField("tensor_type") and b.HasField("tensor_type")):
        return a == b
    ta, tb = a.tensor_type, b.tensor_type
    if ta.elem_type and tb.elem_type and ta.elem_type != tb.elem_type:
        return False
    if not (ta.HasField("shape") and tb.HasField("shape")):
        return True
    if len(ta.shape.dim) != len(tb.shape.dim):
        return False
    return all(
        not (x.HasField("dim_value") and y.HasField("dim_value")) or x.dim_value == y.dim_value
        for x, y in zip(ta.shape.dim, tb.shape.dim)
    )


def _edges(g: onnx.GraphProto) -> set[str]:
    names = {i.name for i in g.input} | {i.name for i in g.initializer}
    names.update(x for n in g.node for x in [*n.input, *n.output] if x)
    return names


def _mark_stage(g: onnx.GraphProto, stage: int) -> None:
    """Record the stage on every node; prefix node names with ``stage{s}/`` (legacy names
    that start with ``/`` carry their module path and are kept)."""
    for node in g.node:
        node.metadata_props.add(key=STAGE_KEY, value=str(stage))
        if node.name and not node.name.startswith("/"):
            node.name = f"stage{stage}/{node.name}"


def chain_stages(
    paths: Sequence[str], models: Sequence[onnx.ModelProto], seq: onnx.ModelProto, seq_path: str
) -> tuple[onnx.ModelProto, list[list[str]]]:
    """Chain the stage models of one tensor-parallel rank into one model (module docstring).

    Args:
        paths: the stage files, stage 0 first (for messages).
        models: the loaded stage models (not modified).
        seq: the sequential model (its graph inputs may feed any stage).
        seq_path: its file (for messages).

    Returns:
        (chained model, boundary names received by each stage). The chain's outputs are the
        last stage's outputs, in its order.

    Raises:
        InputError: an input of a stage comes from nowhere, a boundary tensor's dtype or
            shape differs between the two stages, a stage output reuses an earlier name, or
            ``onnx.compose`` refuses the merge (IR or opset versions that differ).
    """
    seq_inputs = {i.name for i in seq.graph.input} - {t.name for t in seq.graph.initializer}
    boundaries: list[list[str]] = [[]]
    chain = onnx.ModelProto()
    chain.CopyFrom(models[0])
    del chain.metadata_props[:]
    first = chain.graph
    inits0 = {t.name for t in first.initializer}
    for vi in first.input:
        if vi.name not in inits0 and vi.name not in seq_inputs:
            raise InputError(
                f"{paths[0]}: stage 0 input {vi.name!r} is not an input of {seq_path} (the first stage reads "
                "only the model's inputs)"
            )
    _mark_stage(first, 0)
    for s in range(1, len(models)):
        stage = onnx.ModelProto()
        stage.CopyFrom(models[s])
        del stage.metadata_props[:]
        g = stage.graph
        made = {o.name: o for o in chain.graph.output}
        chain_inputs = {i.name: i for i in chain.graph.input}
        known = _edges(chain.graph)
        chain_inits = {t.name: t for t in chain.graph.initializer}
        inits = {t.name for t in g.initializer}
        io_map, received = [], []
        for vi in g.input:
            if vi.name in inits:
                continue
            src = made.get(vi.name)
            if src is None and vi.name in chain_inputs:
                src = chain_inputs[vi.name]  # a model input read again: pass it through the chain
                chain.graph.output.append(src)
            if src is not None:
                if not _same_type(src.type, vi.type):
                    raise InputError(
                        f"{paths[s]}: boundary tensor {vi.name!r} is {_type_text(vi.type)} here but "
                        f"{_type_text(src.type)} where an earlier stage makes it"
                    )
                io_map.append((vi.name, vi.name))
                received.append(vi.name)
            elif vi.name not in seq_inputs:
                raise InputError(
                    f"{paths[s]}: stage {s} input {vi.name!r} is produced by no earlier stage and is not an input "
                    f"of {seq_path}"
                )
        boundaries.append(received)
        passing = {name for name, _ in io_map}
        for o in g.output:
            if o.name in known and o.name not in passing:
                raise InputError(f"{paths[s]}: stage {s} output {o.name!r} reuses the name of an earlier stage's value")
        # a constant equal to an earlier stage's constant of the same name (a folded shape, a
        # tied weight) is read from there, through the io_map; a different one is renamed
        renames: dict[str, str] = {}
        for t in list(g.initializer):
            if t.name in chain_inits and _same_tensor(chain_inits[t.name], t):
                g.initializer.remove(t)
                vi = onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                g.input.append(vi)
                chain.graph.output.append(vi)
                io_map.append((t.name, t.name))
            elif t.name in known:
                renames[t.name] = f"stage{s}/{t.name}"
        linked = {name for name, _ in io_map}  # typed by the earlier stage: drop this stage's copy
        kept_infos = [vi for vi in g.value_info if vi.name not in linked]
        del g.value_info[:]
        g.value_info.extend(kept_infos)
        onnx.compose.add_prefix_graph(
            g,
            f"stage{s}/",
            rename_nodes=False,
            rename_edges=True,
            rename_inputs=False,
            rename_outputs=False,
            rename_initializers=False,
            rename_value_infos=False,
            inplace=True,
            name_map=renames,
        )
        _mark_stage(g, s)
        keep = [o.name for o in chain.graph.output] + [o.name for o in g.output]
        try:
            chain = onnx.compose.merge_models(
                chain, stage, io_map=io_map, outputs=list(dict.fromkeys(keep)), producer_name="shardlog.pipeline"
            )
        except ValueError as exc:
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"{paths[s]}: cannot be chained to the earlier stages ({first_line})") from None
        _set_outputs(chain.graph, list(dict.fromkeys(o.name for o in chain.graph.output)))
    _set_outputs(chain.graph, [o.name for o in models[-1].graph.output])
    chain.metadata_props.add(key="shardlog.pipeline_stages", value=str(len(models)))
    return chain, boundaries


def _set_outputs(g: onnx.GraphProto, names: Sequence[str]) -> None:
    """Make ``names`` (outputs of ``g`` now) the outputs of ``g``, in that order, once each."""
    by_name: dict[str, onnx.ValueInfoProto] = {}
    for o in g.output:
        if o.name not in by_name:
            by_name[o.name] = onnx.ValueInfoProto()
            by_name[o.name].CopyFrom(o)
    del g.output[:]
    g.output.extend(by_name[n] for n in names)


def _same_tensor(a: onnx.TensorProto, b: onnx.TensorProto) -> bool:
    from onnx import numpy_helper

    if a.data_type != b.data_type or list(a.dims) != list(b.dims):
        return False
    if a == b:
        return True
    try:
        return bool((numpy_helper.to_array(a) == numpy_helper.to_array(b)).all())
    except Exception:  # external data or an unreadable tensor: not known to be equal
        return False


def stage_of(model: onnx.ModelProto, *, node_name: str = "", scope: str = "") -> int | None:
    """The stage a place of a chained model lives in.

    Args:
        model: a chained model (nodes carry ``shardlog.stage``).
        node_name: a node of ``model`` (its ``stage{s}/`` prefix, or its metadata); wins over
            ``scope``.
        scope: a module scope (``model.layers.1.self_attn``): the stage whose nodes have it,
            when exactly one stage does.

    Returns:
        The stage index, or None when the place is not in one stage.
    """
    from analyzer.facts.source import parse_source

    def stage(node: onnx.NodeProto) -> int | None:
        for p in node.metadata_props:
            if p.key == STAGE_KEY and p.value.isdigit():
                return int(p.value)
        return None

    head, sep, _ = node_name.partition("/")
    if sep and head.startswith("stage") and head[5:].isdigit():
        return int(head[5:])
    if node_name:
        found = {stage(n) for n in model.graph.node if n.name == node_name} - {None}
        if len(found) == 1:
            return found.pop()
    if not scope:
        return None
    found = {stage(n) for n in model.graph.node if parse_source(n).scope == scope} - {None}
    return found.pop() if len(found) == 1 else None
