"""Fact extraction: every table is declared in schemas/, values are what the ONNX graph says."""

from __future__ import annotations

import onnx
import pytest
from conftest import EXAMPLES, model_from_text

from analyzer.datalog import read_decls
from analyzer.errors import InputError
from analyzer.facts import extract_graph_facts, load_model, parse_source
from analyzer.solve.rulebook import schema_files

MLP = """
<ir_version: 8, opset_import: ["" : 18]>
mlp (float[2, 8] x, float[8, 16] w1, float[16, 8] w2) => (float[2, 8] y)
<int64[2] shape = {2, 8}>
{
  h = MatMul(x, w1)
  t = Transpose<perm = [1, 0]>(h)
  u = Transpose<perm = [1, 0]>(t)
  z = MatMul(u, w2)
  y = Reshape(z, shape)
}
"""


def test_every_table_is_declared_in_the_schema():
    decls = read_decls(schema_files())
    facts = extract_graph_facts(model_from_text(MLP), "seq")
    tuples = facts.tuples(decls)
    assert set(tuples) <= set(decls)
    for name, rows in tuples.items():
        assert all(len(row) == decls[name].arity for row in rows), name


def test_nodes_inputs_attributes_and_constants():
    facts = extract_graph_facts(model_from_text(MLP), "seq")
    nodes = [(r["op"], r["domain"]) for r in facts.rows("Node")]
    assert nodes == [("MatMul", ""), ("Transpose", ""), ("Transpose", ""), ("MatMul", ""), ("Reshape", "")]
    ins = {(r["node"], r["pos"]): r["value"] for r in facts.rows("Node_Input")}
    assert ins[("#0:MatMul", 0)] == "x" and ins[("#0:MatMul", 1)] == "w1"
    perm = sorted((r["pos"], r["value"]) for r in facts.rows("Node_AttrInts") if r["node"] == "#1:Transpose")
    assert perm == [(0, 1), (1, 0)]
    assert sorted(r["v"] for r in facts.rows("Const_Int") if r["value"] == "shape") == [2, 8]
    assert {r["value"] for r in facts.rows("Initializer")} == {"shape"}
    assert [r["value"] for r in facts.rows("GraphInput")] == ["x", "w1", "w2"]
    shapes = {r["value"]: r["shape"] for r in facts.rows("Value_Shape")}
    assert shapes["x"] == "2,8" and shapes["w1"] == "8,16" and shapes["h"] == "2,16"


def test_equal_attributes_have_equal_digests():
    facts = extract_graph_facts(model_from_text(MLP), "seq")
    digest = {r["node"]: r["hash"] for r in facts.rows("Node_AttrHash")}
    assert digest["#1:Transpose"] == digest["#2:Transpose"]
    assert digest["#0:MatMul"] != digest["#1:Transpose"]


def test_missing_file_and_non_onnx_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_model(tmp_path / "absent.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not a protobuf \x00\xff\xfe")
    with pytest.raises(InputError, match="not an ONNX model"):
        load_model(bad)


def test_source_from_legacy_node_name():
    node = onnx.helper.make_node("MatMul", ["a", "b"], ["c"], name="/model/layers.0/mlp/down_proj/MatMul")
    assert parse_source(node).scope == "model.layers.0.mlp.down_proj"


def test_source_from_torch_dynamo_metadata():
    node = onnx.helper.make_node("Add", ["a", "b"], ["c"], name="node_add_4")
    trace = (
        '  File "torch/nn/modules/module.py", line 1775, in _call_impl\n    return forward_call(*args)\n'
        '  File "transformers/models/llama/modeling_llama.py", line 248, in forward\n'
        "    query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)"
    )
    onnx.helper.set_metadata_props(
        node,
        {
            "pkg.torch.onnx.stack_trace": trace,
            "pkg.torch.onnx.name_scopes": "['', 'model', 'model.layers.0', 'model.layers.0.self_attn', 'add_4']",
        },
    )
    src = parse_source(node)
    assert src.scope == "model.layers.0.self_attn"
    assert (src.file, src.line) == ("transformers/models/llama/modeling_llama.py", 248)
    assert src.code.startswith("query_states, key_states")


@pytest.mark.skipif(not (EXAMPLES / "llama_tp2").is_dir(), reason="examples/llama_tp2 not present")
def test_real_export_has_scopes_and_sources():
    facts = extract_graph_facts(load_model(EXAMPLES / "llama_tp2" / "seq.onnx"), "seq")
    scopes = {r["scope"] for r in facts.rows("Node_Scope")}
    assert "model.layers.1.mlp.down_proj" in scopes
    files = {r["file"] for r in facts.rows("Node_Source")}
    assert any(f.endswith("modeling_llama.py") for f in files)


MARKER = "MARKERMARKER"


def _set_marker_attribute_name(m: onnx.ModelProto) -> None:
    m.graph.node[1].attribute.append(onnx.helper.make_attribute(MARKER, 1))


def _set_marker_function(m: onnx.ModelProto) -> None:
    m.functions.add(name="f", domain="d").node.add(op_type=MARKER)


def _set_marker_graph_name(m: onnx.ModelProto) -> None:
    m.graph.name = MARKER


def _nul_in_subgraph_tensor(m: onnx.ModelProto) -> None:
    tensor = onnx.helper.make_tensor("n\x00", onnx.TensorProto.FLOAT, [1], [1.0])
    m.graph.node[0].attribute.append(onnx.helper.make_attribute("t", tensor))


def _nul_in_opset_domain(m: onnx.ModelProto) -> None:
    m.opset_import.add(domain="a\x00b", version=1)


def _nul_in_value_info(m: onnx.ModelProto) -> None:
    m.graph.value_info.add().name = "v\x00"


def _negative_dim(m: onnx.ModelProto) -> None:
    m.graph.value_info[0].type.tensor_type.shape.dim[0].dim_value = -3


def _huge_dim(m: onnx.ModelProto) -> None:
    m.graph.output[0].type.tensor_type.shape.dim[0].dim_value = 2**40


@pytest.mark.parametrize(
    "mutate, raw",
    [
        (_set_marker_attribute_name, b"\xff\xfe"),
        (_set_marker_function, b"\xc3\x28"),
        (_set_marker_graph_name, b"\xed\xa0\x80"),
        (_nul_in_subgraph_tensor, None),
        (_nul_in_opset_domain, None),
        (_nul_in_value_info, None),
        (_negative_dim, None),
        (_huge_dim, None),
    ],
)
def test_checks_in_protobuf_agree_with_the_field_walk(tmp_path, mutate, raw):
    """load_model proves a file clean inside protobuf's parser and walks the fields only to
    name what is wrong: the message is the walk's (``_malformed`` without the file's bytes)."""
    from analyzer.facts.extract import _malformed

    model = load_model(EXAMPLES / "llama_tp2" / "rank0.onnx")
    mutate(model)
    data = model.SerializeToString()
    if raw is not None:
        data = data.replace(MARKER.encode(), raw + b"_" * (len(MARKER) - len(raw)))
    path = tmp_path / "m.onnx"
    path.write_bytes(data)
    expected = _malformed(onnx.load(str(path), load_external_data=False))
    assert expected
    with pytest.raises(InputError) as err:
        load_model(path)
    assert str(err.value) == f"{path}: malformed ONNX model: {expected}"


def test_clean_files_are_proved_clean_inside_protobuf():
    from analyzer.facts.extract import _maybe_bad_dims, _maybe_bad_strings

    for path in sorted(EXAMPLES.glob("*/*.onnx")):
        data = path.read_bytes()
        assert not _maybe_bad_strings(data) and not _maybe_bad_dims(data), path


@pytest.mark.parametrize("name", ["caf\u00e9", "\u00e9t\u00e9", "x\u4e2d"])
def test_non_ascii_names_are_read_and_a_nul_after_them_is_found(tmp_path, name):
    # the fast NUL check reads names as ASCII codes; other text goes to the text-format check
    from analyzer.facts.extract import _maybe_bad_strings

    model = model_from_text(MLP)
    model.graph.node[0].name = name
    (tmp_path / "ok.onnx").write_bytes(model.SerializeToString())
    assert load_model(tmp_path / "ok.onnx").graph.node[0].name == name
    assert not _maybe_bad_strings(model.SerializeToString())
    model.graph.node[0].name = name + "\x00"
    (tmp_path / "bad.onnx").write_bytes(model.SerializeToString())
    with pytest.raises(InputError, match="contains a NUL character"):
        load_model(tmp_path / "bad.onnx")


def test_identical_graphs_are_checked_once_but_every_file_is(tmp_path):
    from analyzer.inputs.load import load_inputs

    seq = EXAMPLES / "llama_tp2" / "seq.onnx"
    rank = load_model(EXAMPLES / "llama_tp2" / "rank0.onnx")
    (tmp_path / "a.onnx").write_bytes(rank.SerializeToString())
    rank.producer_name = MARKER
    (tmp_path / "b.onnx").write_bytes(rank.SerializeToString().replace(MARKER.encode(), b"\xff" * len(MARKER)))
    rank.producer_name = "another exporter"
    (tmp_path / "c.onnx").write_bytes(rank.SerializeToString())
    # rank 0's file twice: the twin machinery, not the rank files, is under test here
    inp = load_inputs(seq, [tmp_path / "a.onnx", tmp_path / "c.onnx"], diagnose_files=False)
    assert inp.same_graph == [0, 1, 1]
    assert inp.canonical_ranks[1].producer_name == "another exporter"
    with pytest.raises(InputError, match=r"b\.onnx: malformed ONNX model: model\.producer_name is not UTF-8"):
        load_inputs(seq, [tmp_path / "a.onnx", tmp_path / "b.onnx"], diagnose_files=False)


@pytest.mark.parametrize(
    "text",
    [
        "['', 'model', 'model.layers.1', 'model.layers.1.self_attn', 'slice_10']",
        "['', 'model', 'cat_2']",
        "[]",
        "['only']",
        "['a\\x00b', 'c', 'd']",  # an escape: literal_eval's reading
        "['a\x00b', 'c', 'd']",  # a NUL in the source: literal_eval refuses it
        "['caf\u00e9', 'x', 'y']",
        "['a', \"b\", 'c']",
        "['a','b','c']",
        "['a', 'b',]",
        "('a', 'b', 'c')",
        "['a', 'b' 'c', 'd']",
        "['a\tb', 'c', 'd']",
        " ['a', 'b', 'c']",
        "['a]', '[b', 'c']",
        "not a list",
    ],
)
def test_scopes_read_without_literal_eval_are_what_literal_eval_reads(text):
    import ast

    from analyzer.facts.source import _scope_from_name_scopes

    try:
        scopes = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        scopes = None
    modules = [str(s) for s in scopes[:-1] if s] if isinstance(scopes, (list, tuple)) else []
    assert _scope_from_name_scopes(text) == (modules[-1] if modules else "")
