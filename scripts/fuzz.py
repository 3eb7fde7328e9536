"""Fuzz every subcommand of shardlog with bad and hostile input, and write the ``## Last run``
section of docs/fuzzing.md.

Every generated case is a set of files (ONNX models, torch.fx dumps, specs, rule files, fact
files, tables, FIFOs, links) and the arguments of one subcommand (``check``, ``import-fx``,
``facts``, ``query``, ``rules test``). Cases run in-process with ``click.testing.CliRunner``
inside worker processes (every n-th in a ``python -m analyzer.cli`` subprocess of the worker),
each under a wall-clock limit (a hung worker is killed and replaced, and the case counts as a
hang) and an address-space cap. A case passes when (:func:`problems`):

- the exit code is 0 or 1 (a report) or 2 (an input error), or the ones the case expects (a
  report aimed at an input must be refused: 2); never 70 (internal error);
- no exception escaped, and the output has no ``Traceback`` and no ``internal error``;
- on exit 2 the output is exactly one line, starting with ``shardlog: error:``;
- stdout and stderr hold no control character but tab and newline (names are escaped), and at
  most one line starts with ``verified (`` or ``discrepancy (`` (no name forges a verdict);
- the input files hash the same before and after; a payload in a dump did not run;
- the worker's peak memory stays under :data:`MEMORY_LIMIT_MB`.

Categories (see :func:`generate`): ``truncate``, ``flip``, ``splice`` (bytes of ONNX files),
``structure`` (ModelProto mutations: dangling inputs, cycles, absurd dims, duplicate and empty
names, attribute types, unknown ops and domains, opsets, missing outputs, ...), ``strings``
(hostile node/value names and metadata, non-UTF-8 bytes), ``spec`` (YAML relation specs),
``paths`` (argument and path oddities), and from ``scripts/fuzz_commands.py``: ``files``,
``yaml``, ``rules``, ``fx``, ``commands``, ``forge``.

The generator is seeded (``random.Random(seed)``), so a run is reproducible.

Usage: ``python scripts/fuzz.py [--count 5000] [--seed 0] [--jobs 2] [--timeout 60]
[--subprocess-every 40] [--out docs/fuzzing.md] [--no-write]``
"""

from __future__ import annotations

import copy
import hashlib
import multiprocessing as mp
import os
import platform
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import onnx  # noqa: E402
import onnx.parser  # noqa: E402
from onnx import helper  # noqa: E402

__all__ = [
    "Case",
    "Outcome",
    "CATEGORIES",
    "generate",
    "run_cases",
    "problems",
    "summary_markdown",
    "write_section",
]

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'

SEQ_TEXT = """
mlp (float[4, 8] x, float[8, 16] w1, float[16, 8] w2) => (float[4, 8] y)
    <int64[2] shp = {4, 8}, float[8] b = {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0}> {
  h = MatMul(x, w1)
  a = Relu(h)
  m = MatMul(a, w2)
  r = Reshape(m, shp)
  y = Add(r, b)
}
"""

RANK_TEXT = """
mlp (float[4, 8] x, float[8, 8] w1, float[8, 8] w2) => (float[4, 8] y)
    <int64[2] shp = {4, 8}, float[8] b = {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0}> {
  h = MatMul(x, w1)
  a = Relu(h)
  z = MatMul(a, w2)
  m = com.microsoft.AllReduce(z)
  r = Reshape(m, shp)
  y = Add(r, b)
}
"""

RANK_BUG_TEXT = RANK_TEXT.replace("m = com.microsoft.AllReduce(z)", "m = Identity(z)")

SPEC_OK = "world_size: 2\nrelations:\n  x: replicate\n  w1: {shard: 1}\n  z: {partial: sum}\n"

CATEGORIES = (
    "truncate",
    "flip",
    "splice",
    "structure",
    "strings",
    "spec",
    "paths",
    "files",
    "yaml",
    "rules",
    "fx",
    "commands",
    "forge",
)

HOSTILE = [
    '"',
    "'",
    '\\"',
    "\\",
    "\\\\n",
    "\t",
    "\n",
    "\r\n",
    "\x00",
    "a\x00b",
    "<script>alert(1)</script>",
    "[bold]x[/]",
    "[/]",
    "[link=javascript:alert(1)]x[/link]",
    "%s%n%x",
    "{0}{}",
    "${HOME}",
    "$(rm -rf /)",
    "`id`",
    "../../etc/passwd",
    "/",
    "",
    " ",
    "\u202eevil",
    "\ufeff",
    "\U0001f4a9",
    "é",
    "\x1b[31mred\x1b[0m",
    "a" * 5000,
    "x" * 100_000,
    "\"'\t\n\\<>&;|",
    "r0",
    "seq",
    "#0:MatMul",
    "_",
    "1e9",
    "-1",
    "NaN",
    "null",
    "None",
    "::",
    "a,b",
    "a.b.c",
    "A" * 255 + "\n" + "B",
]

NON_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3\x28", b"\x80abc", b"\xed\xa0\x80", b"abc\xf8\x88\x80\x80\x80"]


@dataclass(frozen=True)
class Link:
    """A file of a case that is not plain bytes: ``fifo``, ``dir``, ``symlink`` (to ``target``,
    where ``{dir}`` is the case's folder) or ``hardlink`` (to the case's file ``target``)."""

    kind: str
    target: str = ""


@dataclass
class Case:
    """One fuzz input: files to write and the command's arguments.

    Attributes:
        category: one of :data:`CATEGORIES`.
        name: a short description of the mutation.
        files: file name -> content (or a :class:`Link`), written into a fresh folder.
        args: the arguments after the command; ``{dir}`` is replaced by the folder.
        command: the subcommand (``check``, ``import-fx``, ``facts``, ``query``, ``rules test``).
        expect: the exit codes this input may end in (None: 0, 1 or 2).
        says: text the output must hold (e.g. the file:line of a rule it must name), if any.
    """

    category: str
    name: str
    files: dict[str, bytes | Link]
    args: list[str]
    command: str = "check"
    expect: tuple[int, ...] | None = None
    says: str = ""


@dataclass
class Outcome:
    """What running one case gave."""

    category: str
    name: str
    exit_code: int | None
    output: str = ""
    stderr: str = ""
    exception: str = ""
    changed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    hang: bool = False
    expect: tuple[int, ...] | None = None
    max_rss_mb: float = 0.0
    payload_ran: bool = False
    subprocess: bool = False
    says: str = ""


# --------------------------------------------------------------------------- seeds


def _model(text: str) -> onnx.ModelProto:
    return onnx.parser.parse_model(HEADER + text)


def seed_models() -> dict[str, onnx.ModelProto]:
    """The hand-made seed graphs: ``seq``, ``rank`` (with all-reduce), ``rank_bug`` (without)."""
    rank = _model(RANK_TEXT)
    # exporters record the shapes of collective outputs; onnx shape inference cannot see through them
    rank.graph.value_info.append(helper.make_tensor_value_info("m", onnx.TensorProto.FLOAT, [4, 8]))
    return {"seq": _model(SEQ_TEXT), "rank": rank, "rank_bug": _model(RANK_BUG_TEXT)}


def _example_bytes() -> dict[str, bytes]:
    folder = ROOT / "examples" / "qwen2_tp2"
    if not (folder / "seq.onnx").is_file():
        return {}
    return {n: (folder / f"{n}.onnx").read_bytes() for n in ("seq", "rank0", "rank1")}


def _ser(model: onnx.ModelProto) -> bytes:
    return model.SerializeToString()


def _triple(seq: bytes, r0: bytes, r1: bytes | None = None, extra: Sequence[str] = ()) -> tuple[dict, list[str]]:
    files = {"seq.onnx": seq, "rank0.onnx": r0, "rank1.onnx": r1 if r1 is not None else r0}
    return files, ["{dir}/seq.onnx", "{dir}/rank0.onnx", "{dir}/rank1.onnx", *extra]


def _place(rng: random.Random, bad: bytes, good: dict[str, bytes]) -> tuple[dict, list[str], str]:
    """Put a bad file in the seq or a rank position; the others stay good."""
    where = rng.choice(["seq", "rank0", "rank1"])
    seq = bad if where == "seq" else good["seq"]
    r0 = bad if where == "rank0" else good["rank0"]
    r1 = bad if where == "rank1" else good["rank1"]
    files, args = _triple(seq, r0, r1)
    return files, args, where


# --------------------------------------------------------------------------- byte mutations


def _good_sets(models: dict[str, onnx.ModelProto], example: dict[str, bytes]) -> list[dict[str, bytes]]:
    tiny = {"seq": _ser(models["seq"]), "rank0": _ser(models["rank"]), "rank1": _ser(models["rank"])}
    return [tiny, example] if example else [tiny]


def _pick_set(rng: random.Random, sets: list[dict[str, bytes]]) -> dict[str, bytes]:
    # the example is ~100x larger than the tiny graphs; use it for one case in ten
    return sets[1] if len(sets) > 1 and rng.random() < 0.1 else sets[0]


def _truncate(rng: random.Random, sets: list[dict[str, bytes]]) -> Case:
    good = _pick_set(rng, sets)
    src = good[rng.choice(["seq", "rank0"])]
    cut = rng.choice([0, 1, 2, len(src) - 1, rng.randrange(len(src))])
    files, args, where = _place(rng, src[:cut], good)
    return Case("truncate", f"{where} cut at {cut}/{len(src)}", files, args)


def _flip(rng: random.Random, sets: list[dict[str, bytes]]) -> Case:
    good = _pick_set(rng, sets)
    data = bytearray(good[rng.choice(["seq", "rank0"])])
    n = rng.choice([1, 1, 2, 4, 16])
    for _ in range(n):
        i = rng.randrange(len(data))
        data[i] = rng.choice([data[i] ^ (1 << rng.randrange(8)), rng.randrange(256), 0x00, 0xFF])
    files, args, where = _place(rng, bytes(data), good)
    return Case("flip", f"{where} {n} byte(s) changed", files, args)


def _splice(rng: random.Random, sets: list[dict[str, bytes]]) -> Case:
    good = _pick_set(rng, sets)
    a, b = good["seq"], good["rank0"]
    kind = rng.choice(["ab", "dup", "garbage", "concat"])
    if kind == "ab":
        data = a[: rng.randrange(len(a))] + b[rng.randrange(len(b)) :]
    elif kind == "dup":
        i, j = sorted(rng.randrange(len(a)) for _ in range(2))
        data = a[:j] + a[i:j] + a[j:]
    elif kind == "garbage":
        i = rng.randrange(len(a))
        data = a[:i] + rng.randbytes(rng.choice([1, 8, 64, 512])) + a[i:]
    else:  # two models back to back: protobuf merges them
        data = a + b
    files, args, where = _place(rng, data, good)
    return Case("splice", f"{where} {kind}", files, args)


# --------------------------------------------------------------------------- structural mutations

Mutator = Callable[[random.Random, onnx.ModelProto], str]


def _m_dangling(rng: random.Random, m: onnx.ModelProto) -> str:
    g = m.graph
    i = rng.randrange(len(g.node))
    name = g.node[i].name or g.node[i].op_type
    del g.node[i]
    return f"deleted node {name}: its consumers read a dangling value"


def _m_dangling_input(rng: random.Random, m: onnx.ModelProto) -> str:
    node = rng.choice(list(m.graph.node))
    node.input.append(rng.choice(["nowhere", "", "x"]))
    return f"extra input on {node.op_type}"


def _m_cycle(rng: random.Random, m: onnx.ModelProto) -> str:
    g = m.graph
    kind = rng.choice(["self", "back", "swap"])
    if kind == "self":
        node = rng.choice(list(g.node))
        node.input[0] = node.output[0]
    elif kind == "back":
        first, last = g.node[0], g.node[len(g.node) - 1]
        first.input[0] = last.output[0]
    else:
        nodes = list(g.node)
        rng.shuffle(nodes)
        del g.node[:]
        g.node.extend(nodes)
    return f"cycle ({kind})"


def _dims_of(m: onnx.ModelProto) -> list:
    g = m.graph
    out = []
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        out.extend(vi.type.tensor_type.shape.dim)
    return out


def _m_dims(rng: random.Random, m: onnx.ModelProto) -> str:
    dims = _dims_of(m)
    choice = rng.choice([-1, 0, 2**40, 2**62, -(2**62), "N", "", "?", "\n", "a" * 1000, "clear"])
    for d in rng.sample(dims, k=rng.randint(1, len(dims))):
        if choice == "clear":
            d.Clear()
        elif isinstance(choice, str):
            d.dim_param = choice
        else:
            d.dim_value = choice
    return f"value dims -> {str(choice)[:20]!r}"


def _m_init_dims(rng: random.Random, m: onnx.ModelProto) -> str:
    init = rng.choice(list(m.graph.initializer))
    kind = rng.choice(["neg", "zero", "huge", "overflow", "rank0", "extra", "raw_short", "raw_long", "external"])
    if kind == "neg":
        init.dims[0] = -1
    elif kind == "zero":
        init.dims[0] = 0
    elif kind == "huge":
        init.dims[0] = 2**40
    elif kind == "overflow":
        del init.dims[:]
        init.dims.extend([2**32, 2**32, 2**32])
    elif kind == "rank0":
        del init.dims[:]
    elif kind == "extra":
        init.dims.extend([1, 3])
    elif kind in ("raw_short", "raw_long"):
        arr = onnx.numpy_helper.to_array(init)
        raw = arr.tobytes()
        init.ClearField("float_data")
        init.ClearField("int64_data")
        init.raw_data = raw[:-3] if kind == "raw_short" else raw + b"\x00" * 5
    else:
        init.data_location = onnx.TensorProto.EXTERNAL
        del init.external_data[:]
        loc = rng.choice(["/etc/passwd", "../../nope.bin", "", "\x00"])
        init.external_data.add(key="location", value=loc)
    return f"initializer {init.name}: {kind}"


def _m_dtype(rng: random.Random, m: onnx.ModelProto) -> str:
    g = m.graph
    target = rng.choice(["input", "init"])
    value = rng.choice([0, 16, 999, -5, onnx.TensorProto.STRING, onnx.TensorProto.COMPLEX128])
    if target == "input":
        g.input[rng.randrange(len(g.input))].type.tensor_type.elem_type = value
    else:
        g.initializer[rng.randrange(len(g.initializer))].data_type = value
    return f"{target} elem_type {value}"


def _m_type(rng: random.Random, m: onnx.ModelProto) -> str:
    g = m.graph
    vi = rng.choice(list(g.input) + list(g.output))
    kind = rng.choice(["none", "sequence", "optional", "sparse", "noshape"])
    if kind == "none":
        vi.ClearField("type")
    elif kind == "sequence":
        vi.type.CopyFrom(helper.make_sequence_type_proto(helper.make_tensor_type_proto(1, [4])))
    elif kind == "optional":
        vi.type.CopyFrom(helper.make_optional_type_proto(helper.make_tensor_type_proto(1, [4])))
    elif kind == "sparse":
        vi.type.CopyFrom(helper.make_sparse_tensor_type_proto(1, [4, 8]))
    else:
        vi.type.tensor_type.ClearField("shape")
    return f"{vi.name} type {kind}"


def _m_names(rng: random.Random, m: onnx.ModelProto) -> str:
    g = m.graph
    kind = rng.choice(["dup_node", "empty_node", "dup_output", "empty_output", "dup_input", "dup_init", "no_outputs"])
    if kind == "dup_node":
        for n in g.node:
            n.name = "same"
    elif kind == "empty_node":
        for n in g.node:
            n.name = ""
    elif kind == "dup_output":  # two producers of one value (SSA broken)
        g.node[1].output[0] = g.node[0].output[0]
    elif kind == "empty_output":
        rng.choice(list(g.node)).output[0] = ""
    elif kind == "dup_input":
        g.input.append(copy.deepcopy(g.input[0]))
    elif kind == "dup_init":
        g.initializer.append(copy.deepcopy(g.initializer[0]))
    else:
        del rng.choice(list(g.node)).output[:]
    return kind


def _m_attr(rng: random.Random, m: onnx.ModelProto) -> str:
    node = rng.choice(list(m.graph.node))
    kind = rng.choice(["int", "ints", "float", "string", "tensor", "graph", "huge", "nan", "bytes", "undefined", "dup"])
    name = rng.choice(["axis", "perm", "keepdims", "to", "", "\x00"])
    if kind == "int":
        node.attribute.append(helper.make_attribute(name, rng.choice([-1, 0, 2**31, 2**62])))
    elif kind == "ints":
        node.attribute.append(helper.make_attribute(name, [2**63 - 1, -(2**63), 0]))
    elif kind == "float":
        node.attribute.append(helper.make_attribute(name, 1e308))
    elif kind == "nan":
        node.attribute.append(helper.make_attribute(name, float("nan")))
    elif kind == "string":
        node.attribute.append(helper.make_attribute(name, rng.choice(HOSTILE)))
    elif kind == "bytes":
        node.attribute.append(helper.make_attribute(name, rng.choice(NON_UTF8)))
    elif kind == "tensor":
        node.attribute.append(helper.make_attribute(name, onnx.TensorProto(name="t", data_type=1, dims=[2**40])))
    elif kind == "graph":
        sub = helper.make_graph([], "sub", [], [])
        node.attribute.append(helper.make_attribute(name, sub))
    elif kind == "huge":
        node.attribute.append(helper.make_attribute(name, list(range(10_000))))
    elif kind == "undefined":
        attr = onnx.AttributeProto(name=name, type=onnx.AttributeProto.UNDEFINED)
        node.attribute.append(attr)
    else:
        node.attribute.append(helper.make_attribute("axis", 1))
        node.attribute.append(helper.make_attribute("axis", "one"))
    return f"attribute {kind} {name!r} on {node.op_type}"


def _m_attr_type_mismatch(rng: random.Random, m: onnx.ModelProto) -> str:
    node = rng.choice(list(m.graph.node))
    attr = onnx.AttributeProto(name="axis", type=rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 99]))
    if rng.random() < 0.5:
        attr.i = 3  # type says one thing, payload another
    node.attribute.append(attr)
    return f"attribute type {attr.type} with a mismatched payload on {node.op_type}"


def _m_ops(rng: random.Random, m: onnx.ModelProto) -> str:
    node = rng.choice(list(m.graph.node))
    kind = rng.choice(["unknown_op", "unknown_domain", "empty_op", "collective", "constant", "if", "loop"])
    if kind == "unknown_op":
        node.op_type = rng.choice(["FooBar", "matmul", "MatMul ", "\x00", "A" * 500])
    elif kind == "unknown_domain":
        node.domain = rng.choice(["com.evil", "ai.onnx.ml", "ai.onnx", "com.microsoft", "\n"])
    elif kind == "empty_op":
        node.op_type = ""
    elif kind == "collective":
        node.op_type = rng.choice(["AllReduce", "AllGather", "ReduceScatter", "AllToAll"])
        node.domain = "com.microsoft"
        if rng.random() < 0.5:
            node.attribute.append(helper.make_attribute("axis", rng.choice([-7, 99, 2**40])))
    elif kind == "constant":
        t = onnx.TensorProto(name="c", data_type=onnx.TensorProto.INT64, dims=[rng.choice([0, 3, 2**20, -2])])
        t.int64_data.extend([1, 2, 3])
        c = helper.make_node("Constant", [], ["cst"], value=t)
        m.graph.node.insert(0, c)
        node.input.append("cst")
    elif kind == "if":
        sub = helper.make_graph([helper.make_node("Identity", [node.input[0]], ["o"])], "b", [], [])
        node.CopyFrom(helper.make_node("If", ["x"], list(node.output), then_branch=sub, else_branch=sub))
    else:
        body = helper.make_graph([], "body", [], [])
        node.CopyFrom(helper.make_node("Loop", ["", ""], list(node.output), body=body))
    return kind


def _m_opset(rng: random.Random, m: onnx.ModelProto) -> str:
    kind = rng.choice(["zero", "none", "huge", "neg", "dup", "ir0", "ir_huge", "functions"])
    if kind == "zero":
        m.opset_import[0].version = 0
    elif kind == "none":
        del m.opset_import[:]
    elif kind == "huge":
        m.opset_import[0].version = 2**62
    elif kind == "neg":
        m.opset_import[0].version = -3
    elif kind == "dup":
        m.opset_import.add(domain="", version=1)
    elif kind == "ir0":
        m.ir_version = 0
    elif kind == "ir_huge":
        m.ir_version = 2**62
    else:
        body = [helper.make_node("F", ["a"], ["b"], domain="com.evil")]  # calls itself
        f = helper.make_function("com.evil", "F", ["a"], ["b"], body, [])
        m.functions.append(f)
        m.opset_import.add(domain="com.evil", version=1)
        rng.choice(list(m.graph.node)).CopyFrom(helper.make_node("F", ["x"], ["h"], domain="com.evil"))
    return f"opset {kind}"


def _m_outputs(rng: random.Random, m: onnx.ModelProto) -> str:
    g = m.graph
    kind = rng.choice(["none", "missing", "input", "dup", "empty", "all_nodes"])
    if kind == "none":
        del g.output[:]
    elif kind == "missing":
        g.output[0].name = "not_produced"
    elif kind == "input":
        g.output[0].name = "x"
    elif kind == "dup":
        g.output.append(copy.deepcopy(g.output[0]))
    elif kind == "empty":
        g.output[0].name = ""
    else:
        del g.node[:]
    return f"graph outputs: {kind}"


def _m_bloat(rng: random.Random, m: onnx.ModelProto) -> str:
    g = m.graph
    kind = rng.choice(["many_nodes", "deep_chain", "many_inputs", "wide_node"])
    if kind == "many_nodes":
        # identical siblings pair with each other: grounding time grows ~K**3.7 (K=80: 13 s)
        for i in range(30):
            g.node.append(helper.make_node("Relu", ["y"], [f"extra{i}"]))
    elif kind == "deep_chain":
        prev = "y"
        for i in range(150):  # a verified chain of 400 takes ~15 s to ground
            g.node.append(helper.make_node("Relu", [prev], [f"c{i}"]))
            prev = f"c{i}"
    elif kind == "many_inputs":
        for i in range(2000):
            g.input.append(helper.make_tensor_value_info(f"in{i}", onnx.TensorProto.FLOAT, [i % 7, 3]))
    else:
        g.node.append(helper.make_node("Concat", ["y"] * 5000, ["wide"], axis=0))
    return f"bloat {kind}"


MUTATORS: list[Mutator] = [
    _m_dangling,
    _m_dangling_input,
    _m_cycle,
    _m_dims,
    _m_init_dims,
    _m_dtype,
    _m_type,
    _m_names,
    _m_attr,
    _m_attr_type_mismatch,
    _m_ops,
    _m_opset,
    _m_outputs,
    _m_bloat,
]


def _extra_outputs(rng: random.Random) -> list[str]:
    """Sometimes ask for every report format, so hostile strings and odd graphs travel through
    the writers too. (``--numeric`` runs the graphs: its failures on broken graphs are the
    simulator's, outside the front door; see the expected failures in tests/test_fuzz.py.)"""
    extra: list[str] = []
    if rng.random() < 0.3:
        extra += ["--json", "{dir}/out/r.json", "--out", "{dir}/out/tables", "--explain", "-v"]
        extra += ["--html", "{dir}/out/r.html", "--sarif", "{dir}/out/r.sarif"]
    return extra


def _structure(rng: random.Random, models: dict[str, onnx.ModelProto], k: int = -1) -> Case:
    seq, rank = copy.deepcopy(models["seq"]), copy.deepcopy(models["rank"])
    names = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        mut = rng.choice(MUTATORS)
        target = rng.choice(["seq", "rank", "both"])
        state = rng.getstate()
        for model in [seq] if target == "seq" else [rank] if target == "rank" else [seq, rank]:
            rng.setstate(state)  # with "both", the same random choices on each side
            try:
                names.append(f"{target}:{mut(rng, model)}")
            except (IndexError, ValueError, KeyError, TypeError):  # an earlier mutation left nothing to mutate
                names.append(f"{target}:{mut.__name__} skipped")
    files, args = _triple(_ser(seq), _ser(rank), extra=_extra_outputs(rng))
    return Case("structure", "; ".join(dict.fromkeys(names)), files, args)


# --------------------------------------------------------------------------- hostile strings


def _rename_value(models: Sequence[onnx.ModelProto], old: str, new: str) -> None:
    for m in models:
        g = m.graph
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            if vi.name == old:
                vi.name = new
        for init in g.initializer:
            if init.name == old:
                init.name = new
        for n in g.node:
            for i, v in enumerate(n.input):
                if v == old:
                    n.input[i] = new
            for i, v in enumerate(n.output):
                if v == old:
                    n.output[i] = new


def _poison_bytes(data: bytes, marker: str, raw: bytes) -> bytes:
    """Replace the UTF-8 ``marker`` in a serialized model by ``raw`` (same length, so the
    protobuf length prefixes stay right): this is how non-UTF-8 bytes get into string fields."""
    m = marker.encode()
    assert len(raw) <= len(m)
    return data.replace(m, raw + b"_" * (len(m) - len(raw)))


def _strings(rng: random.Random, models: dict[str, onnx.ModelProto], k: int = -1) -> Case:
    seq, rank = copy.deepcopy(models["seq"]), copy.deepcopy(models["rank"])
    both = [seq, rank]
    s = rng.choice(HOSTILE)
    kind = rng.choice(
        [
            "node_name",
            "value_name",
            "output_name",
            "init_name",
            "stack_trace",
            "name_scopes",
            "model_meta",
            "doc_string",
            "domain",
            "legacy_scope",
            "non_utf8_meta",
            "non_utf8_name",
            "non_utf8_stack",
        ]
    )
    marker = "MARKERMARKER"
    if kind == "node_name":
        for m in both:
            for n in m.graph.node:
                n.name = s + n.op_type if rng.random() < 0.5 else s
    elif kind == "value_name":
        _rename_value(both, rng.choice(["h", "a", "r"]), s or "h2")
    elif kind == "output_name":
        _rename_value(both, "y", s)
    elif kind == "init_name":
        _rename_value(both, rng.choice(["shp", "b", "w1", "x"]), s)
    elif kind in ("stack_trace", "non_utf8_stack"):
        text = rng.choice(
            [
                f'File "{s}", line 12, in forward\n    {s}\n',
                f"File: {s}:3 in fwd, code: {s}",
                f'File "a.py", line {rng.choice(["0", "99999999999999999999", "-1"])}, in f\n{s}\n',
                s,
                f'File "{marker}", line 1, in f\n  x\n',
            ]
        )
        if kind == "non_utf8_stack":
            text = f'File "{marker}", line 1, in f\n  {marker}\n'
        for m in both:
            for n in m.graph.node:
                helper.set_metadata_props(n, {"pkg.torch.onnx.stack_trace": text})
    elif kind == "name_scopes":
        text = rng.choice(
            [
                repr(["", "model", s, "n"]),
                s,
                "[" * 5000 + "]" * 5000,
                "-" * 100_000 + "1",
                "(" * 300 + ")" * 300,
                "{1: 2}",
                "['a', " + "1" * 5000 + "]",
                "__import__('os').system('id')",
                "[" + ",".join(["'a'"] * 50_000) + "]",
            ]
        )
        for m in both:
            for n in m.graph.node:
                helper.set_metadata_props(n, {"pkg.torch.onnx.name_scopes": text})
    elif kind == "model_meta":
        for m in both:
            helper.set_model_props(m, {s or "k": s, "k2": s})
            m.producer_name = s
    elif kind == "doc_string":
        for m in both:
            m.graph.doc_string = s
            m.graph.name = s
            for n in m.graph.node:
                n.doc_string = s
    elif kind == "domain":
        rng.choice(list(seq.graph.node)).domain = s
    elif kind == "legacy_scope":
        for m in both:
            for n in m.graph.node:
                n.name = f"/{s}/layers.0/{s}/{n.op_type}"
    elif kind == "non_utf8_meta":
        for m in both:
            helper.set_model_props(m, {marker: marker})
            m.producer_name = marker
            m.graph.doc_string = marker
            helper.set_metadata_props(m.graph.node[0], {marker: marker, "source": marker})
    else:  # non_utf8_name
        for m in both:
            m.graph.node[1].name = marker
    data_seq, data_rank = _ser(seq), _ser(rank)
    if kind.startswith("non_utf8"):
        raw = rng.choice(NON_UTF8)
        data_seq, data_rank = _poison_bytes(data_seq, marker, raw), _poison_bytes(data_rank, marker, raw)
    files, args = _triple(data_seq, data_rank, extra=_extra_outputs(rng))
    return Case("strings", f"{kind} {s[:30]!r}", files, args)


# --------------------------------------------------------------------------- spec files


def _nth_or_random(rng: random.Random, choices: list, k: int):
    """The k-th choice while k is in range (every choice is tried once), then random ones."""
    return choices[k] if 0 <= k < len(choices) else rng.choice(choices)


def _nest(depth: int, flow: bool) -> str:
    return "[" * depth + "]" * depth if flow else "".join("  " * i + "- \n" for i in range(depth))


def _spec(rng: random.Random, models: dict[str, onnx.ModelProto], k: int = -1) -> Case:
    s = rng.choice(HOSTILE)
    choices: list[tuple[str, str | bytes]] = [
        ("ok", SPEC_OK),
        ("empty", ""),
        ("null", "null\n"),
        ("list", "- a\n- b\n"),
        ("scalar", "42\n"),
        ("string", "replicate\n"),
        ("relations list", "relations: [x, y]\n"),
        ("relations scalar", "relations: 3\n"),
        ("relations null", "relations:\n"),
        ("unknown key", "world_size: 2\nrelatons: {}\n"),
        ("unknown key non-str", "1: 2\n"),
        ("world_size str", "world_size: two\nrelations: {}\n"),
        ("world_size float", "world_size: 2.0\nrelations: {}\n"),
        ("world_size bool", "world_size: true\nrelations: {}\n"),
        ("world_size huge", f"world_size: {2**80}\nrelations: {{}}\n"),
        ("world_size wrong", "world_size: 3\nrelations: {}\n"),
        ("world_size neg", "world_size: -2\nrelations: {}\n"),
        ("wrong name", "relations:\n  nope: replicate\n"),
        ("hostile name", f"relations:\n  {s!r}: replicate\n"),
        (
            "hostile name json",
            "relations: {"
            + '"'
            + s.replace("\\", "\\\\")
            .replace('"', '\\"')
            .replace("\n", "\\n")
            .replace("\t", "\\t")
            .replace("\x00", "\\0")
            + '": replicate}\n',
        ),
        ("non-str key", "relations:\n  1: replicate\n  [a, b]: replicate\n"),
        ("null key", "relations:\n  ~: replicate\n"),
        ("bool key", "relations:\n  true: replicate\n"),
        ("unknown layout", "relations:\n  x: scatter\n"),
        ("layout int", "relations:\n  x: 5\n"),
        ("layout null", "relations:\n  x:\n"),
        ("layout list", "relations:\n  x: [shard, 0]\n"),
        ("shard str", "relations:\n  w1: {shard: one}\n"),
        ("shard neg", "relations:\n  w1: {shard: -1}\n"),
        ("shard huge", f"relations:\n  w1: {{shard: {2**40}}}\n"),
        ("shard huger", f"relations:\n  w1: {{shard: {2**100}}}\n"),
        ("shard float", "relations:\n  w1: {shard: 1.5}\n"),
        ("shard bool", "relations:\n  w1: {shard: true}\n"),
        ("shard too big axis", "relations:\n  w1: {shard: 7}\n"),
        ("two layouts", "relations:\n  w1: {shard: 0, partial: sum}\n"),
        ("no layout", "relations:\n  w1: {ranks: [w1, w1]}\n"),
        ("partial wrong", "relations:\n  z: {partial: avg}\n"),
        ("partial list", "relations:\n  z: {partial: [sum]}\n"),
        ("sections bad", "relations:\n  w1: {shard: 1, sections: [0, -1]}\n"),
        ("sections str", "relations:\n  w1: {shard: 1, sections: abc}\n"),
        ("sections huge", f"relations:\n  w1: {{shard: 1, sections: [{2**40}, {2**40}]}}\n"),
        ("sections bool", "relations:\n  w1: {shard: 1, sections: [true, true]}\n"),
        ("sections mismatch", "relations:\n  w1: {shard: 1, sections: [3, 5, 7]}\n"),
        ("sections empty", "relations:\n  w1: {shard: 1, sections: []}\n"),
        ("ranks wrong count", "relations:\n  w1: {shard: 1, ranks: [w1]}\n"),
        ("ranks wrong name", "relations:\n  w1: {shard: 1, ranks: [nope, w1]}\n"),
        ("ranks not list", "relations:\n  w1: {shard: 1, ranks: w1}\n"),
        ("ranks ints", "relations:\n  w1: {shard: 1, ranks: [1, 2]}\n"),
        ("ranks hostile", f"relations:\n  w1: {{shard: 1, ranks: [{s!r}, {s!r}]}}\n"),
        ("kind key int", "relations:\n  w1: {1: 0}\n"),
        ("kind key null", "relations:\n  w1: {~: 0}\n"),
        ("kind upper", "relations:\n  w1: {SHARD: 1}\n  x: REPLICATE\n"),
        ("intermediate", "relations:\n  h: {shard: 1}\n  a: replicate\n"),
        ("output", "relations:\n  y: {partial: max}\n"),
        ("deep flow", "relations: " + _nest(rng.choice([50, 500, 5000]), True) + "\n"),
        ("deep block", "relations:\n" + _nest(rng.choice([50, 300]), False)),
        ("deep map", "relations: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n"),
        (
            "anchors bomb",
            "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
            "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nrelations: {x: replicate}\n",
        ),
        ("alias", "r: &r replicate\nrelations: {x: *r}\n"),
        ("merge", "relations:\n  <<: {x: replicate}\n  w1: {shard: 1}\n"),
        ("python tag", "relations: !!python/object/apply:os.system ['id']\n"),
        ("binary tag", "relations: !!binary aGVsbG8=\n"),
        ("set tag", "relations: !!set {x, w1}\n"),
        ("timestamp", "world_size: 2001-12-14\nrelations: {}\n"),
        ("tabs", "relations:\n\tx: replicate\n"),
        ("bad indent", "relations:\n  x: replicate\n w1: {shard: 1}\n"),
        ("dup keys", "relations:\n  x: replicate\n  x: {shard: 0}\n"),
        ("multi doc", "relations: {x: replicate}\n---\nrelations: {}\n"),
        ("huge", "relations:\n" + "".join(f"  v{i}: replicate\n" for i in range(5_000))),
        ("long line", "relations: {x: " + "r" * 200_000 + "}\n"),
        ("bom", "\ufeffrelations: {x: replicate}\n"),
        ("nul", "relations: {x: replicate}\x00\n"),
        ("json", '{"relations": {"x": "replicate"}}'),
        ("crlf", "relations:\r\n  x: replicate\r\n"),
    ]
    name, text = _nth_or_random(rng, choices, k)
    data = text.encode("utf-8") if isinstance(text, str) else text
    if k >= len(choices) and rng.random() < 0.15:
        raw = rng.choice([b"\xff\xfe\x00", rng.randbytes(64), b"relations: {x: \xff}\n", b"\x00" * 10, b"\xef\xbb"])
        name, data = f"binary {raw[:8]!r}", raw
    elif k >= len(choices) and rng.random() < 0.15:
        cut = rng.randrange(len(SPEC_OK))
        name, data = f"ok cut at {cut}", SPEC_OK.encode()[:cut]
    seq, rank = _ser(models["seq"]), _ser(models["rank"])
    files, args = _triple(seq, rank, extra=["--relations", "{dir}/spec.yaml"])
    files["spec.yaml"] = data
    return Case("spec", name, files, args)


# --------------------------------------------------------------------------- paths and arguments


def _paths(rng: random.Random, models: dict[str, onnx.ModelProto], k: int = -1) -> Case:
    seq, rank, bug = _ser(models["seq"]), _ser(models["rank"]), _ser(models["rank_bug"])
    files = {
        "seq.onnx": seq,
        "rank0.onnx": rank,
        "rank1.onnx": rank,
        "bug.onnx": bug,
        "empty.onnx": b"",
        "text.onnx": b"ir_version: 8\n",
        "seq copy.onnx": seq,
        "spec.yaml": SPEC_OK.encode(),
    }
    d = "{dir}"
    choices = [
        ("ok", [f"{d}/seq.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx"]),
        ("bug", [f"{d}/seq.onnx", f"{d}/bug.onnx", f"{d}/bug.onnx"]),
        ("one rank", [f"{d}/seq.onnx", f"{d}/rank0.onnx"]),
        ("many ranks", [f"{d}/seq.onnx"] + [f"{d}/rank0.onnx"] * rng.choice([3, 8, 16])),
        ("seq as rank", [f"{d}/seq.onnx", f"{d}/seq.onnx", f"{d}/seq.onnx"]),
        ("space in name", [f"{d}/seq copy.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx"]),
        ("empty file", [f"{d}/empty.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx"]),
        ("text file", [f"{d}/seq.onnx", f"{d}/text.onnx", f"{d}/rank1.onnx"]),
        ("missing", [f"{d}/seq.onnx", f"{d}/nope.onnx", f"{d}/rank1.onnx"]),
        ("dev null", ["/dev/null", f"{d}/rank0.onnx", f"{d}/rank1.onnx"]),
        ("spec missing", [f"{d}/seq.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx", "--relations", f"{d}/no.yaml"]),
        ("spec is onnx", [f"{d}/seq.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx", "--relations", f"{d}/seq.onnx"]),
        ("rules missing", [f"{d}/seq.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx", "--rules", f"{d}/norules"]),
        ("rules empty dir", [f"{d}/seq.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx", "--rules", f"{d}/out"]),
        (
            "out ok",
            [f"{d}/seq.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx", "--out", f"{d}/out", "--json", f"{d}/out/r.json"],
        ),
        ("explain verbose", [f"{d}/seq.onnx", f"{d}/bug.onnx", f"{d}/bug.onnx", "--explain", "-v"]),
        ("quiet", [f"{d}/seq.onnx", f"{d}/bug.onnx", f"{d}/bug.onnx", "-q"]),
        ("numeric", [f"{d}/seq.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx", "--numeric"]),
    ]
    name, args = _nth_or_random(rng, choices, k)
    return Case("paths", name, files, args)


# --------------------------------------------------------------------------- generation

_GEN = {
    "truncate": _truncate,
    "flip": _flip,
    "splice": _splice,
}
_GEN_MODELS = {
    "structure": _structure,
    "strings": _strings,
    "spec": _spec,
    "paths": _paths,
}
WEIGHTS = {
    "truncate": 2,
    "flip": 2,
    "splice": 1,
    "structure": 4,
    "strings": 2,
    "spec": 2,
    "paths": 1,
    "files": 2,
    "yaml": 1,
    "rules": 2,
    "fx": 2,
    "commands": 2,
    "forge": 1,
}


def generate(count: int, seed: int = 0, *, use_example: bool = True) -> Iterator[Case]:
    """Yield ``count`` cases drawn with a seeded generator (reproducible).

    Args:
        count: how many cases.
        seed: the generator's seed.
        use_example: also mutate the bytes of ``examples/qwen2_tp2`` (one byte case in ten).
    """
    import fuzz_commands  # scripts/fuzz_commands.py: the other subcommands and hostile files

    rng = random.Random(seed)
    models = seed_models()
    generators = {**_GEN_MODELS, **fuzz_commands.GENERATORS}
    sets = _good_sets(models, _example_bytes() if use_example else {})
    cats = [c for c in CATEGORIES for _ in range(WEIGHTS[c])]
    seen: Counter = Counter()
    for i in range(count):
        cat = cats[i % len(cats)] if i < len(cats) else rng.choice(cats)
        if cat in _GEN:
            yield _GEN[cat](rng, sets)
        else:
            yield generators[cat](rng, models, seen[cat])
        seen[cat] += 1


# --------------------------------------------------------------------------- running


def _digest(folder: Path) -> dict[str, str]:
    """SHA-256 of every regular file under ``folder`` (not links: a link may point at a device)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


#: The file a payload in a generated input would create (``touch {dir}/PWNED``): it must never exist.
PAYLOAD_MARKER = "PWNED"
#: Peak resident memory of a worker (MiB) over which a case fails the memory bound.
MEMORY_LIMIT_MB = 2048
#: Address-space cap of a worker (bytes): a runaway allocation fails instead of swapping the machine.
ADDRESS_SPACE_LIMIT = 8 << 30


def _write_case(case: Case, folder: Path) -> None:
    (folder / "out").mkdir()
    links = []
    for name, data in case.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, Link):
            links.append((path, data))
        else:
            path.write_bytes(data)
    for path, link in links:
        if link.kind == "fifo":
            os.mkfifo(path)
        elif link.kind == "dir":
            path.mkdir(exist_ok=True)
        elif link.kind == "symlink":
            os.symlink(link.target.replace("{dir}", str(folder)), path)
        else:  # hardlink
            os.link(folder / link.target, path)


def _max_rss_mb(children: bool = False) -> float:
    """Peak resident memory (MiB) of this worker, or of its largest child. On Linux the worker's
    own peak is its address space's high-water mark (``VmHWM``): ``ru_maxrss`` also counts what the
    process that started it held at the fork (a test process grown to 2 GB would fail every case)."""
    import resource

    if not children:
        try:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
        except (OSError, ValueError, IndexError):
            pass
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


def run_one(case: Case, base: Path, *, in_subprocess: bool = False) -> Outcome:
    """Write the case's files into a fresh folder under ``base``, run the command (in-process
    with click's CliRunner, or in a ``python -m analyzer.cli`` subprocess), compare hashes."""
    folder = Path(tempfile.mkdtemp(dir=base))
    try:
        _write_case(case, folder)
        inputs = {n for n, d in case.files.items() if not isinstance(d, Link)}
        before = _digest(folder)
        args = [*case.command.split(), *(a.replace("{dir}", str(folder)) for a in case.args)]
        t0 = time.perf_counter()
        if in_subprocess and not any("\x00" in a for a in args):  # a process's argv cannot hold NUL
            code, out, err, exc = _run_subprocess(args)
        else:
            code, out, err, exc = _run_in_process(args)
        seconds = time.perf_counter() - t0
        after = _digest(folder)
        changed = sorted(n for n in inputs if before.get(n) != after.get(n))
        return Outcome(
            case.category,
            case.name,
            code,
            out,
            err,
            exc,
            changed,
            seconds,
            expect=case.expect,
            max_rss_mb=_max_rss_mb(children=in_subprocess),
            payload_ran=(folder / PAYLOAD_MARKER).exists(),
            subprocess=in_subprocess and not any("\x00" in a for a in args),
            says=case.says,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run_in_process(args: list[str]) -> tuple[int | None, str, str, str]:
    from click.testing import CliRunner

    from analyzer.cli import main

    result = CliRunner().invoke(main, args, catch_exceptions=True)
    exc = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        exc = f"{type(result.exception).__name__}: {result.exception}"[:500]
    return result.exit_code, result.output, result.stderr, exc


def _run_subprocess(args: list[str]) -> tuple[int | None, str, str, str]:
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SHARDLOG_DEBUG", None)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "analyzer.cli", *args], capture_output=True, timeout=120, env=env, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        return None, "", "", "subprocess timed out"
    decode = lambda b: b.decode("utf-8", "backslashreplace")  # noqa: E731
    return proc.returncode, decode(proc.stdout), decode(proc.stderr), ""


def _worker(conn: Connection, base: str, subprocess_every: int = 0) -> None:
    import resource

    os.environ.pop("SHARDLOG_DEBUG", None)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > ADDRESS_SPACE_LIMIT:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, hard))
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        index, case = msg
        try:
            out = run_one(case, Path(base), in_subprocess=bool(subprocess_every) and index % subprocess_every == 0)
        except BaseException as exc:  # noqa: BLE001 - the harness itself must report, not die
            out = Outcome(case.category, case.name, None, exception=f"harness: {type(exc).__name__}: {exc}")
        conn.send((index, out))


@dataclass
class _Slot:
    proc: mp.Process
    conn: Connection
    busy: tuple[int, float] | None = None


def _start(ctx, base: str, subprocess_every: int = 0) -> _Slot:
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_worker, args=(child, base, subprocess_every), daemon=True)
    proc.start()
    child.close()
    return _Slot(proc, parent)


def run_cases(
    cases: Sequence[Case],
    *,
    jobs: int = 2,
    timeout: float = 20.0,
    progress: Callable[[int], None] | None = None,
    subprocess_every: int = 0,
) -> list[Outcome]:
    """Run every case in ``jobs`` worker processes; a case over ``timeout`` seconds is a hang.

    Args:
        subprocess_every: run every n-th case in a ``python -m analyzer.cli`` subprocess of the
            worker instead of in-process (0: none), to check the real exit code and stderr.

    Returns:
        One :class:`Outcome` per case, in the order of ``cases``.
    """
    ctx = mp.get_context("spawn")
    base = tempfile.mkdtemp(prefix="shardlog-fuzz-")
    results: list[Outcome | None] = [None] * len(cases)
    slots = [_start(ctx, base, subprocess_every) for _ in range(max(1, jobs))]
    todo = list(range(len(cases)))[::-1]
    done = 0
    try:
        while done < len(cases):
            for slot in slots:
                if slot.busy is None and todo:
                    i = todo.pop()
                    slot.conn.send((i, cases[i]))
                    slot.busy = (i, time.monotonic())
            ready = wait([s.conn for s in slots if s.busy], timeout=1.0)
            for slot in list(slots):
                if slot.busy is None:
                    continue
                i, started = slot.busy
                if slot.conn in ready:
                    try:
                        _, out = slot.conn.recv()
                    except (EOFError, OSError):  # the worker died (e.g. a segfault in a C extension)
                        out = Outcome(
                            cases[i].category,
                            cases[i].name,
                            None,
                            exception=(f"worker died (exit {slot.proc.exitcode})"),
                        )
                        _replace(slots, slot, ctx, base, subprocess_every)
                    results[i] = out
                    slot.busy = None
                    done += 1
                elif time.monotonic() - started > timeout:
                    results[i] = Outcome(cases[i].category, cases[i].name, None, hang=True, seconds=timeout)
                    _replace(slots, slot, ctx, base, subprocess_every)
                    done += 1
                if progress and results[i] is not None:
                    progress(done)
    finally:
        for slot in slots:
            try:
                slot.conn.send(None)
            except (OSError, ValueError):
                pass
        for slot in slots:
            slot.proc.join(timeout=5)
            if slot.proc.is_alive():
                slot.proc.kill()
        shutil.rmtree(base, ignore_errors=True)
    return [r for r in results if r is not None]


def _replace(slots: list[_Slot], slot: _Slot, ctx, base: str, subprocess_every: int = 0) -> None:
    if slot.proc.is_alive():
        slot.proc.kill()  # our own worker, by its handle
    slot.proc.join(timeout=5)
    slots[slots.index(slot)] = _start(ctx, base, subprocess_every)


#: Characters that must never reach the terminal raw: C0 controls but tab and newline, DEL,
#: C1 controls, bidi overrides.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_VERDICT_LINE = re.compile(r"^(verified|discrepancy) \(", re.MULTILINE)


def problems(out: Outcome) -> list[str]:
    """What is wrong with one outcome (empty when it passes)."""
    bad = []
    text = out.output + out.stderr
    if out.hang:
        return ["hang"]
    if out.exception:
        bad.append(f"exception {out.exception}")
    if out.exit_code not in (out.expect or (0, 1, 2, 3)):  # 3: unproven (no rule, the numbers agree)
        bad.append(f"exit code {out.exit_code} (expected {out.expect or (0, 1, 2, 3)})")
    if "Traceback" in text:
        bad.append("traceback in output")
    if "internal error" in text:
        bad.append("internal error")
    if "out of memory" in text or out.max_rss_mb > MEMORY_LIMIT_MB:
        bad.append(f"memory bound (peak {out.max_rss_mb:.0f} MiB)")
    if out.exit_code == 2:
        lines = (out.stderr or out.output).strip("\n").split("\n")
        if len(lines) != 1 or not lines[0].startswith("shardlog: error:"):
            bad.append(f"exit 2 without one error line: {lines[:3]!r}")
    if CONTROL.search(text):
        bad.append(f"unescaped control character {CONTROL.search(text).group()!r} in the output")
    if len(_VERDICT_LINE.findall(out.output)) > 1:
        bad.append("more than one verdict line")
    if out.changed:
        bad.append(f"input files changed: {out.changed}")
    if out.payload_ran:
        bad.append("a payload in the input ran")
    if out.says and out.says not in text:
        bad.append(f"the output does not say {out.says!r}")
    return bad


# --------------------------------------------------------------------------- report


def summary_markdown(
    outcomes: Sequence[Outcome], seconds: float, *, count: int, seed: int, jobs: int, subprocess_every: int = 0
) -> str:
    """The ``## Last run`` section of docs/fuzzing.md: per category, the inputs, their exit codes,
    the failing ones, the slowest input and the workers' peak memory."""
    by_cat: dict[str, Counter] = defaultdict(Counter)
    slowest: dict[str, float] = defaultdict(float)
    for o in outcomes:
        key = "hang" if o.hang else ("crash" if problems(o) else str(o.exit_code))
        by_cat[o.category][key] += 1
        slowest[o.category] = max(slowest[o.category], o.seconds)
    total = Counter()
    for c in by_cat.values():
        total.update(c)
    failing = sum(1 for o in outcomes if problems(o))
    checks = Counter(p.split(" ")[0] for o in outcomes for p in problems(o))
    sub = sum(o.subprocess for o in outcomes)
    peak = max((o.max_rss_mb for o in outcomes), default=0.0)
    every = f" --subprocess-every {subprocess_every}" if subprocess_every else ""
    lines = [
        "## Last run",
        "",
        f"Measured by `python scripts/fuzz.py --count {count} --seed {seed} --jobs {jobs}{every}` on "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')} (1-minute load average {os.getloadavg()[0]:.1f} at the end): "
        f"{len(outcomes)} generated inputs in {seconds:.0f} s "
        f"({seconds / max(1, len(outcomes)) * jobs * 1000:.0f} ms per input per worker), {sub} of them in a "
        f"subprocess; peak memory of a worker {peak:.0f} MiB. Failing: {failing}"
        + (f" ({', '.join(f'{k}: {v}' for k, v in sorted(checks.items()))})" if checks else "")
        + ".",
        "",
        "| category | inputs | exit 0 | exit 1 | exit 2 | failing | slowest (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for cat in CATEGORIES:
        c = by_cat.get(cat, Counter())
        n = sum(c.values())
        lines.append(
            f"| {cat} | {n} | {c['0']} | {c['1']} | {c['2']} | {c['crash'] + c['hang']} | {slowest[cat]:.1f} |"
        )
    lines.append(
        f"| **total** | {len(outcomes)} | {total['0']} | {total['1']} | {total['2']} | {failing} | "
        f"{max(slowest.values(), default=0.0):.1f} |"
    )
    lines.append("")
    return "\n".join(lines)


def write_section(path: Path, section: str) -> None:
    """Replace (or append) the section of ``path`` titled like ``section``'s first line (``## ...``),
    keeping every other section."""
    title = section.splitlines()[0].strip()
    text = path.read_text(encoding="utf-8") if path.is_file() else "# Fuzzing\n"
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.strip() == title), None)
    if start is None:
        body = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        new = lines[:start] + section.rstrip("\n").splitlines() + ([""] + lines[end:] if end < len(lines) else [])
        body = "\n".join(new).rstrip("\n") + "\n"
    path.write_text(body, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; returns the process exit code (1 when any input failed)."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=5000, help="inputs to generate (default 5000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per input before it is a hang")
    ap.add_argument("--subprocess-every", type=int, default=40, help="run every n-th input in a subprocess (0: none)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "fuzzing.md"))
    ap.add_argument("--no-write", action="store_true", help="do not touch docs/fuzzing.md")
    ap.add_argument("--show", type=int, default=20, help="failing inputs to print")
    ns = ap.parse_args(argv)

    cases = list(generate(ns.count, ns.seed))
    t0 = time.perf_counter()

    def progress(done: int) -> None:
        if done % 250 == 0:
            print(f"  {done}/{len(cases)} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)

    outcomes = run_cases(
        cases, jobs=ns.jobs, timeout=ns.timeout, progress=progress, subprocess_every=ns.subprocess_every
    )
    seconds = time.perf_counter() - t0
    failing = [(o, problems(o)) for o in outcomes if problems(o)]
    for o, why in failing[: ns.show]:
        print(f"FAIL [{o.category}] {o.name[:120]}: {'; '.join(why)[:300]}")
        print(f"     {(o.stderr or o.output).strip()[:300]!r}")
    section = summary_markdown(
        outcomes, seconds, count=ns.count, seed=ns.seed, jobs=ns.jobs, subprocess_every=ns.subprocess_every
    )
    print(section)
    if not ns.no_write:
        write_section(Path(ns.out), section)
        print(f"wrote the Last run section of {ns.out}")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import fuzz as _module  # this file under its own name: the cases and workers must use one module

    sys.exit(_module.main())
