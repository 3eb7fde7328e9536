"""Fact extraction: every table is declared in schemas/, values are what the ONNX graph says."""

from __future__ import annotations

import onnx
import pytest
from conftest import EXAMPLES, model_from_text

from analyzer.dl import read_decls
from analyzer.errors import InputError
from analyzer.facts import extract_graph_facts, load_model, parse_source
from analyzer.rulebook import schema_files

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
