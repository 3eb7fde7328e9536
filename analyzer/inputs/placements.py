"""DTensor's own spelling of a placement in a spec file: ``Shard(0)``, ``Replicate()``,
``Partial()``, ``Partial("max")``, and DTensor's repr ``Shard(dim=0)``, ``Partial(sum)``.

The text is parsed as one Python call expression by :mod:`ast` (never evaluated), with the
argument names of ``torch.distributed.tensor.placement_types``: ``Shard(dim)``,
``Partial(reduce_op="sum")``. It becomes the spec's mapping form (``{shard: 0}``,
``replicate``, ``{partial: sum}``), which :mod:`analyzer.inputs.infer` reads as usual.

DTensor's ``Partial`` also has ``avg``, ``min`` and ``product`` reductions; the rules relate
only sums and maxima (``rules/core``), so those are refused with a line that says so.
"""

from __future__ import annotations

import ast

from analyzer.errors import InputError

__all__ = ["is_placement", "placement_entry"]

_NAMES = ("Shard", "Replicate", "Partial")
_SUPPORTED_REDUCE = ("sum", "max")


class _Bare(str):
    """A bare name argument, as DTensor's repr writes ``Partial(sum)``."""


def _literal(node: ast.expr) -> object:
    return _Bare(node.id) if isinstance(node, ast.Name) else ast.literal_eval(node)


def _is_literal(node: ast.expr) -> bool:
    """A constant, a negated constant (``-1``) or a bare name."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, (ast.Constant, ast.Name))


def is_placement(text: object) -> bool:
    """True when ``text`` is a string spelled like a DTensor placement call (``Name(...)``)."""
    return isinstance(text, str) and text.strip().split("(", 1)[0].strip() in _NAMES and "(" in text


def placement_entry(where: str, text: str) -> str | dict:
    """The spec's mapping form of one DTensor placement.

    Args:
        where: the spec entry, for messages (``spec.yaml: relations.w``).
        text: ``Shard(0)``, ``Shard(dim=1)``, ``Replicate()``, ``Partial()``,
            ``Partial("sum")``, ``Partial(reduce_op="max")``.

    Returns:
        ``{"shard": dim}``, ``"replicate"`` or ``{"partial": "sum" | "max"}``.

    Raises:
        InputError: not one call of Shard, Replicate or Partial with literal arguments, a dim
            that is not a non-negative integer, or a reduction other than sum and max.
    """
    try:
        call = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        call = None
    if (
        not isinstance(call, ast.Call)
        or not isinstance(call.func, ast.Name)
        or call.func.id not in _NAMES
        or not all(_is_literal(a) for a in [*call.args, *(k.value for k in call.keywords)])
    ):
        raise InputError(f"{where}: {text!r} is not a DTensor placement such as Shard(0), Replicate() or Partial()")
    name = call.func.id
    args = [_literal(a) for a in call.args]
    kwargs = {k.arg: _literal(k.value) for k in call.keywords}
    wanted = {"Shard": "dim", "Replicate": None, "Partial": "reduce_op"}[name]
    if wanted is None:
        if args or kwargs:
            raise InputError(f"{where}: Replicate() takes no arguments, got {text!r}")
        return "replicate"
    if set(kwargs) - {wanted} or len(args) + len(kwargs) > 1:
        raise InputError(f"{where}: {name} takes one argument ({wanted}), got {text!r}")
    value = args[0] if args else kwargs.get(wanted)
    if name == "Shard":
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InputError(f"{where}: Shard needs a non-negative dim, got {text!r}")
        return {"shard": value}
    reduce = "sum" if value is None else str(value)
    if reduce not in _SUPPORTED_REDUCE:
        raise InputError(f'{where}: {text} is not supported: the rules relate Partial("sum") and Partial("max") only')
    return {"partial": reduce}
