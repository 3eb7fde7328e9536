"""The ``com.microsoft`` collectives of an export: their ONNX schemas and the translation of
``torch.ops._c10d_functional`` collectives (what ``make_fx`` leaves of DTensor's
redistributions) into them, for ``torch.onnx.export(custom_translation_table=...)``.

``all_reduce`` -> ``com.microsoft::AllReduce(group_size=N, reduction="sum")`` (``"max"`` for
``all_reduce(x, "max", group)``, Megatron-LM's vocab-parallel row max; ``"avg"`` for
``all_reduce(x, "avg", group)``, what DTensor's redistribution of a ``Partial("avg")`` value to
``Replicate()`` emits: the elementwise mean over the group, NCCL's ``ncclAvg``),
``all_gather_into_tensor`` -> ``AllGather(group_size=N, axis=0)``, ``reduce_scatter_tensor`` ->
``ReduceScatter(group_size=N, reduction="sum", axis=0)`` (onnxruntime's contrib ops,
collective_defs.cc), ``wait_tensor`` -> ``Identity``. A process group registered in
:data:`MESH_GROUPS` is one mesh axis's: its collectives carry ``mesh_axis`` (docs/mesh.md).

Code that calls the in-place ``torch.distributed`` collectives (``all_reduce(t, group=g)``,
Megatron-core's tensor_parallel/mappings.py) is traced through
:func:`functional_inplace_collectives`: each call becomes PyTorch's own functional in-place
form (``torch.distributed._functional_collectives.all_reduce_inplace`` and kin, the targets of
``traceable_collective_remaps`` that torch.compile uses), so ``make_fx`` records
``_c10d_functional`` ops and a ``copy_`` back into the tensor, which the table above translates.
"""

from __future__ import annotations

import contextlib
import functools
import types

__all__ = [
    "collective_schemas",
    "functional_inplace_collectives",
    "with_collective_schemas",
    "ALL_REDUCE_OPS",
    "MESH_GROUPS",
    "MSFT",
    "WORLD",
    "register_collective_schemas",
    "reset_dtensor_caches",
    "translation_table",
]

MSFT = "com.microsoft"
#: world size the all_reduce translation writes (set by the exporter before each export)
WORLD = {"n": 1}
#: the all_reduce reduce ops an export translates (``reduction`` of the AllReduce it writes)
ALL_REDUCE_OPS = ("sum", "max", "avg")
#: process-group name -> (mesh axis name, size) while a mesh rank is traced
MESH_GROUPS: dict = {}
_WORLD, _MESH_GROUPS = WORLD, MESH_GROUPS  # the names the translation functions read


def reset_dtensor_caches() -> None:
    """Forget DTensor's cached sharding decisions before tracing another rank.

    The sharding propagator and the redistribution planner cache results keyed by specs whose
    DeviceMesh compares equal across ranks, so a later rank's trace reuses output specs that
    hold the *first* rank's mesh and coordinate (a backward Replicate -> Shard redistribution
    then keeps chunk 0 on every rank)."""
    import torch
    from torch.distributed.tensor import DTensor, _redistribute

    torch._C._clear_DTensor_sharding_propagator_cache()  # the C++ dispatch fast path's cache
    prop = DTensor._op_dispatcher.sharding_propagator
    prop.propagate_op_sharding.cache_clear()
    prop._propagate_tensor_meta_cached.cache_clear()
    _redistribute._gen_transform_infos.cache_clear()
    _redistribute._planner_cache.clear()


_SCHEMAS = ("AllReduce", "AllGather", "ReduceScatter")


@contextlib.contextmanager
def collective_schemas():
    """The collectives' schemas registered for the ``with`` block, then taken away again if they
    were not there before: a registered schema is process-wide, and onnx's checker then refuses
    attributes it does not declare (the fx importer's ``group``) on graphs a later ``check``
    in the same process reads."""
    import onnx.defs as D

    before = {name for name in _SCHEMAS if D.has(name, MSFT)}
    register_collective_schemas()
    try:
        yield
    finally:
        for name in _SCHEMAS:
            if name not in before and D.has(name, MSFT):
                D.deregister_schema(name, 1, MSFT)


def with_collective_schemas(fn):
    """Decorate an export entry point: it runs inside :func:`collective_schemas`."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with collective_schemas():
            return fn(*args, **kwargs)

    return run


def register_collective_schemas() -> None:
    import onnx
    import onnx.defs as D

    types = [
        "tensor(float)",
        "tensor(float16)",
        "tensor(bfloat16)",
        "tensor(double)",
        "tensor(int64)",
        "tensor(int32)",
    ]

    def attr(name, value):
        return D.OpSchema.Attribute(name, onnx.helper.make_attribute(name, value))

    # the mesh axis of the process group (mesh_export.py; docs/mesh.md); no default: absent = world
    mesh_axis = D.OpSchema.Attribute("mesh_axis", D.OpSchema.AttrType.STRING, "mesh axis", required=False)
    specs = {
        "AllReduce": [attr("group_size", 1), attr("reduction", "sum"), mesh_axis],
        "AllGather": [attr("group_size", 1), attr("axis", 0), mesh_axis],
        "ReduceScatter": [attr("group_size", 1), attr("reduction", "sum"), attr("axis", 0)],
    }
    for name, attrs in specs.items():
        if D.has(name, MSFT):
            continue
        D.register_schema(
            D.OpSchema(
                name,
                MSFT,
                1,
                inputs=[D.OpSchema.FormalParameter("input", "T")],
                outputs=[D.OpSchema.FormalParameter("output", "T")],
                type_constraints=[("T", types, "")],
                attributes=attrs,
            )
        )


def translation_table():
    import onnxscript
    import torch
    from onnxscript import opset18 as op

    msft = onnxscript.values.Opset(MSFT, 1)

    # plain (traced) onnxscript functions: signature mirrors the ATen op
    def all_reduce(x, reduce_op: str, group_name: str):
        if reduce_op not in ALL_REDUCE_OPS:
            raise NotImplementedError(f"all_reduce reduce_op={reduce_op}")
        if group_name in _MESH_GROUPS:  # a mesh axis's group (mesh_export.py): name the axis
            axis, size = _MESH_GROUPS[group_name]
            return msft.AllReduce(x, mesh_axis=axis, group_size=size, reduction=reduce_op)
        return msft.AllReduce(x, group_size=_WORLD["n"], reduction=reduce_op)

    def all_gather_into_tensor(x, group_size: int, group_name: str):
        if group_name in _MESH_GROUPS:
            return msft.AllGather(x, mesh_axis=_MESH_GROUPS[group_name][0], group_size=group_size, axis=0)
        return msft.AllGather(x, group_size=group_size, axis=0)

    def reduce_scatter_tensor(x, reduce_op: str, group_size: int, group_name: str):
        if reduce_op != "sum":
            raise NotImplementedError(f"reduce_scatter reduce_op={reduce_op}")
        return msft.ReduceScatter(x, group_size=group_size, reduction="sum", axis=0)

    def wait_tensor(x):
        return op.Identity(x)

    c10d = torch.ops._c10d_functional
    return {
        c10d.all_reduce.default: all_reduce,
        c10d.all_gather_into_tensor.default: all_gather_into_tensor,
        c10d.reduce_scatter_tensor.default: reduce_scatter_tensor,
        c10d.wait_tensor.default: wait_tensor,
    }


def _reduce_op(op) -> str:
    """``ReduceOp.SUM`` (or ``"sum"``) -> ``"sum"``, as the functional collectives take it."""
    from torch.distributed._functional_collectives import REDUCE_OP_TO_STR

    return op if isinstance(op, str) else REDUCE_OP_TO_STR[op]


def _one_rank(group) -> bool:
    import torch.distributed as dist

    return dist.get_world_size(group) == 1


def _functional_forms() -> dict:
    """The in-place ``torch.distributed`` collectives -> functions of the same signature that call
    PyTorch's functional in-place forms (``_functional_collectives.*_inplace``). A collective
    over a one-rank group is the identity and traces to nothing (Megatron-core's vocab-parallel
    cross-entropy all-reduces even at tensor-parallel size 1)."""
    import torch.distributed as dist
    import torch.distributed._functional_collectives as fc

    def all_reduce(tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
        if not _one_rank(group):
            fc.all_reduce_inplace(tensor, _reduce_op(op), group, async_op)

    def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
        if _one_rank(group):
            output_tensor.copy_(input_tensor)
        else:
            fc.all_gather_tensor_inplace(output_tensor, input_tensor, group, async_op)

    def reduce_scatter_tensor(output, input, op=dist.ReduceOp.SUM, group=None, async_op=False):
        if _one_rank(group):
            output.copy_(input)
        else:
            fc.reduce_scatter_tensor_inplace(output, input, _reduce_op(op), group, async_op)

    return {
        dist.all_reduce: all_reduce,
        dist.all_gather_into_tensor: all_gather_into_tensor,
        dist._all_gather_base: all_gather_into_tensor,
        dist.reduce_scatter_tensor: reduce_scatter_tensor,
        dist._reduce_scatter_base: reduce_scatter_tensor,
    }


@contextlib.contextmanager
def functional_inplace_collectives(*modules):
    """Within the block, ``torch.distributed.all_reduce``, ``all_gather_into_tensor``,
    ``reduce_scatter_tensor`` (and their ``_all_gather_base``/``_reduce_scatter_base`` aliases)
    run as PyTorch's functional in-place collectives, so that ``make_fx`` traces them as
    ``_c10d_functional`` ops (:func:`translation_table`) instead of ``c10d.allreduce_`` on a
    process-group object. ``modules``: more modules whose attributes hold one of these functions
    under another name, bound at import (Megatron-core's ``tensor_parallel.mappings`` binds
    ``dist_all_gather_func = torch.distributed.all_gather_into_tensor``); those attributes are
    swapped too. Everything is put back on exit. ``async_op=True`` raises (PyTorch's forms
    refuse it)."""
    import torch.distributed as dist

    forms = _functional_forms()
    saved = []
    for owner in (dist, *modules):
        for name, value in list(vars(owner).items()):
            if type(value) is types.FunctionType and any(value is f for f in forms):
                saved.append((owner, name, value))
                setattr(owner, name, forms[value])
    try:
        yield
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)
