"""Fused ops expanded through their ONNX function definitions.

Many ONNX ops are defined by a function body in the standard itself (``Softmax``,
``LogSoftmax``, ``LayerNormalization``, ``Gelu``, ``ReduceSumSquare``, ... :
``onnx.defs.get_schema(op, opset).function_body`` or a context-dependent body built for the
call's attributes and input types). When one side calls the fused op and the other spells it
out (a vocab-parallel softmax written by hand as exp, all-reduce of row sums, divide), the
lift rule, which pairs nodes of the same op, cannot meet them; expanding the fused op into its
body on every side can. The bodies come from the ``onnx`` package (``onnx.inliner`` with
``inline_schema_functions=True``), never retyped here. A standard op whose schema defines it by
formula only (``Gemm``) takes its body from the rule library instead, as data:
``rules/functions/*.onnxtxt`` hold ONNX functions in the ONNX text format, each for the calls
whose attributes (a missing one taking the schema's default) equal the defaults the function
declares and whose input count is the function's, in models whose opset is at least the
function's (its ops mean the same from there on; the body is called at the model's opset):
``Gemm`` with a bias C and default attributes is ``Add(MatMul(A, B), C)``, with ``transB=1``
``Add(MatMul(A, Transpose(B)), C)``. :func:`bundled_bodies`
reads them.

Which op types are expanded is decided by the driver (:func:`analyzer.solve.derive.derive`):
those on the frontier of a check that is not verified (a seq frontier node or a seq node reading
its output, or a rank node that reads a piece and makes none), and kept only when the expansion
proves more outputs. A model-local function (a user's kernel, ``docs/rules.md``) is expanded
only when some graph does not call it at all (one side spells it out), so that a rule can be
written for the kernel itself.

Each call is replaced, at its place, by the body's nodes with the call's module scope and
source line (``metadata_props``); the body's own values are named ``<first output>::<name>`` and
get static shapes from ONNX shape inference run on the body alone. The expansion keeps the
graph's semantics exactly.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence

import onnx
import onnx.inliner
import onnx.parser
from onnx import helper

__all__ = [
    "bundled_bodies",
    "callable_ops",
    "expand_calls",
    "fuses_several_ops",
    "has_body",
    "local_only_on_some_side",
]

OpKey = tuple[str, str]  # (domain, op type); "" for the default domain
_STANDARD = ("", "ai.onnx")


def _opset(model: onnx.ModelProto, domain: str) -> int | None:
    for o in model.opset_import:
        if o.domain in ((domain,) if domain not in _STANDARD else _STANDARD):
            return o.version
    return None


@functools.cache
def bundled_bodies() -> dict[OpKey, tuple[onnx.FunctionProto, ...]]:
    """The bodies of standard ops given as data (``rules/functions/*.onnxtxt``, one ONNX function
    per file, named and in the domain of the op it defines), by op key: several per op, each for
    the attribute values it declares (files in name order).

    Raises:
        onnx.parser.ParseError: a file is not an ONNX function in text form (a broken rule library).
    """
    from analyzer.solve.rulebook import rules_dir

    out: dict[OpKey, tuple[onnx.FunctionProto, ...]] = {}
    for path in sorted((rules_dir() / "functions").glob("*.onnxtxt")):
        fn = onnx.parser.parse_function(path.read_text(encoding="utf-8"))
        key = ("" if fn.domain in _STANDARD else fn.domain, fn.name)
        out[key] = (*out.get(key, ()), fn)
    return out


def _bundled_fits(node: onnx.NodeProto, model: onnx.ModelProto) -> onnx.FunctionProto | None:
    """The first bundled body of ``node``'s op that the call fits (:func:`_fits`), at the model's
    opset; None when none does."""
    for fn in bundled_bodies().get(_key(node), ()):
        fitted = _fits(node, model, fn)
        if fitted is not None:
            return fitted
    return None


def _fits(node: onnx.NodeProto, model: onnx.ModelProto, fn: onnx.FunctionProto) -> onnx.FunctionProto | None:
    """``fn`` called at the model's opset when the call fits it: as many inputs (none empty) as
    the function declares, and every attribute the function declares equal to its default there
    (an attribute the call does not set takes the op schema's default at the model's opset); the
    call sets no other attribute. None otherwise."""
    if len(node.input) != len(fn.input) or not all(node.input):
        return None
    wanted = {a.name: helper.get_attribute_value(a) for a in fn.attribute_proto}
    given = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if set(given) - set(wanted):
        return None
    version = _opset(model, "")
    since = next((o.version for o in fn.opset_import if o.domain in _STANDARD), None)
    if version is None or since is None or version < since:
        return None
    try:
        schema = onnx.defs.get_schema(node.op_type, version, "")
    except (onnx.defs.SchemaError, TypeError, ValueError, OverflowError):
        return None
    for name, value in wanted.items():
        if name in given:
            got = given[name]
        elif name in schema.attributes and schema.attributes[name].default_value.name:
            got = helper.get_attribute_value(schema.attributes[name].default_value)
        else:
            return None
        if got != value:
            return None
    # the body's ops mean the same from its opset on (the file says so): it is called at the model's opset
    at = onnx.FunctionProto()
    at.CopyFrom(fn)
    for o in at.opset_import:
        if o.domain in _STANDARD:
            o.version = version
    return at


def has_body(model: onnx.ModelProto, key: OpKey) -> bool:
    """``key`` is an op of ``model`` with a function body: a model-local function, a standard
    op whose schema at the model's opset has a (context-dependent) function, or a standard op
    with a bundled body (:func:`bundled_bodies`) that every call of it in ``model`` fits."""
    domain, op = key
    if any(f.domain == domain and f.name == op for f in model.functions):
        return True
    if domain not in _STANDARD:
        return False
    if key in bundled_bodies():
        calls = [n for n in model.graph.node if _key(n) == key]
        return bool(calls) and all(_bundled_fits(n, model) is not None for n in calls)
    version = _opset(model, "")
    if version is None:
        return False
    try:
        schema = onnx.defs.get_schema(op, version, "")
    except (onnx.defs.SchemaError, TypeError, ValueError, OverflowError):  # no such op or opset
        return False
    return bool(schema.has_function or schema.has_context_dependent_function)


def callable_ops(models: Sequence[onnx.ModelProto], names: Iterable[OpKey]) -> set[OpKey]:
    """The op types among ``names`` that have a function body in every model that calls them."""
    out = set()
    for key in set(names):
        callers = [m for m in models if any(_key(n) == key for n in m.graph.node)]
        if callers and all(has_body(m, key) for m in callers):
            out.add(key)
    return out


_TRIVIAL = frozenset({"Constant", "CastLike", "Cast", "Identity"})


def fuses_several_ops(model: onnx.ModelProto, key: OpKey) -> bool:
    """The first call of ``key`` in ``model`` expands to two or more ops besides constants and
    casts (``Softmax``: max, sub, exp, sum, div); a body that renames one op (``Relu`` is
    ``Max(x, 0)``) gives the rules nothing new to pair."""
    node = next((n for n in model.graph.node if _key(n) == key), None)
    if node is None:
        return False
    known = _Known(_NoTypes())
    known.infer(model)
    for vi in [*model.graph.input, *model.graph.value_info]:
        t = vi.type.tensor_type
        if t.elem_type:
            known.dtypes.setdefault(vi.name, t.elem_type)
    for init in model.graph.initializer:
        known.dtypes.setdefault(init.name, init.data_type)
        known.shapes.setdefault(init.name, list(init.dims))
    body = _body(node, model, known, {})
    return body is not None and sum(n.op_type not in _TRIVIAL for n in body[0]) >= 2


class _NoTypes:
    dtypes: dict = {}
    shapes: dict = {}


def local_only_on_some_side(models: Sequence[onnx.ModelProto], key: OpKey) -> bool:
    """``key`` is a model-local function that some graph never calls (one side spells it out)."""
    domain, op = key
    if not any(f.domain == domain and f.name == op for m in models for f in m.functions):
        return True  # a standard op: not restricted
    counts = [Counter(_key(n) for n in m.graph.node)[key] for m in models]
    return min(counts) == 0 < max(counts)


def _key(node: onnx.NodeProto) -> OpKey:
    return ("" if node.domain in _STANDARD else node.domain, node.op_type)


def expand_calls(model: onnx.ModelProto, ops: set[OpKey], types) -> int:
    """Replace every call of ``ops`` in ``model``'s graph (in place) by its function body.

    Args:
        model: the model (a copy owned by the rewrite).
        ops: op types to expand.
        types: the rewrite's shape table (``shapes``, ``dtypes`` by value name; new values are
            declared through ``add_value_info``).

    Returns:
        How many calls were expanded (a call whose inputs have unknown types, or whose body
        the inliner cannot produce, stays as it is).
    """
    if not ops:
        return 0
    g = model.graph
    known = _Known(types)
    if any(v and not types.dtypes.get(v) for n in g.node if _key(n) in ops for v in n.input):
        known.infer(model)
    cache: dict[bytes, tuple[list[onnx.NodeProto], list[onnx.ValueInfoProto]] | None] = {}
    out: list[onnx.NodeProto] = []
    count = 0
    for node in g.node:
        key = _key(node)
        body = _body(node, model, known, cache) if key in ops else None
        if body is None:
            out.append(node)
            continue
        nodes, infos = body
        out.extend(_instantiate(node, nodes))
        for v in node.input:  # what shape inference found for the call's inputs, for later rewrites
            if v and v not in types.dtypes and v in known.shapes:
                types.add_value(v, known.dtypes[v], known.shapes[v])
        prefix = _prefix(node)
        for vi in infos:
            named = onnx.ValueInfoProto()
            named.CopyFrom(vi)
            named.name = prefix + vi.name
            types.add_value_info(named)
        count += 1
    if count:
        del g.node[:]
        g.node.extend(out)
    return count


class _Known:
    """Element types and static shapes by value name: the rewrite's table, completed by ONNX
    shape inference on the model when a call reads a value the graph declares no type for."""

    def __init__(self, types) -> None:
        self.dtypes = dict(types.dtypes)
        self.shapes = dict(types.shapes)

    def infer(self, model: onnx.ModelProto) -> None:
        try:
            inferred = onnx.shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001 - shape inference failing leaves the types unknown
            return
        for vi in inferred.graph.value_info:
            t = vi.type.tensor_type
            if vi.name not in self.dtypes and t.elem_type:
                self.dtypes[vi.name] = t.elem_type
                dims = t.shape.dim
                if t.HasField("shape") and all(d.HasField("dim_value") for d in dims):
                    self.shapes[vi.name] = [d.dim_value for d in dims]


def _prefix(node: onnx.NodeProto) -> str:
    first = next((o for o in node.output if o), node.name)
    return f"{first}::"


def _body(node: onnx.NodeProto, model: onnx.ModelProto, types, cache: dict):
    """The inlined body of ``node`` in formal names (``in{i}``, ``out{j}``, internal names as the
    inliner gives them) with value infos of its internal values, or None."""
    inputs = []
    for i, v in enumerate(node.input):
        if not v:
            continue
        dtype = types.dtypes.get(v)
        if not dtype:
            return None
        inputs.append(helper.make_tensor_value_info(f"in{i}", dtype, types.shapes.get(v)))
    outputs = []
    for j, v in enumerate(node.output):
        if v:
            outputs.append(helper.make_tensor_value_info(f"out{j}", types.dtypes.get(v, 0), types.shapes.get(v)))
    call = onnx.NodeProto()
    call.CopyFrom(node)
    del call.metadata_props[:]
    call.name = "call"
    call.doc_string = ""
    call.input[:] = [f"in{i}" if v else "" for i, v in enumerate(node.input)]
    call.output[:] = [f"out{j}" if v else "" for j, v in enumerate(node.output)]
    local = [f for f in model.functions if (f.domain, f.name) == (node.domain, node.op_type)]
    bundled = _bundled_fits(node, model) if not local and _key(node)[0] == "" else None
    if bundled is not None:  # the attributes are the body's: the call keeps none
        del call.attribute[:]
    tiny = helper.make_model(
        helper.make_graph([call], "body", inputs, outputs),
        opset_imports=list(model.opset_import),
        ir_version=model.ir_version,
        functions=local or ([bundled] if bundled is not None else []),
    )
    key = tiny.SerializeToString(deterministic=True)
    if key in cache:
        return cache[key]
    cache[key] = None
    try:
        inlined = onnx.inliner.inline_selected_functions(
            tiny, [(node.domain, node.op_type)], inline_schema_functions=bundled is None
        )
        del inlined.functions[:]
        inferred = onnx.shape_inference.infer_shapes(inlined)
    except Exception:  # noqa: BLE001 - the onnx C++ layer raises several types; the call stays fused
        return None
    if any(_key(n) == _key(node) for n in inlined.graph.node) or not inlined.graph.node:
        return None
    formal = {f"in{i}" for i in range(len(node.input))} | {f"out{j}" for j in range(len(node.output))}
    infos = [vi for vi in inferred.graph.value_info if vi.name not in formal]
    cache[key] = (list(inlined.graph.node), infos)
    return cache[key]


def _instantiate(call: onnx.NodeProto, nodes: list[onnx.NodeProto]) -> list[onnx.NodeProto]:
    """The body's nodes with formal names replaced by the call's values, internal values
    prefixed, each node named after the call and carrying its metadata."""
    actual = {f"in{i}": v for i, v in enumerate(call.input)}
    actual.update({f"out{j}": v for j, v in enumerate(call.output)})
    prefix = _prefix(call)

    def name(v: str) -> str:
        if not v:
            return v
        return actual[v] if v in actual else prefix + v

    out = []
    base = call.name or prefix.rstrip(":")
    for i, n in enumerate(nodes):
        new = onnx.NodeProto()
        new.CopyFrom(n)
        new.input[:] = [name(v) for v in n.input]
        new.output[:] = [name(v) for v in n.output]
        new.name = f"{base}/{i}:{n.op_type}"
        del new.metadata_props[:]
        new.metadata_props.extend(call.metadata_props)
        out.append(new)
    return out
