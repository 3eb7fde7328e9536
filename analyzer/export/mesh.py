"""The files of a Hugging Face model exported on a data-parallel x tensor-parallel mesh, forward
or training step (``shardlog export --mesh tp=2,dp=2``, ``--train sgd|adamw``).

The mesh is PyTorch's own: ``init_device_mesh("cpu", (DP, TP), mesh_dim_names=("dp", "tp"))``
on the ``fake`` c10d backend (world DP*TP); global rank ``r = i*TP + t`` (``DeviceMesh`` is
row-major) is data-parallel replica ``i``, tensor-parallel rank ``t``. The model is
parallelized with ``parallelize_module(model, mesh["tp"], plan)``; replica ``i`` gets rows
``[i*B/DP, (i+1)*B/DP)`` of the batch. The forward has no data-parallel collective; a training
step (:mod:`analyzer.export.train`) all-reduces the loss and the gradients over ``mesh["dp"]``.
Collectives of a mesh carry the axis of their process group (``mesh_axis``, docs/mesh.md).

Files: ``seq.onnx`` (the sequential model or step on the whole batch), ``rank<r>.onnx``, and for
a two-axis mesh ``seq_replica.onnx`` (what one replica computes: the sequential forward on its
rows, or the data-parallel step at tp=1) and ``mesh.yaml`` (the spec ``shardlog check
--relations`` reads). One axis of size 1 makes a plain world: tensor parallel (``tp=N``), or
data parallel (``dp=N``, collectives over the whole world, the batch ``Shard(0)`` seen from the
shapes). A two-axis mesh traces each file in a fresh process: DTensor's dispatch caches compare
meshes by layout and names, not by process group, so a second rank traced in one process would
reuse the first one's groups.

Needs the ``export`` extra (torch, transformers, onnxscript).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from analyzer.errors import InputError

__all__ = ["FileJob", "build_model", "export_file", "parse_mesh"]

_AXES = ("dp", "tp")


def parse_mesh(text: str) -> dict[str, int]:
    """``"tp=2,dp=2"`` -> ``{"dp": 2, "tp": 2}`` (axes ``dp`` and ``tp``, in any order; a missing
    axis has size 1).

    Raises:
        InputError: another axis name, a size that is not a positive integer, an axis twice,
            or fewer than 2 ranks in all.
    """
    sizes: dict[str, int] = {}
    for part in str(text).split(","):
        name, sep, size = part.partition("=")
        name = name.strip()
        if not sep or not size.strip().isdigit() or int(size) < 1:
            raise InputError(f"--mesh {text!r}: expected axis=size pairs like tp=2,dp=2")
        if name not in _AXES:
            raise InputError(f"--mesh {text!r}: axis {name!r} is not one of dp, tp")
        if name in sizes:
            raise InputError(f"--mesh {text!r}: axis {name} is given twice")
        sizes[name] = int(size)
    mesh = {ax: sizes.get(ax, 1) for ax in _AXES}
    if mesh["dp"] * mesh["tp"] < 2:
        raise InputError(f"--mesh {text!r}: the mesh needs 2 ranks or more")
    return mesh


@dataclass(frozen=True)
class FileJob:
    """One file of an export, picklable (a two-axis mesh runs each in a fresh process).

    Attributes:
        config: the Hugging Face config (:func:`analyzer.export.hf_config`'s result).
        plan: module pattern -> style text, ahead of the model's own ``tp_plan``.
        dp, tp: the mesh.
        rank: the global rank; -1 the sequential file; ``replica`` the replica file.
        batch, seq_len, seed: the traced batch and the seed of weights and data.
        train: the training step's options (:class:`analyzer.export.train.TrainOptions`); None: forward.
        meta: more ``shardlog.<key>`` metadata.
    """

    config: object
    plan: Mapping | None
    dp: int
    tp: int
    rank: int | str
    batch: int
    seq_len: int
    seed: int
    train: object = None
    meta: Mapping = field(default_factory=dict)


def build_model(job: FileJob):
    """The model of ``job``: its config with weights drawn from ``job.seed``, dropout off, no gradients."""
    import torch
    import transformers

    torch.manual_seed(job.seed)
    try:
        model = transformers.AutoModelForCausalLM.from_config(job.config)
    except ValueError as exc:
        raise InputError(f"config: {str(exc).splitlines()[0]}") from None
    model = model.train(False)  # dropout off: the step is deterministic
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def _data(job: FileJob):
    """(input tensors of the whole batch, their names)."""
    import torch

    if job.train is None:  # the forward's tokens, as export_hf draws them
        g = torch.Generator().manual_seed(job.seed + 1)
        ids = torch.randint(0, job.config.vocab_size, (job.batch, job.seq_len), generator=g, dtype=torch.int64)
        return [ids], ["input_ids"]
    from analyzer.export.train import INPUT_NAMES, labelled_batch

    return list(labelled_batch(job.config.vocab_size, job.batch, job.seq_len, job.seed)), list(INPUT_NAMES)


def export_file(job: FileJob) -> bytes:
    """Trace and export one file of ``job`` (module docstring); returns the ONNX bytes."""
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    from analyzer.export.collectives import MESH_GROUPS, register_collective_schemas, reset_dtensor_caches

    register_collective_schemas()
    world = job.dp * job.tp
    if dist.is_initialized():
        dist.destroy_process_group()
    model = build_model(job)
    data, names = _data(job)
    rows = job.batch // job.dp
    if job.rank == -1:  # the sequential file: the whole batch, one process
        return _trace_export(job, model, data, names, None, rank=-1, world=1, doc="sequential").SerializeToString()
    if job.rank == "replica":  # one replica's rows; a training step all-reduces over dp
        data = [x[:rows] if x.dim() else x for x in data]
        if job.train is None:
            return _trace_export(job, model, data, names, None, rank=-1, world=1,
                                 doc=f"sequential, replica 0's {rows} rows").SerializeToString()  # fmt: skip
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=job.dp)
        try:
            from torch.distributed.device_mesh import init_device_mesh

            dp_mesh = init_device_mesh("cpu", (job.dp,), mesh_dim_names=("dp",))
            MESH_GROUPS[dp_mesh.get_group("dp").group_name] = ("dp", job.dp)
            proto = _trace_export(job, model, data, names, dp_mesh, rank=0, world=job.dp,
                                  doc=f"data-parallel replica 0/{job.dp}")  # fmt: skip
        finally:
            dist.destroy_process_group()
            MESH_GROUPS.clear()
        return proto.SerializeToString()
    r = int(job.rank)
    i, t = divmod(r, job.tp)
    data = [x[i * rows : (i + 1) * rows] if x.dim() else x for x in data]
    dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=world)
    try:
        reset_dtensor_caches()
        two_axes = job.dp > 1 and job.tp > 1
        dp_group = None
        if two_axes:
            from torch.distributed.device_mesh import init_device_mesh

            mesh = init_device_mesh("cpu", (job.dp, job.tp), mesh_dim_names=_AXES)
            for ax in _AXES:
                MESH_GROUPS[mesh.get_group(ax).group_name] = (ax, mesh[ax].size())
            tp_mesh, dp_group = mesh["tp"], mesh["dp"]
        else:
            from torch.distributed.device_mesh import DeviceMesh

            tp_mesh = DeviceMesh("cpu", list(range(world))) if job.tp > 1 else None
            dp_group = dist.group.WORLD if job.dp > 1 else None
        if tp_mesh is not None:
            _parallelize(job, model, tp_mesh)
        if job.train is not None and tp_mesh is not None:  # each rank its parameters' piece of the state
            from analyzer.export.train import local_chunk

            params = [p for _, p in model.named_parameters()] * 2
            state = _state(job, model)
            data = data[:3] + [local_chunk(s, p) for s, p in zip(state, params)]
        where = f"rank {r} = (dp {i}, tp {t}) of mesh dp={job.dp} x tp={job.tp}" if two_axes else f"rank {r}/{world}"
        kind = "tensor-parallel" if job.dp == 1 else "data-parallel" if job.tp == 1 else "mesh"
        extra = {"mesh": f"dp={job.dp},tp={job.tp}"} if two_axes else {}
        proto = _trace_export(job, model, data, names, dp_group if job.train is not None else None, rank=r,
                              world=world, doc=f"{kind} {where}", extra=extra)  # fmt: skip
    finally:
        dist.destroy_process_group()
        MESH_GROUPS.clear()
    return proto.SerializeToString()


def _parallelize(job: FileJob, model, tp_mesh) -> None:
    from torch.distributed.tensor.parallel import parallelize_module

    from analyzer.export.plan import hf_plan, resolve_plan

    own = hf_plan(model)
    plan = dict(job.plan or {})
    merged = {**plan, **{k: v for k, v in own.items() if k not in plan}}  # the user's plan first
    styles = resolve_plan(merged, model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallelize_module(model, tp_mesh, styles, src_data_rank=None)


def _state(job: FileJob, model) -> list:
    from analyzer.export.train import adamw_state

    return adamw_state(model, job.train)[1]


def _trace_export(job: FileJob, model, data, names, dp_group, *, rank: int, world: int, doc: str, extra=None):
    """The forward (:func:`analyzer.export.pipeline.trace_call`) or the training step of
    ``model`` on ``data``, as ONNX."""
    from analyzer.export.pipeline import constant_names, export_onnx, hf_tracing_patches, trace_call

    meta = {"model": type(model).__name__, **job.meta, **(extra or {}), "doc": f"{type(model).__name__} {doc}"}
    if job.train is None:

        def call(m, input_ids):
            return m(input_ids=input_ids, use_cache=False).logits

        with hf_tracing_patches():
            gm = trace_call(model, tuple(data), call)
        return export_onnx(gm, tuple(data), constant_names(gm, model), rank=rank, world_size=world, meta=meta,
                           input_names=names, output_names=("logits",))  # fmt: skip
    from analyzer.export.train import export_step, make_fx_step, step_constant_names, step_names, train_step

    if rank == -1 or len(data) == 3:  # the sequential step, or a rank without tp: the full state
        data = data[:3] + _state(job, model)
    step = train_step(model, job.train, dp_group)
    gm = make_fx_step(step, model, data)
    input_names, output_names = step_names(model, job.train)
    meta["doc"] += f", training step ({job.train.optimizer})"
    return export_step(gm, data, input_names, output_names, step_constant_names(gm, model), rank=rank,
                       world_size=world, meta=meta)  # fmt: skip
