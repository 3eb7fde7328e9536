"""The XLA HLO importer (analyzer/importers/hlo): the parser and each op mapping on small inline
HLO text (numbers compared with numpy through onnx.reference), source frames, bad input, and
GraphGuard's transformers-neuronx Llama-3 graphs (../shared/data/hlo/aws_llama) verified end to
end at TP 2, 4 and 8 with 1 and 2 layers, with one-line bugs in copies of them flagged at the
instruction and the model's source line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from conftest import ROOT, SHARED_DATA, edited_copy
from onnx.reference import ReferenceEvaluator

from analyzer import check
from analyzer.cli import main
from analyzer.errors import InputError
from analyzer.importers.hlo import import_hlo, is_hlo_path
from analyzer.importers.hlo.attrs import metadata, replica_groups, unescape
from analyzer.importers.hlo.frames import model_frame
from analyzer.importers.hlo.parse import parse_hlo_text
from analyzer.importers.hlo.to_onnx import hlo_to_onnx

AWS = SHARED_DATA / "hlo" / "aws_llama"
SPEC = ROOT / "examples" / "hlo" / "aws_llama" / "spec.yaml"
needs_aws = pytest.mark.skipif(not AWS.is_dir(), reason=f"{AWS} (GraphGuard's published HLO graphs) is not here")


def _model(text: str, **kw) -> onnx.ModelProto:
    model = hlo_to_onnx(parse_hlo_text(text, "t.hlo"), **kw)
    onnx.checker.check_model(model, full_check=True)
    return model


def _run(model: onnx.ModelProto, *inputs: np.ndarray) -> list[np.ndarray]:
    names = [i.name for i in model.graph.input]
    return ReferenceEvaluator(model).run(None, dict(zip(names, inputs)))


def _ops(model: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in model.graph.node]


# --- the parser -----------------------------------------------------------------------------

MODULE = """HloModule m, entry_computation_layout={(f32[2,3]{1,0}, /*index=1*/f32[3,4]{1,0})->f32[2,4]{1,0}}

%add.r (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main.9 (x: f32[2,3], w: f32[3,4]) -> f32[2,4] {
  %x = f32[2,3]{1,0} parameter(0), metadata={op_type="dot" source_file="/m/model.py" source_line=7}
  %w = f32[3,4]{1,0} parameter(1)
  ROOT %dot.3 = f32[2,4]{1,0} dot(f32[2,3]{1,0} %x, f32[3,4]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot_general" source_file="/m/model.py" source_line=12}
}
"""  # noqa: E501


def test_parser_reads_computations_instructions_shapes_and_attributes():
    m = parse_hlo_text(MODULE, "t.hlo")
    assert list(m.computations) == ["add.r", "main.9"]
    assert m.entry.name == "main.9" and m.entry.root.name == "dot.3"
    dot = m.entry.root
    assert (dot.opcode, dot.operands, str(dot.shape), dot.line) == ("dot", ["x", "w"], "f32[2,4]", 12)
    assert metadata(dot.attrs["metadata"]) == {
        "op_name": "jit(f)/dot_general",
        "source_file": "/m/model.py",
        "source_line": "12",
    }
    assert m.computations["add.r"].root.opcode == "add"


def test_names_without_percent_and_tuple_roots_parse():
    text = """HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT t = (f32[4], f32[4]) tuple(n, p)
}
"""
    model = _model(text)
    x = np.arange(4, dtype=np.float32)
    neg, same = _run(model, x)
    assert np.array_equal(neg, -x) and np.array_equal(same, x)
    assert [o.name for o in model.graph.output] == ["n", "t/out1"]  # an input returned gets an Identity


@pytest.mark.parametrize(
    ("text", "groups"),
    [
        ("{{0,1},{2,3}}", [[0, 1], [2, 3]]),
        ("{}", []),
        ("[2,2]<=[4]", [[0, 1], [2, 3]]),
        ("[2,2]<=[2,2]T(1,0)", [[0, 2], [1, 3]]),
        ("[1,8]<=[8]", [list(range(8))]),
    ],
)
def test_replica_groups_in_all_three_syntaxes(text, groups):
    line = f"  ROOT ar = f32[4] all-reduce(p), replica_groups={text}, to_apply=add"
    m = parse_hlo_text(f"HloModule m\n\nENTRY e {{\n  p = f32[4] parameter(0)\n{line}\n}}\n")
    assert replica_groups(m.entry.root.attrs["replica_groups"]) == groups


def test_strings_are_unescaped_as_absl_cescape_writes_them():
    assert unescape(r'"a\nb\'c\"d\\e\303\251"') == "a\nb'c\"d\\e\u00e9"


# --- source frames --------------------------------------------------------------------------

NEURON_FILE = (
    "/opt/test.py\n----\n['/opt/test.py:46', '/src/transformers_neuronx/decoder.py:753', "
    "'/src/transformers_neuronx/layers/attention.py:126', '/src/transformers_neuronx/hlo.py:891', "
    "'/site-packages/torch_neuronx/pyhlo/scribe.py:265']"
)


def test_neuron_frame_list_gives_the_models_own_frame():
    assert model_frame({"source_file": NEURON_FILE, "source_line": "46"}) == (
        "/src/transformers_neuronx/layers/attention.py",
        126,
        "",
    )


def test_a_frame_list_is_read_as_data_never_run(tmp_path):
    marker = tmp_path / "ran"
    evil = f"/x.py\n----\n__import__('pathlib').Path({str(marker)!r}).touch()"
    # not a list literal: no frame from it, the script line instead, and nothing executed
    assert model_frame({"source_file": evil, "source_line": "3"}) == ("/x.py", 3, "")
    assert not marker.exists()


def test_jax_stack_frame_tables_give_the_innermost_user_frame():
    text = """HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p), metadata={op_name="jit(f)/neg" stack_frame_id=2}
}

FileNames
1 "/site-packages/jax/_src/numpy/ufuncs.py"
2 "/home/me/model.py"
FunctionNames
1 "negative"
2 "block"
FileLocations
1 {file_name_id=1 function_name_id=1 line=40 end_line=40 column=1 end_column=9}
2 {file_name_id=2 function_name_id=2 line=17 end_line=17 column=1 end_column=9}
StackFrames
1 {file_location_id=2 parent_frame_id=0}
2 {file_location_id=1 parent_frame_id=1}
"""
    model = _model(text)
    source = {p.key: p.value for p in model.graph.node[0].metadata_props}["source"]
    assert source == 'File "/home/me/model.py", line 17, in block\n'


# --- op mappings, with numbers --------------------------------------------------------------


def test_dot_with_batch_and_contracting_dims_on_either_side():
    # attention's scores: lhs [S, B, H, D] and rhs [T, B, H, D], batch (B, H), contract D
    text = """HloModule m

ENTRY e {
  q = f32[5,2,3,4] parameter(0)
  k = f32[6,2,3,4] parameter(1)
  ROOT d = f32[2,3,5,6] dot(q, k), lhs_batch_dims={1,2}, lhs_contracting_dims={3}, rhs_batch_dims={1,2}, rhs_contracting_dims={3}
}
"""  # noqa: E501
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((5, 2, 3, 4), np.float32), rng.standard_normal((6, 2, 3, 4), np.float32)
    (out,) = _run(_model(text), q, k)
    np.testing.assert_allclose(out, np.einsum("sbhd,tbhd->bhst", q, k), rtol=1e-5)


def test_dot_with_two_free_axes_and_the_contracting_axis_first():
    text = """HloModule m

ENTRY e {
  x = f32[3,2,5] parameter(0)
  w = f32[3,4] parameter(1)
  ROOT d = f32[2,5,4] dot(x, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
"""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((3, 2, 5), np.float32), rng.standard_normal((3, 4), np.float32)
    (out,) = _run(_model(text), x, w)
    np.testing.assert_allclose(out, np.einsum("kab,kn->abn", x, w), rtol=1e-5)


BROADCAST = """HloModule m

ENTRY e {
  x = f32[2,3,4] parameter(0)
  c = f32[4] parameter(1)
  b = f32[2,3,4] broadcast(c), dimensions={2}
  s = f32[] constant(2)
  sb = f32[2,3,4] broadcast(s), dimensions={}
  m = f32[2,3,4] multiply(x, b)
  ROOT d = f32[2,3,4] divide(m, sb)
}
"""


def test_broadcasts_read_by_elementwise_ops_stay_implicit():
    model = _model(BROADCAST)
    assert "Expand" not in _ops(model)  # as a torch export writes x * c / 2
    x, c = np.ones((2, 3, 4), np.float32), np.arange(4, dtype=np.float32)
    (out,) = _run(model, x, c)
    np.testing.assert_allclose(out, x * c / 2)


def test_a_broadcast_read_by_a_reshape_is_an_expand_with_transposed_operand():
    # broadcast with dimensions out of order: operand axis 0 -> result axis 2, axis 1 -> 0
    text = """HloModule m

ENTRY e {
  x = f32[4,3] parameter(0)
  b = f32[3,2,4] broadcast(x), dimensions={2,0}
  ROOT r = f32[6,4] reshape(b)
}
"""
    model = _model(text)
    assert "Expand" in _ops(model) and "Transpose" in _ops(model)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    (out,) = _run(model, x)
    expected = np.broadcast_to(x.T[:, None, :], (3, 2, 4)).reshape(6, 4)
    np.testing.assert_array_equal(out, expected)


def test_reduce_by_its_computation_and_an_init_value_that_is_not_the_identity():
    text = """HloModule m

%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] maximum(%a, %b)
}

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}

ENTRY e {
  x = f32[2,5] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[2] reduce(x, ninf), dimensions={1}, to_apply=%max
  ten = f32[] constant(10)
  sm = f32[5] reduce(x, ten), dimensions={0}, to_apply=%sum
  ROOT t = (f32[2], f32[5]) tuple(mx, sm)
}
"""
    model = _model(text)
    assert {"ReduceMax", "ReduceSum"} <= set(_ops(model))
    x = np.random.default_rng(2).standard_normal((2, 5)).astype(np.float32)
    mx, sm = _run(model, x)
    np.testing.assert_allclose(mx, x.max(1))
    np.testing.assert_allclose(sm, x.sum(0) + 10, rtol=1e-6)


def test_gather_of_whole_slices_along_one_axis():
    text = """HloModule m

ENTRY e {
  x = f16[6,3,4] parameter(0)
  i = s32[1] parameter(1)
  ROOT g = f16[1,3,4] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3,4}
}
"""  # noqa: E501
    x = np.arange(72, dtype=np.float16).reshape(6, 3, 4)
    (out,) = _run(_model(text), x, np.array([4], np.int32))
    np.testing.assert_array_equal(out, x[[4]])


def test_slice_concatenate_compare_select_convert_iota():
    text = """HloModule m

ENTRY e {
  x = f32[4,6] parameter(0)
  a = f32[4,2] slice(x), slice={[0:4], [0:2]}
  b = f32[4,3] slice(x), slice={[0:4], [1:6:2]}
  c = f32[4,5] concatenate(a, b), dimensions={1}
  io = s32[4,5] iota(), iota_dimension=1
  two = s32[] constant(2)
  tb = s32[4,5] broadcast(two), dimensions={}
  lt = pred[4,5] compare(io, tb), direction=LT
  z = f32[] constant(0)
  zb = f32[4,5] broadcast(z), dimensions={}
  s = f32[4,5] select(lt, c, zb)
  ROOT h = f16[4,5] convert(s)
}
"""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    (out,) = _run(_model(text), x)
    c = np.concatenate([x[:, 0:2], x[:, 1:6:2]], 1)
    np.testing.assert_array_equal(out, np.where(np.arange(5) < 2, c, 0).astype(np.float16))


def test_call_is_inlined_under_the_calls_name():
    text = """HloModule m

%inner (a: f32[3]) -> f32[3] {
  %a = f32[3] parameter(0)
  ROOT %e = f32[3] exponential(%a)
}

ENTRY e {
  x = f32[3] parameter(0)
  ROOT c = f32[3] call(x), to_apply=%inner
}
"""
    model = _model(text)
    assert [n.name for n in model.graph.node] == ["c/e"]
    x = np.array([0, 1, 2], np.float32)
    np.testing.assert_allclose(_run(model, x)[0], np.exp(x), rtol=1e-6)


def test_neuron_rms_norm_custom_call():
    text = """HloModule m

ENTRY e {
  x = f32[8,3,2] parameter(0)
  w = f32[8] parameter(1)
  eps = f32[] constant(1e-05)
  ROOT n = f16[8,3,2] custom-call(x, w, eps), custom_call_target="AwsNeuronRmsNorm", backend_config="0"
}
"""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((8, 3, 2), np.float32), rng.standard_normal(8).astype(np.float32)
    (out,) = _run(_model(text), x, w)
    ref = x / np.sqrt((x * x).mean(0, keepdims=True) + 1e-5) * w[:, None, None]
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=2e-3, atol=2e-3)


# --- collectives and ranks ------------------------------------------------------------------

COLLECTIVES = """HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}

ENTRY e {
  x = f32[4,6] parameter(0)
  ar = f32[4,6] all-reduce(x), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=%add
  ag = f32[8,6] all-gather(ar), replica_groups={{0,1},{2,3}}, dimensions={0}
  rs = f32[8,3] reduce-scatter(ag), replica_groups={}, dimensions={1}, to_apply=%add
  ROOT a2a = f32[8,3] all-to-all(rs), replica_groups={{0,1,2,3}}, dimensions={1}
}
"""


def test_collectives_become_com_microsoft_ops_with_their_group_size():
    model = _model(COLLECTIVES, rank=3, world_size=4)
    nodes = {n.name: n for n in model.graph.node}
    attrs = {k: {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute} for k, n in nodes.items()}
    assert (nodes["ar"].domain, nodes["ar"].op_type) == ("com.microsoft", "AllReduce")
    assert attrs["ar"] == {"group_size": 2, "reduction": b"sum"}
    assert attrs["ag"] == {"group_size": 2, "axis": 0}
    assert attrs["rs"] == {"group_size": 4, "reduction": b"sum", "axis": 1}
    # all-to-all on axis 1: moved to axis 0 for com.microsoft::AllToAll and back
    assert [nodes[k].op_type for k in ("a2a/to_axis0", "a2a/alltoall", "a2a")] == ["Transpose", "AllToAll", "Transpose"]


def test_collectives_are_identities_in_a_sequential_import_and_groups_must_fit():
    text = COLLECTIVES.replace("[2,2]<=[2,2]T(1,0)", "{{0}}").replace("{{0,1},{2,3}}", "{{0}}")
    text = text.replace("{{0,1,2,3}}", "{}").replace("f32[8,6]", "f32[4,6]").replace("f32[8,3]", "f32[4,6]")
    text = text.replace("dimensions={1}, to_apply", "dimensions={0}, to_apply")
    model = _model(text, world_size=1)
    assert set(_ops(model)) == {"Identity"}
    member = r"t\.hlo:11: all-reduce ar: replica group member 3 is not a rank of world size 1$"
    with pytest.raises(InputError, match=member):
        _model(COLLECTIVES, world_size=1)
    with pytest.raises(InputError, match=r"replica group member 3 is not a rank of world size 2"):
        _model(COLLECTIVES, rank=0, world_size=2)


def test_partition_id_is_the_rank_and_folds_into_a_static_slice():
    # JAX's SPMD partitioner: offset = table[partition-id] * shard, then dynamic-slice
    text = """HloModule m

ENTRY e {
  x = f32[8,3] parameter(0)
  pid = u32[] partition-id()
  table = s32[4] constant({0, 1, 2, 3})
  i = s32[1] dynamic-slice(table, pid), dynamic_slice_sizes={1}
  ir = s32[] reshape(i)
  two = s32[] constant(2)
  off = s32[] multiply(ir, two)
  zero = s32[] constant(0)
  ROOT y = f32[2,3] dynamic-slice(x, off, zero), dynamic_slice_sizes={2,3}
}
"""
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    for rank in range(4):
        model = _model(text, rank=rank, world_size=4)
        assert _ops(model) == ["Slice"]
        np.testing.assert_array_equal(_run(model, x)[0], x[2 * rank : 2 * rank + 2])
    with pytest.raises(InputError, match=r"reads its rank"):
        _model(text, world_size=4)


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("ROOT y = f32[4] cbrt(p)", r"t\.hlo:5: unsupported HLO op cbrt \(y\)"),
        (
            'ROOT y = f32[4] custom-call(p), custom_call_target="MyKernel"',
            r"t\.hlo:5: custom-call y: unsupported custom-call target 'MyKernel'",
        ),
        ("ROOT y = f32[4] transpose(p), dimensions={1,0}", r"dimensions \[1, 0\] are not a permutation"),
        ("ROOT y = f32[4] negate(q)", r"y reads q, not defined before it"),
        ("ROOT y = f32[4] negate(p) oops", r"t\.hlo:5:\d+: not HLO text"),
    ],
)
def test_bad_input_is_one_line_naming_the_place(line, message):
    text = f"HloModule m\n\nENTRY e {{\n  p = f32[4] parameter(0)\n  {line}\n}}\n"
    with pytest.raises(InputError, match=message) as err:
        _model(text)
    assert "\n" not in str(err.value)


def test_cli_import_hlo_writes_a_checked_model_and_fails_with_exit_2(tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(COLLECTIVES)
    out = tmp_path / "m.onnx"
    result = CliRunner().invoke(main, ["import-hlo", str(path), "-o", str(out), "--rank", "1", "--world-size", "4"])
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and onnx.load(out).graph.node[0].op_type == "AllReduce"
    bad = tmp_path / "bad.hlo"
    bad.write_text(COLLECTIVES.replace("negate", "x").replace("all-reduce(x)", "sort(x)"))
    for args in (
        ["import-hlo", str(bad), "-o", str(out)],
        ["import-hlo", str(path), "-o", str(out), "--rank", "4", "--world-size", "4"],
        ["import-hlo", str(path), "-o", str(path)],
        ["import-hlo", str(tmp_path / "missing.hlo"), "-o", str(out)],
    ):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, (args, result.output)
        assert len(result.output.strip().splitlines()) == 1 and result.output.startswith("shardlog: error:")
    assert path.read_text() == COLLECTIVES  # nothing the user gave is modified


def test_hlo_paths_are_recognized_by_their_ending():
    assert is_hlo_path("graph.0.hlo") and is_hlo_path("graph.hlo.0.pb") and is_hlo_path("x.hlo.txt")
    assert not is_hlo_path("seq.onnx") and not is_hlo_path("fw.g0.r0.py")


# --- GraphGuard's transformers-neuronx Llama-3 ----------------------------------------------

AWS_CASES = [(tp, layers) for tp in (2, 4, 8) for layers in (1, 2)]


@needs_aws
@pytest.mark.parametrize(("tp", "layers"), AWS_CASES, ids=[f"tp{t}_layer{n}" for t, n in AWS_CASES])
def test_aws_llama_verifies_against_its_sequential_program(tp, layers):
    seq = AWS / f"tp1_layer{layers}" / "graph.0.hlo"
    rank = AWS / f"tp{tp}_layer{layers}" / "graph.0.hlo"
    result = check(seq, [rank], relations=SPEC, world_size=tp)
    assert result.verdict == "verified", [d.message for d in result.verdict_.discrepancies][:3]
    relations = sorted(o.relation for o in result.verdict_.outputs)
    # the vocab-sharded logits and the kv caches (sharded on their head axis), every layer's
    assert relations == sorted(["Shard(0)"] + ["Shard(2)"] * (2 * layers))


@needs_aws
def test_the_qkv_weight_without_the_spec_is_a_plain_shard_and_the_sections_are_flagged():
    seq, rank = AWS / "tp1_layer1" / "graph.0.hlo", AWS / "tp2_layer1" / "graph.0.hlo"
    result = check(seq, [rank], world_size=2)
    assert result.verdict == "discrepancy"
    assert [d.node for d in result.verdict_.discrepancies] == ["slice.53", "slice.54", "slice.55"]


def _edited(tmp_path: Path, case: str, pattern: str, replacement: str) -> Path:
    return edited_copy(AWS / case / "graph.0.hlo", tmp_path / f"{case}_bug.hlo", pattern, replacement)


@needs_aws
def test_a_dropped_all_reduce_is_flagged_where_the_partial_sum_is_used(tmp_path):
    # the MLP's all-reduce of layer 0 replaced by a copy (one edited line)
    rank = _edited(
        tmp_path,
        "tp2_layer1",
        r"all-reduce\(%reshape\.145\), replica_groups=\{\{0,1\}\}, to_apply=%all-reduce\.146\.Reducer\.151",
        "copy(%reshape.145)",
    )
    result = check(AWS / "tp1_layer1" / "graph.0.hlo", [rank], relations=SPEC, world_size=2)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.node == "add.140" and first.op_type == "Add"  # the residual add after the MLP
    assert first.hint_ids == ["missing-allreduce"]
    assert first.source.endswith("transformers_neuronx/llama/hlo.py:322")
    assert first.origin_source.endswith("transformers_neuronx/llama/hlo.py:312")  # the down projection
    assert first.rank_nodes == {0: ["add.152"], 1: ["add.152"]}


@needs_aws
def test_a_wrong_slice_bound_is_flagged_at_that_slice_with_the_models_line(tmp_path):
    # the k section cut one column early: [1023:1279] instead of [1024:1280]
    rank = _edited(tmp_path, "tp2_layer1", r"slice=\{\[0:256\], \[1024:1280\]\}", "slice={[0:256], [1023:1279]}")
    result = check(AWS / "tp1_layer1" / "graph.0.hlo", [rank], relations=SPEC, world_size=2)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert (first.node, first.op_type) == ("slice.54", "Slice")
    assert first.source.endswith("transformers_neuronx/layers/attention.py:126")
    outputs = {o.name: o.relation for o in result.verdict_.outputs}
    assert outputs["reshape.58"] == "Shard(2)"  # the v cache does not read the k slice


@needs_aws
@pytest.mark.skipif(importlib.util.find_spec("jaxlib") is None, reason="reading .pb needs jaxlib")
def test_the_hlo_module_proto_imports_the_same_graph_as_the_text_with_its_constants():
    from_text = import_hlo(AWS / "tp2_layer1" / "graph.0.hlo", rank=0, world_size=2)
    from_pb = import_hlo(AWS / "tp2_layer1" / "graph.hlo.0.pb", rank=0, world_size=2)
    # the text elides the rotary frequencies (constant({...})): a graph input, reshaped by a
    # node; the .pb holds them, so that reshape folds into a constant
    assert "constant.22" in {i.name for i in from_text.graph.input}
    frequencies = {t.name: onnx.numpy_helper.to_array(t) for t in from_pb.graph.initializer}["reshape.23"]
    assert frequencies.shape == (1, 32) and frequencies[0, 0] == 1.0 and 0.66 < frequencies[0, 1] < 0.67
    nodes = [(n.op_type, list(n.input), list(n.output)) for n in from_text.graph.node if n.name != "reshape.23"]
    assert [(n.op_type, list(n.input), list(n.output)) for n in from_pb.graph.node] == nodes
    seq, rank = AWS / "tp1_layer1" / "graph.hlo.0.pb", AWS / "tp2_layer1" / "graph.hlo.0.pb"
    assert check(seq, [rank], relations=SPEC, world_size=2).verdict == "verified"


# --- spec name patterns and --world-size -----------------------------------------------------

PAIR = """HloModule m

ENTRY e {
  x = f32[4,8] parameter(0)
  w = f32[8,SIZE] parameter(1)
  ROOT y = f32[4,SIZE] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    seq, rank = tmp_path / "seq.hlo", tmp_path / "rank.hlo"
    seq.write_text(PAIR.replace("SIZE", "6"))
    rank.write_text(PAIR.replace("SIZE", "3"))
    return seq, rank


def test_a_spec_pattern_selects_inputs_by_name_and_shape(tmp_path):
    seq, rank = _pair(tmp_path)
    assert check(seq, [rank], world_size=2).verdict == "verified"  # w: Shard(1) from the shapes
    spec = tmp_path / "spec.yaml"
    spec.write_text('relations:\n  "*": {shape: [8, 6], shard: 1, sections: [2, 4]}\n')
    result = check(seq, [rank], relations=spec, world_size=2)
    assert {r.seq_value: (str(r.layout), r.source) for r in result.inputs.relations}["w"] == (
        "Shard(1, sections=[2, 4])",
        "spec",
    )
    assert {o.name: o.relation for o in result.verdict_.outputs} == {"y": "Shard(1, sections=[2, 4])"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('"q*": {shape: [8, 6], shard: 1}', r"'q\*' matches no input or weight of shape \[8, 6\]"),
        ('"*": {shape: [8, 7], shard: 1}', r"'\*' matches no input or weight of shape \[8, 7\]"),
        ('"*": {shape: 8, shard: 1}', r"relations\.\*\.shape: expected a list of sizes"),
        ('"w*": {shard: 1, ranks: [w, w]}', r"a name pattern cannot list rank values"),
        ("w: {shape: [8, 6], shard: 1}", r"a shape selects values of a name pattern"),
    ],
)
def test_bad_spec_patterns_are_one_line_errors(tmp_path, text, message):
    seq, rank = _pair(tmp_path)
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"relations:\n  {text}\n")
    with pytest.raises(InputError, match=message):
        check(seq, [rank], relations=spec, world_size=2)


def test_cli_check_with_one_spmd_file_for_every_rank(tmp_path):
    seq, rank = _pair(tmp_path)
    result = CliRunner().invoke(main, ["check", str(seq), str(rank), "--world-size", "2"])
    assert result.exit_code == 0 and "verified" in result.output, result.output
    result = CliRunner().invoke(main, ["check", str(seq), str(rank), str(rank), "--world-size", "3"])
    assert result.exit_code == 2
    assert result.output.strip() == "shardlog: error: --world-size 3 but 2 rank files were given (give 1 or 3)"
    # at world size 4 the 3 columns of each rank are one of 2 halves, each on a pair of ranks
    result = CliRunner().invoke(main, ["check", str(seq), str(rank), "--world-size", "4"])
    assert result.exit_code == 0 and "y = Shard(1, replicas=2)" in result.output, result.output
    result = CliRunner().invoke(main, ["check", str(seq), str(rank), "--world-size", "5"])
    assert result.exit_code == 1  # 6 columns are not 5 ranks' pieces of 3: no relation for w


# --- JAX's SPMD partitioner (scripts/export_jax_hlo.py, TP 2, corpus cases examples/jax_llama_block_tp2*) --------

JAX_BLOCK = ROOT / "examples"


def test_jax_partitioned_llama_block_verifies_against_the_global_program():
    case = JAX_BLOCK / "jax_llama_block_tp2"
    result = check(case / "seq.hlo", [case / "tp.hlo"], world_size=2)
    assert result.verdict == "verified", [d.message for d in result.verdict_.discrepancies][:3]
    # parameters are named by JAX's op_name on both sides (the partitioner renames them)
    relations = {r.seq_value: str(r.layout) for r in result.inputs.relations}
    assert {k: relations.get(k) for k in ("x", "params['wq']", "params['wd']")} == {
        "x": "Replicate",
        "params['wq']": "Shard(1)",
        "params['wd']": "Shard(0)",
    }
    assert [o.relation for o in result.verdict_.outputs] == ["Replicate"]


def test_jax_shard_map_block_without_the_mlp_psum_is_flagged_at_the_residual_add():
    result = check(
        JAX_BLOCK / "jax_llama_block_tp2_bug_missing_psum" / "seq.hlo",
        [JAX_BLOCK / "jax_llama_block_tp2_bug_missing_psum" / "tp.hlo"],
        world_size=2,
    )
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.hint_ids == ["missing-allreduce"]
    assert first.source.endswith("scripts/export_jax_hlo.py:54")  # the line of the missing psum
    assert first.origin_source.endswith("scripts/export_jax_hlo.py:54")
