"""Parse the text torch.fx prints for an ATen graph into a small IR, without executing it.

The input is what ``GraphModule.print_readable()`` (TorchDynamo + AOTAutograd) writes for one
rank: a ``class ...(torch.nn.Module)`` with a ``forward`` method whose parameters (or, for
joint graphs, annotated declarations followed by ``fx_pytree.tree_flatten_spec``) are the
graph inputs, one assignment per node (``name: "f32[8, 1536]" = torch.ops.aten.mm.default(a, b)``),
``x = y[k]`` for items of tuple results, ``_tensor_constantN = self._tensor_constantN`` for
constants, ``# File: path:line in fn, code: ...`` comments naming the source line of the nodes
below them, and a ``return`` of a tuple, a list or ``pytree.tree_unflatten([...], ...)``.
A data-dependent size (an unbacked SymInt: ``"i64[u0, 1]"`` after ``aten.nonzero``) stays a
name in the shape; ``name: "Sym(u0)" = torch.ops.aten.sym_size.int(x, 0)`` is a node without a
tensor type, and torch's bound checks of such sizes (``"Sym(u0 >= 0)"`` comparisons and
``aten._assert_scalar``) are dropped.

The text is read with :mod:`ast`; nothing in it is imported or run. Node lines as torch.fx
prints them are read by :mod:`analyzer.importers.fx.lines` (a regex each, 3x faster than the syntax tree)
and only the rest by :mod:`ast`, with the same result; anything that reading does not cover
sends the whole text through :mod:`ast`.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import FrozenInstanceError
from pathlib import Path

from analyzer.errors import InputError
from analyzer.importers.fx.lines import FastLine, NotFast, split_dump

__all__ = [
    "DTYPES",
    "FxGraph",
    "FxInput",
    "FxNode",
    "OpRef",
    "Ref",
    "TensorType",
    "TorchConst",
    "parse_fx",
    "parse_fx_text",
    "torch_dtype",
]

#: dtype codes of fx annotations (``torch._prims_common`` short names)
DTYPES = ("b8", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64")

_TORCH_DTYPES = {
    "torch.bool": "b8",
    "torch.uint8": "u8",
    "torch.int8": "i8",
    "torch.int16": "i16",
    "torch.short": "i16",
    "torch.int32": "i32",
    "torch.int": "i32",
    "torch.int64": "i64",
    "torch.long": "i64",
    "torch.float16": "f16",
    "torch.half": "f16",
    "torch.bfloat16": "bf16",
    "torch.float32": "f32",
    "torch.float": "f32",
    "torch.float64": "f64",
    "torch.double": "f64",
}
_ANNOTATION = re.compile(r"(?P<dtype>[a-z]+[0-9]+)\[(?P<dims>[^\]]*)\]")
_DIM = re.compile(r"[0-9]+|u[0-9]+")
_LAMBDA_CLASS = re.compile(r"^class <lambda>\(", re.MULTILINE)
_NUMBER_NAMES = {"inf": float("inf"), "nan": float("nan")}


class _Record:
    """A record whose fields are its ``__slots__``, compared, hashed and printed as
    ``@dataclass`` does (``Ref(name='x')``). The classes below are written out rather than made
    by ``@dataclass``, whose generated methods took 3 ms of each process importing this
    module."""

    __slots__ = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.__slots__)
        return f"{type(self).__qualname__}({fields})"

    __hash__ = None  # type: ignore[assignment]


class _Frozen(_Record):
    """A :class:`_Record` that cannot change after ``__init__`` (as ``@dataclass(frozen=True)``)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple:  # copy and pickle through __init__, not __setattr__
        return type(self), self._values()


_set = object.__setattr__


class TensorType(_Frozen):
    """Dtype code (one of :data:`DTYPES`) and shape of a value: sizes, or the name of a
    data-dependent size (an unbacked SymInt such as ``u0``, the row count of ``aten.nonzero``)."""

    __slots__ = ("dtype", "shape")
    dtype: str
    shape: tuple[int | str, ...]

    def __init__(self, dtype: str, shape: tuple[int | str, ...]) -> None:
        _set(self, "dtype", dtype)
        _set(self, "shape", shape)

    def __eq__(self, other: object) -> bool:  # hot: value types are compared and hashed per node
        if other.__class__ is TensorType:
            return self.dtype == other.dtype and self.shape == other.shape
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.dtype, self.shape))

    def __str__(self) -> str:
        return f"{self.dtype}[{', '.join(map(str, self.shape))}]"


class Ref(_Frozen):
    """A reference to an earlier value (graph input, node or constant) by name."""

    __slots__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        _set(self, "name", name)


class OpRef(_Frozen):
    """An operator passed as an argument (``torch.ops._C.rms_norm.default`` -> ``_C.rms_norm.default``)."""

    __slots__ = ("target",)
    target: str

    def __init__(self, target: str) -> None:
        _set(self, "target", target)


class TorchConst(_Frozen):
    """A torch object printed as an argument: ``torch.int32``, ``torch.contiguous_format``,
    ``device(type='cuda', index=0)``; ``text`` is its source text."""

    __slots__ = ("text",)
    text: str

    def __init__(self, text: str) -> None:
        _set(self, "text", text)


class FxInput(_Frozen):
    """A graph input (a ``forward`` parameter)."""

    __slots__ = ("name", "type", "line")
    name: str
    type: TensorType
    line: int

    def __init__(self, name: str, type: TensorType, line: int) -> None:
        _set(self, "name", name)
        _set(self, "type", type)
        _set(self, "line", line)


class FxNode(_Record):
    """One node, in graph order.

    Attributes:
        name: the fx name of the value it defines.
        target: ``aten.mm.default``, ``_c10d_functional.all_reduce.default``,
            ``higher_order.auto_functionalized``, ...; ``getitem`` for ``x = y[k]`` (args
            ``(Ref(y), k)``) and ``get_attr`` for ``x = self.attr`` (args ``("attr",)``).
        args: positional arguments: Python literals, :class:`Ref`, :class:`OpRef`,
            :class:`TorchConst`, lists of these.
        kwargs: keyword arguments, same value kinds.
        type: the annotation (None for tuple results, which have none).
        source: text of the nearest ``# File: ...`` comment above, without ``#`` (None when
            the nearest comment is another one, e.g. "No stacktrace found for following nodes").
        line: 1-based line in the dump.
    """

    __slots__ = ("name", "target", "args", "kwargs", "type", "source", "line")

    def __init__(
        self,
        name: str,
        target: str,
        args: tuple,
        kwargs: dict,
        type: TensorType | None,
        source: str | None,
        line: int,
    ) -> None:
        self.name = name
        self.target = target
        self.args = args
        self.kwargs = kwargs
        self.type = type
        self.source = source
        self.line = line


class FxGraph(_Record):
    """A parsed dump: inputs, nodes in order, and the returned values (None entries kept)."""

    __slots__ = ("path", "inputs", "nodes", "outputs", "output_line", "by_name")

    def __init__(
        self,
        path: str,
        inputs: list[FxInput],
        nodes: list[FxNode],
        outputs: list[str | None],
        output_line: int,
        by_name: dict[str, FxNode] | None = None,
    ) -> None:
        self.path = path
        self.inputs = inputs
        self.nodes = nodes
        self.outputs = outputs
        self.output_line = output_line
        self.by_name = {} if by_name is None else by_name

    def where(self, line: int) -> str:
        """``path:line`` for messages."""
        return f"{self.path}:{line}"


def _is_sym(annotation: ast.expr) -> bool:
    """A ``"Sym(...)"`` annotation: a symbolic integer or condition, not a tensor."""
    return isinstance(annotation, ast.Constant) and str(annotation.value).startswith("Sym(")


def _is_assert(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and (_dotted(value.func) or "").startswith("torch.ops.aten._assert_scalar")


def torch_dtype(value: object) -> str | None:
    """Dtype code of a ``torch.<dtype>`` argument (``TorchConst("torch.int32")`` -> ``"i32"``), else None."""
    return _TORCH_DTYPES.get(value.text) if isinstance(value, TorchConst) else None


def parse_fx(path: str | Path) -> FxGraph:
    """Read and parse one dump file.

    Raises:
        InputError: a missing or unreadable file, one that is not a regular file or over
            256 MiB (:func:`analyzer.inputs.files.read_text`), text that is not UTF-8, or any
            problem :func:`parse_fx_text` reports.
    """
    from analyzer.inputs.files import read_text

    p = Path(path)
    text = read_text(p, "torch.fx graph dump", limit="dump")
    return parse_fx_text(text, str(p))


def parse_fx_text(text: str, path: str = "<fx>") -> FxGraph:
    """Parse the text of one dump.

    Args:
        text: the dump.
        path: used in messages only.

    Returns:
        The :class:`FxGraph`.

    Raises:
        InputError: ``path:line: ...`` for a syntax error, text that is not an fx graph dump
            (no ``forward`` method), an annotation that is not ``dtype[dims]`` with each
            dim a size or a data-dependent size ``u<k>``, a statement other than those listed
            in the module docstring, a name used before it is defined or defined twice, or a
            constant without a known type.
    """
    text = _LAMBDA_CLASS.sub("class _lambda(", text)  # fx prints the class of a lambda module as <lambda>
    graph = _read_fast(text, path)
    if graph is not None:
        return graph
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise InputError(f"{path}:{exc.lineno or 1}: not a torch.fx graph dump (syntax error: {exc.msg})") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else type(exc).__name__
        raise InputError(f"{path}:1: not a torch.fx graph dump ({why})") from None
    fn = _forward(tree)
    if fn is None:
        raise InputError(f"{path}:1: not a torch.fx graph dump (no class with a forward method)")
    reader = _Reader(path, text.splitlines(), fn)
    try:
        return reader.read()
    except RecursionError:  # an argument nested deeper than any ATen call's (1+1+...+1, ----1)
        raise InputError(f"{path}:{reader.line}: not a torch.fx graph dump (an expression nested too deeply)") from None


def _read_fast(text: str, path: str) -> FxGraph | None:
    """The dump read with its node lines read by :mod:`analyzer.importers.fx.lines` and the rest by
    :mod:`ast`; None when that reading does not apply or meets anything wrong (the reading of
    the whole text by :mod:`ast` then gives the result or the message)."""
    dump = split_dump(text)
    if dump is None or not dump.lines:
        return None
    try:
        fn = _forward(ast.parse(dump.skeleton))
        if fn is None or not dump.fits(fn):
            return None
        return _Reader(path, text.splitlines(), fn, dump.lines).read()
    except Exception:  # any problem: the ast reading names it
        return None


def _forward(tree: ast.Module) -> ast.FunctionDef | None:
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    return item
    return None


def _dotted(expr: ast.expr) -> str | None:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def _line_of(stmt: ast.stmt | FastLine) -> int:
    return stmt.line if isinstance(stmt, FastLine) else stmt.lineno


class _Reader:
    def __init__(self, path: str, lines: list[str], fn: ast.FunctionDef, fast: list[FastLine] | None = None) -> None:
        self.path = path
        self.fn = fn
        self.fast = fast or []  # node lines read without ast (analyzer.importers.fx.lines), not in fn.body
        self.comments = [
            (i, line.strip().lstrip("#").strip())
            for i, line in enumerate(lines, start=1)
            if fn.lineno < i <= (fn.end_lineno or len(lines)) and line.lstrip().startswith("#")
        ]
        self.comment_lines = [at for at, _ in self.comments]
        self.types: dict[str, TensorType] = {}  # annotation text -> its type (a dump repeats them)
        self.inputs: list[FxInput] = []
        self.nodes: list[FxNode] = []
        self.defined: set[str] = set()
        self.declared: dict[str, TensorType] = {}
        self.outputs: list[str | None] | None = None
        self.output_line = 0
        self.line = fn.lineno  # the statement being read, for messages

    def fail(self, line: int, message: str) -> InputError:
        return InputError(f"{self.path}:{line}: {message}")

    def read(self) -> FxGraph:
        for arg in self.fn.args.args[1:]:
            if arg.annotation is not None:
                self.add_input(arg.arg, self.annotation(arg.annotation, arg.lineno), arg.lineno)
        body = sorted([*self.fn.body, *self.fast], key=_line_of) if self.fast else self.fn.body
        for stmt in body:
            self.line = _line_of(stmt)
            if self.outputs is not None:
                raise self.fail(_line_of(stmt), "statement after return")
            if isinstance(stmt, FastLine):
                self.fast_statement(stmt)
            else:
                self.statement(stmt)
        if self.outputs is None:
            raise self.fail(self.fn.lineno, "not a torch.fx graph dump (forward has no return)")
        if not self.inputs and self.fn.args.args[1:]:
            raise self.fail(self.fn.lineno, "not a torch.fx graph dump (forward parameters have no annotations)")
        graph = FxGraph(self.path, self.inputs, self.nodes, self.outputs, self.output_line)
        graph.by_name = {n.name: n for n in self.nodes}
        self.type_constants(graph)
        return graph

    def source(self, line: int) -> str | None:
        before = bisect.bisect_left(self.comment_lines, line)  # comments above the line
        text = self.comments[before - 1][1] if before else None
        return text if text and text.startswith("File:") else None

    def add_input(self, name: str, ttype: TensorType, line: int) -> None:
        self.define(name, line)
        self.inputs.append(FxInput(name, ttype, line))

    def define(self, name: str, line: int) -> None:
        if name in self.defined:
            raise self.fail(line, f"{name!r} is defined twice")
        self.defined.add(name)

    def annotation(self, expr: ast.expr, line: int) -> TensorType:
        if not (isinstance(expr, ast.Constant) and isinstance(expr.value, str)):
            raise self.fail(line, 'annotation is not a string such as "f32[8, 1536]"')
        return self.annotation_text(expr.value, line)

    def annotation_text(self, text: str, line: int) -> TensorType:
        known = self.types.get(text)
        if known is not None:
            return known
        m = _ANNOTATION.fullmatch(text.strip())
        if not m or m["dtype"] not in DTYPES:
            raise self.fail(line, f"unsupported annotation {text!r} (expected a dtype in {', '.join(DTYPES)})")
        dims = [d.strip() for d in m["dims"].split(",")] if m["dims"].strip() else []
        if not all(_DIM.fullmatch(d) for d in dims):
            raise self.fail(line, f"unsupported annotation {text!r} (malformed dims)")
        # u0, u1, ...: unbacked SymInts, sizes only known at run time (aten.nonzero, MoE routing)
        ttype = self.types[text] = TensorType(m["dtype"], tuple(int(d) if d.isdigit() else d for d in dims))
        return ttype

    def statement(self, stmt: ast.stmt) -> None:
        line = stmt.lineno
        if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
            if not isinstance(stmt.target, ast.Name):
                raise self.fail(line, "unsupported declaration")
            self.declared[stmt.target.id] = self.annotation(stmt.annotation, line)
            return
        if isinstance(stmt, ast.Return):
            self.output_line = line
            self.outputs = self.returned(stmt.value, line)
            return
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
            return  # fx frees dead values with "x = None"
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple):
            self.flatten_spec(stmt)
            return
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and _is_sym(stmt.annotation):
            self.symbolic(stmt.target.id, stmt.value, line)
            return
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            self.node(stmt.target.id, stmt.value, self.annotation(stmt.annotation, line), line)
            return
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _is_assert(stmt.value):
            return  # torch's runtime check of a data-dependent size's bounds: no value
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            self.node(stmt.targets[0].id, stmt.value, None, line)
            return
        raise self.fail(line, f"unsupported statement in an fx graph ({type(stmt).__name__})")

    def symbolic(self, name: str, value: ast.expr | None, line: int) -> None:
        """``name: "Sym(u0)" = torch.ops.aten.sym_size.int(x, 0)`` is a node without a tensor type
        (the size a later view names); ``name: "Sym(u0 >= 0)" = size >= 0`` only feeds an
        ``_assert_scalar`` and is dropped with it."""
        if isinstance(value, ast.Compare):
            self.define(name, line)
            return
        if not (isinstance(value, ast.Call) and (_dotted(value.func) or "").startswith("torch.ops.aten.sym_size")):
            raise self.fail(line, "unsupported symbolic value (expected aten.sym_size.int or a comparison)")
        self.node(name, value, None, line)

    def flatten_spec(self, stmt: ast.Assign) -> None:
        call = stmt.value
        if not (isinstance(call, ast.Call) and (_dotted(call.func) or "").endswith("tree_flatten_spec")):
            raise self.fail(stmt.lineno, "unsupported tuple assignment (expected fx_pytree.tree_flatten_spec)")
        for elt in stmt.targets[0].elts:
            if not isinstance(elt, ast.Name):
                raise self.fail(stmt.lineno, "unsupported tuple assignment target")
            if elt.id not in self.declared:
                raise self.fail(stmt.lineno, f"input {elt.id!r} has no declared annotation")
            self.add_input(elt.id, self.declared[elt.id], stmt.lineno)

    def returned(self, value: ast.expr | None, line: int) -> list[str | None]:
        if isinstance(value, ast.Call) and (_dotted(value.func) or "").endswith("tree_unflatten") and value.args:
            value = value.args[0]
        items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
        out: list[str | None] = []
        for item in items:
            if isinstance(item, ast.Constant) and item.value is None:
                out.append(None)
            elif isinstance(item, ast.Name) and item.id in self.defined:
                out.append(item.id)
            else:
                raise self.fail(line, "unsupported return value (expected names of graph values or None)")
        return out

    def node(self, name: str, value: ast.expr, ttype: TensorType | None, line: int) -> None:
        if isinstance(value, ast.Subscript):
            base = value.value
            index = self.literal(value.slice, line)
            if not (isinstance(base, ast.Name) and base.id in self.defined and isinstance(index, int)):
                raise self.fail(line, "unsupported subscript (expected name[int] of an earlier tuple result)")
            target, args, kwargs = "getitem", (Ref(base.id), index), {}
        elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
            target, args, kwargs = "get_attr", (value.attr,), {}
        elif isinstance(value, ast.Call):
            dotted = _dotted(value.func) or ""
            if not dotted.startswith("torch.ops.") or dotted.count(".") < 3:
                raise self.fail(line, f"unsupported call {dotted or ast.unparse(value.func)!r} (expected torch.ops.*)")
            target = dotted[len("torch.ops.") :]
            args = tuple(self.literal(a, line) for a in value.args)
            kwargs = {}
            for kw in value.keywords:
                if kw.arg is None:
                    raise self.fail(line, "unsupported **kwargs in a call")
                kwargs[kw.arg] = self.literal(kw.value, line)
        else:
            raise self.fail(line, f"unsupported value {ast.unparse(value)[:60]!r}")
        self.add_node(name, target, args, kwargs, ttype, line)

    def add_node(self, name: str, target: str, args: tuple, kwargs: dict, ttype: TensorType | None, line: int) -> None:
        self.define(name, line)
        self.nodes.append(FxNode(name, target, args, kwargs, ttype, self.source(line), line))

    def fast_statement(self, x: FastLine) -> None:
        """:meth:`statement` of a node line read by :mod:`analyzer.importers.fx.lines` (NotFast where
        :meth:`statement` would raise: the caller then reads the text with ast)."""
        ttype = None if x.annotation is None else self.annotation_text(x.annotation, x.line)
        if x.form == "getitem":
            index = self.fast_value(x.args[0])
            if not (x.target in self.defined and isinstance(index, int)):
                raise NotFast
            target, args, kwargs = "getitem", (Ref(x.target), index), {}
        elif x.form == "get_attr":
            target, args, kwargs = "get_attr", (x.target,), {}
        else:
            if x.target.count(".") < 3:
                raise NotFast
            target = x.target[len("torch.ops.") :]
            args = tuple(self.fast_value(a) for a in x.args)
            kwargs = {k: self.fast_value(v) for k, v in x.kwargs}
        self.add_node(x.name, target, args, kwargs, ttype, x.line)

    def fast_value(self, value: tuple):
        """:meth:`literal` of a value parsed by :mod:`analyzer.importers.fx.lines`."""
        kind, v = value
        if kind == "const":
            return v
        if kind == "name":
            if v in self.defined:
                return Ref(v)
            if v in _NUMBER_NAMES:
                return _NUMBER_NAMES[v]
        elif kind == "list":
            return [self.fast_value(e) for e in v]
        elif kind == "neg":
            inner = self.fast_value(v)
            if isinstance(inner, (int, float)) and not isinstance(inner, bool):
                return -inner
        elif kind == "attr":
            if v.startswith("torch.ops."):
                return OpRef(v[len("torch.ops.") :])
            if v.startswith("torch."):
                return TorchConst(v)
        elif kind == "device":
            return TorchConst(v)
        raise NotFast

    def literal(self, expr: ast.expr, line: int):
        if isinstance(expr, ast.Constant) and (expr.value is None or isinstance(expr.value, (bool, int, float, str))):
            return expr.value
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            inner = self.literal(expr.operand, line)
            if isinstance(inner, (int, float)) and not isinstance(inner, bool):
                return -inner if isinstance(expr.op, ast.USub) else inner
        elif isinstance(expr, (ast.List, ast.Tuple)):
            return [self.literal(e, line) for e in expr.elts]
        elif isinstance(expr, ast.Name):
            if expr.id in self.defined:
                return Ref(expr.id)
            if expr.id in _NUMBER_NAMES:
                return _NUMBER_NAMES[expr.id]
            raise self.fail(line, f"name {expr.id!r} is used before it is defined")
        elif isinstance(expr, ast.Attribute):
            dotted = _dotted(expr) or ""
            if dotted.startswith("torch.ops."):
                return OpRef(dotted[len("torch.ops.") :])
            if dotted.startswith("torch."):
                return TorchConst(dotted)
        elif isinstance(expr, ast.Call) and _dotted(expr.func) in ("device", "torch.device"):
            return TorchConst(ast.unparse(expr))
        raise self.fail(line, f"unsupported argument {ast.unparse(expr)[:60]!r}")

    def type_constants(self, graph: FxGraph) -> None:
        """A constant without its own annotation takes the type of the ``lift_fresh_copy`` reading it."""
        for node in graph.nodes:
            if node.target != "get_attr" or node.type is not None:
                continue
            for user in graph.nodes:
                if user.target.startswith("aten.lift_fresh_copy") and user.args[:1] == (Ref(node.name),) and user.type:
                    node.type = user.type
                    break
            else:
                raise self.fail(node.line, f"constant {node.name!r} has no annotation and no annotated lift_fresh_copy")
