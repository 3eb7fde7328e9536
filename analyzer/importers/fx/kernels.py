"""Collectives, custom kernels and ``auto_functionalized`` -> ONNX nodes.

Collectives (``torch.distributed._functional_collectives``; onnxruntime's ``com.microsoft``
contrib ops for the ONNX side):

- ``_c10d_functional.all_reduce(x, op, group)`` -> ``com.microsoft::AllReduce`` with string
  attributes ``reduction`` (torch's ``op``: sum, max, ...; the attribute the rules in
  rules/collectives/ and the simulator read) and ``group``; ``vllm.all_reduce(x, group)`` is a sum.
- ``all_gather_into_tensor(x, world, group)`` -> ``com.microsoft::AllGather`` (``group_size``,
  ``axis`` 0: the functional collective concatenates along dim 0).
- ``reduce_scatter_tensor(x, op, world, group)`` -> ``com.microsoft::ReduceScatter``
  (``group_size``, ``axis`` 0, ``reduction``).
- ``broadcast(x, src, group)`` -> ``shardlog::Broadcast`` (``src``, ``group``).

With ``world_size=1`` (a sequential graph runs on one process) every collective is the
identity; one with ``group_size`` > 1 is then an InputError.

Custom kernels (``kind: kernel`` in ``aten_ops.yaml``) are nodes of their own domain whose
op_type is the kernel name; tensor arguments are inputs, listed non-tensor arguments are
attributes, write-only buffers are not inputs. ``higher_order.auto_functionalized(kernel,
**kwargs)`` returns ``(kernel result, *new values of the mutated arguments in schema order)``;
``auto_functionalized_v2`` passes mutated arguments as ``_all_bases`` (``_<arg>_base_index``)
and returns ``(kernel result, *new values of the bases)`` (torch/_higher_order_ops/
auto_functionalize.py). Mutated arguments that are views of a base are not supported.
"""

from __future__ import annotations

from collections.abc import Callable

from analyzer.importers.fx.emit import ONNX_DTYPES, NodeCtx, bind, parse_schema
from analyzer.importers.fx.parse import OpRef, TensorType, torch_dtype

__all__ = ["HANDLERS", "kernel_op_type"]


def kernel_op_type(target: str) -> str:
    """``apex.fused_layer_norm_affine_fwd.default`` -> ``fused_layer_norm_affine_fwd``."""
    return target.split(".")[-2]


def _collective(cx: NodeCtx) -> None:
    x = cx.value(next(iter(cx.a.values())))
    group_size = cx.a.get("group_size")
    if cx.env["group_sizes"].get(str(cx.a.get("group_name"))) == 1:
        cx.op("Identity", [x], cx.type)
        return
    if cx.world_size == 1:
        if group_size not in (None, 1):
            raise cx.fail(f"group_size {group_size} in a world_size=1 import")
        cx.op("Identity", [x], cx.type)
        return
    if cx.world_size is not None and isinstance(group_size, int) and group_size > cx.world_size:
        raise cx.fail(f"group_size {group_size} is larger than the world size {cx.world_size}")
    attrs: dict = {}
    reduce_op = cx.a.get("reduce_op", cx.spec.get("reduce_op"))
    if reduce_op is not None:
        attrs["reduction"] = str(reduce_op).lower()
    if group_size is not None:
        attrs["group_size"] = int(group_size)
        attrs["axis"] = 0
    if "src" in cx.a:
        attrs["src"] = int(cx.a["src"])
    attrs["group"] = str(cx.a["group_name"])
    cx.op(cx.spec["onnx"], [x], cx.type, domain=cx.spec.get("domain", "com.microsoft"), **attrs)


def _attribute(cx: NodeCtx, name: str, kind: str, value: object):
    try:
        if kind == "int":
            return int(value)
        if kind == "ints":
            return [int(v) for v in value]
        if kind == "float":
            return float(value)
        if kind == "string":
            return str(value)
        if kind == "dtype" and torch_dtype(value):
            return ONNX_DTYPES[torch_dtype(value)]
    except (TypeError, ValueError):
        pass
    raise cx.fail(f"argument {name}={value!r} is not a valid {kind}")


def _row_shape(cx: NodeCtx, spec: dict, a: dict) -> tuple[int, ...]:
    """The leading (row) axes of a norm kernel's input: its shape without the normalized axes."""
    x = cx.type_of(cx.value(a[spec["row_input"]], spec["row_input"]))
    k = len(a["normalized_shape"])
    return tuple(x.shape[: len(x.shape) - k])


def _emit_kernel(cx: NodeCtx, spec: dict, target: str, a: dict, outputs: list[tuple[str, TensorType | None]]) -> None:
    inputs = [cx.value(a[n], n) if a[n] is not None else "" for n in spec.get("inputs", [])]
    while inputs and not inputs[-1]:
        inputs.pop()
    attrs = {n: _attribute(cx, n, kind, a[n]) for n, kind in spec.get("attrs", {}).items() if a[n] is not None}
    op_type = kernel_op_type(target)
    flat_after: list[tuple[str, str, TensorType | None]] = []
    if "row_stats" in spec:
        # apex keeps per-row statistics flattened; the kernel node carries them with the row
        # axes and an explicit Reshape flattens them, so a shard of a row axis stays visible.
        rows = _row_shape(cx, spec, a)
        names = spec.get("inputs", [])
        for name in spec["row_stats"].get("inputs", []):
            i = names.index(name)
            t = cx.type_of(inputs[i])
            shape = cx.ints(rows, "rows")
            inputs[i] = cx.op("Reshape", [inputs[i], shape], TensorType(t.dtype, rows), hint=f"{name}_rows")
        outputs = list(outputs)
        for k in spec["row_stats"].get("outputs", []):
            flat, t = outputs[k]
            row_name = cx.helper_name(f"rows{k}")
            outputs[k] = (row_name, TensorType(t.dtype, rows) if t is not None else None)
            flat_after.append((row_name, flat, t))
    cx.ops(op_type, inputs, outputs, domain=spec["domain"], **attrs)
    for row_name, flat, t in flat_after:
        cx.op("Reshape", [row_name, cx.ints(t.shape if t is not None else [-1], "flat")], t, out=flat)
    cx.env["functions"].add((spec["domain"], op_type))


def _kernel(cx: NodeCtx) -> None:
    spec = cx.spec
    if spec.get("mutates"):
        raise cx.unsupported("in-place kernel outside auto_functionalized")
    returns = spec.get("returns", 1)
    if returns == 1 and not cx.results_used():
        outputs = [(cx.name, cx.type)]
    else:
        outputs = [(cx.result(k), cx.result_type(k)) for k in range(returns)]
    _emit_kernel(cx, spec, cx.node.target, cx.a, outputs)


def _auto_functionalized(cx: NodeCtx) -> None:
    node = cx.node
    if not node.args or not isinstance(node.args[0], OpRef):
        raise cx.fail("first argument is not an operator")
    target = node.args[0].target
    spec = cx.env["table"].get(target)
    if spec is None or spec.get("kind") != "kernel":
        raise cx.fail(f"no ONNX mapping for {target}")
    if spec.get("returns", 0):
        raise cx.unsupported(f"{target} returns values besides its mutated arguments")
    mutates = spec.get("mutates", [])
    kwargs = dict(node.kwargs)
    if node.target.endswith("_v2"):
        slots = _v2_bases(cx, mutates, kwargs)
    else:
        slots = {m: 1 + k for k, m in enumerate(mutates)}
    if 0 in cx.results_used():
        raise cx.fail(f"item 0 of auto_functionalized({target}) is used, but the kernel returns nothing")
    a = bind(parse_schema(spec["schema"]), node.args[1:], kwargs, cx.graph.where(node.line), target)
    outputs = []
    for m in mutates:
        arg = cx.value(a[m], m)
        outputs.append((cx.result(slots[m]), cx.result_type(slots[m]) or cx.type_of(arg)))
    if spec.get("identity"):
        for m, (out, ttype) in zip(mutates, outputs):
            cx.ops("Identity", [cx.value(a[m])], [(out, ttype)])
        return
    _emit_kernel(cx, spec, target, a, outputs)


def _v2_bases(cx: NodeCtx, mutates: list[str], kwargs: dict) -> dict[str, int]:
    """Replace ``_<arg>_base_index`` by the argument itself; the result slot of each mutated argument."""
    bases = kwargs.pop("_all_bases", None)
    if not isinstance(bases, list):
        raise cx.fail("auto_functionalized_v2 without _all_bases")
    slots: dict[str, int] = {}
    for m in mutates:
        index = kwargs.pop(f"_{m}_base_index", None)
        views = [k for k in kwargs if k.startswith(f"_{m}_")]
        if views:
            raise cx.unsupported(f"mutated argument {m!r} is a view of its base ({', '.join(views)})")
        if not isinstance(index, int) or not 0 <= index < len(bases):
            raise cx.fail(f"bad _{m}_base_index {index!r}")
        if index + 1 in slots.values():
            raise cx.unsupported("two mutated arguments share a base")
        kwargs[m] = bases[index]
        slots[m] = index + 1
    return slots


#: ``kind`` of aten_ops.yaml -> handler
HANDLERS: dict[str, Callable[[NodeCtx], None]] = {
    "collective": _collective,
    "kernel": _kernel,
    "auto_functionalized": _auto_functionalized,
}
