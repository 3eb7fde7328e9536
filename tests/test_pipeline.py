"""Pipeline parallelism (``--pp``): stage graphs chained by boundary tensor names.

* The bundled ``examples/llama_pp2*`` (``scripts/export_pipeline.py``: HF Llama split with
  ``torch.distributed.pipelining``) are verified, or flagged in the stage and module of the
  bug, with the numeric witness agreeing.
* Small hand-built graphs cover what the examples do not: a model input read by a later
  stage, constants shared or different between stages, pipeline x tensor parallelism, and
  every malformed chain as a one-line error with exit code 2.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml
from click.testing import CliRunner
from conftest import EXAMPLES, ROOT
from onnx import TensorProto, helper, numpy_helper

from analyzer import check
from analyzer.cli import main
from analyzer.errors import InputError
from analyzer.importers.pipeline import chain_stages, split_stages

CASES = sorted(p for p in EXAMPLES.glob("llama_pp*") if (p / "case.yaml").is_file())


def _case(folder: Path) -> tuple[dict, Path, list[Path]]:
    cfg = yaml.safe_load((folder / "case.yaml").read_text())
    return cfg, folder / cfg["files"]["seq"], [folder / f for f in cfg["files"]["stages"]]


def _cli(*args: str):
    """Run ``shardlog`` in-process; returns (exit code, stdout, stderr)."""
    res = CliRunner().invoke(main, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


# --- the exported examples -------------------------------------------------------------------


def test_examples_are_present():
    names = {p.name for p in CASES}
    assert {"llama_pp2", "llama_pp2_bug_mask_not_forwarded", "llama_pp2_bug_swapped_rope"} <= names


@pytest.mark.parametrize("folder", CASES, ids=[p.name for p in CASES])
def test_example_case_is_well_formed(folder: Path):
    cfg, seq, stages = _case(folder)
    assert cfg["pipeline"]["stages"] == len(stages) == 2
    s0, s1 = (onnx.load(str(p)) for p in stages)
    assert [i.name for i in s0.graph.input] == ["input_ids"]
    assert [o.name for o in s1.graph.output] == ["logits"]
    sent = {o.name for o in s0.graph.output}
    received = [i.name for i in s1.graph.input]
    assert received == [b["name"] for b in cfg["pipeline"]["boundary"]]
    assert set(received) <= sent  # what stage 1 reads, stage 0 sends under the same name
    weights = {t.name for m in (s0, s1) for t in m.graph.initializer if t.name.endswith(".weight")}
    assert weights == {t.name for t in onnx.load(str(seq)).graph.initializer if t.name.endswith(".weight")}
    for node in [*s0.graph.node, *s1.graph.node]:
        assert any(m.key == "pkg.torch.onnx.name_scopes" for m in node.metadata_props), node.name


@pytest.mark.parametrize("folder", CASES, ids=[p.name for p in CASES])
def test_example_verdict_stage_and_witness(folder: Path):
    cfg, seq, stages = _case(folder)
    result = check(seq, stages, pipeline=2, numeric=True)
    assert result.verdict == cfg["expected"]
    assert result.inputs.pipeline.boundaries[1] == [b["name"] for b in cfg["pipeline"]["boundary"]]
    error = result.numeric["logits"]
    if cfg["expected"] == "verified":
        assert result.verdict_.outputs[0].relation == "Replicate"
        assert error < 1e-4
        return
    assert error > 1e-2  # the witness confirms the discrepancy on numbers
    first = result.verdict_.discrepancies[0]
    assert first.kind == "frontier"
    assert first.scope == cfg["bug_module"]
    assert first.stage == cfg["bug_stage"] == 1
    assert first.source.startswith("transformers/models/llama/modeling_llama.py:")
    # every frontier of the bug lies in the stage that received the broken boundary
    assert {d.stage for d in result.verdict_.discrepancies} == {1}


def test_swapped_boundary_frontier_is_the_rotary_product():
    """cos.1 holds the sines: the first op that reads it (q * cos in apply_rotary_pos_emb) breaks."""
    _, seq, stages = _case(EXAMPLES / "llama_pp2_bug_swapped_rope")
    first = check(seq, stages, pipeline=2).verdict_.discrepancies[0]
    assert first.op_type == "Mul"
    assert "apply_rotary_pos_emb" in first.code


# the hint that names the fix at the first frontier, and the details it gives (the boundary
# tensor, the seq value it holds, the one the seq node reads), hints_pipeline.dl
BOUNDARY_HINTS = {
    "llama_pp2_bug_swapped_rope": (
        "stage-input-other-value",
        "stage 1's input cos.1 holds sin (Replicate) where the sequential node reads cos, "
        "which stage 1 receives as sin.1",
    ),
    "llama_pp2_bug_mask_not_forwarded": (
        "stage-input-not-sent",
        "stage 1 reads no piece of where, which stage 0 holds as where",
    ),
}
STAGE_HINTS = {"stage-input-other-value", "stage-input-not-sent"}


@pytest.mark.parametrize("name", sorted(BOUNDARY_HINTS))
def test_boundary_bug_hint_names_the_boundary_tensor(name):
    """The first frontier of a stage-boundary bug gets the pipeline hint (not the generic
    layouts-disagree) with the boundary tensor and the seq values named, in the text report too."""
    hint, detail = BOUNDARY_HINTS[name]
    _, seq, stages = _case(EXAMPLES / name)
    result = check(seq, stages, pipeline=2)
    first = result.verdict_.discrepancies[0]
    assert first.hint_ids == [hint]
    assert any(h.endswith(f"({detail})") for h in first.hints), first.hints
    # every frontier of these bugs gets a pipeline hint
    assert all(set(d.hint_ids) & STAGE_HINTS for d in result.verdict_.discrepancies)
    code, out, _ = _cli("check", seq, *stages, "--pp", "2")
    assert code == 1 and detail in out


def test_swapped_rope_sine_product_names_the_other_tensor():
    """rotate_half(q) * sin reads sin.1, which holds the cosines."""
    _, seq, stages = _case(EXAMPLES / "llama_pp2_bug_swapped_rope")
    details = {h for d in check(seq, stages, pipeline=2).verdict_.discrepancies for h in d.hints}
    assert any("stage 1's input sin.1 holds cos (Replicate) where the sequential node reads sin" in h for h in details)


def test_no_boundary_hint_where_the_boundary_is_right(tmp_path):
    """Correct pipelines have no frontier, hence no hint; bugs inside a stage (a constant of its
    own that differs, a missing all-reduce in PP x TP) do not get a boundary hint."""
    correct = [p for p in CASES if "_bug_" not in p.name]
    assert EXAMPLES / "llama_pp2" in correct
    for folder in correct:
        _, seq, stages = _case(folder)
        result = check(seq, stages, pipeline=2)
        assert result.verdict == "verified" and not result.derivation.derived.get("Hint")
    p = _save(tmp_path, seq=_seq(), s0=_stage0(), s1=_stage1())
    assert check(p["seq"], [p["s0"], p["s1"]], pipeline=2).verdict == "verified"
    p = _save(tmp_path, seq=_seq(), s0=_stage0(), s1=_stage1(c=np.array([2.0], dtype=np.float32)))
    own_constant = check(p["seq"], [p["s0"], p["s1"]], pipeline=2).verdict_.discrepancies
    seq = _save(tmp_path, seq=_seq())["seq"]
    no_allreduce = check(seq, _pp_tp_files(tmp_path, allreduce=False), pipeline=2).verdict_.discrepancies
    assert own_constant and no_allreduce
    for d in [*own_constant, *no_allreduce]:
        assert not set(d.hint_ids) & STAGE_HINTS, (d.node, d.hint_ids)


def test_without_pp_the_stages_are_not_ranks():
    """The same files read as two tensor-parallel ranks are rejected or disproved, never verified."""
    _, seq, stages = _case(EXAMPLES / "llama_pp2")
    code, out, err = _cli("check", seq, *stages, "-q")
    assert code in (1, 2), out
    assert "verified" not in out


def test_cli_verified_and_discrepancy_with_stage():
    _, seq, stages = _case(EXAMPLES / "llama_pp2")
    code, out, _ = _cli("check", seq, *stages, "--pp", "2")
    assert code == 0, out
    assert "pipeline: 2 stages" in out and "logits = Replicate on the chained stages" in out
    _, seq, stages = _case(EXAMPLES / "llama_pp2_bug_mask_not_forwarded")
    code, out, _ = _cli("check", seq, *stages, "--pp", "2")
    assert code == 1, out
    assert "scope:  model.layers.1.self_attn" in out
    assert "stage:  1 (" in out and "stage1.onnx" in out


def test_report_lines_are_not_wrapped_on_long_paths(tmp_path):
    """A deep checkout (CI's is) must not split "stage: 1 (path)" over two lines."""
    _, seq, stages = _case(EXAMPLES / "llama_pp2_bug_mask_not_forwarded")
    deep = tmp_path.joinpath(*(["a_directory_name_long_enough_to_overflow_eighty_columns"] * 3))
    deep.mkdir(parents=True)
    copies = []
    for f in [seq, *stages]:
        copies.append(deep / f.name)
        copies[-1].write_bytes(f.read_bytes())
    code, out, _ = _cli("check", *copies, "--pp", "2")
    assert code == 1, out
    assert f"  stage:  1 ({copies[-1]})\n" in out


def test_json_report_has_pipeline_and_stage(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    import json

    _, seq, stages = _case(EXAMPLES / "llama_pp2_bug_swapped_rope")
    report = tmp_path / "r.json"
    code, out, _ = _cli("check", seq, *stages, "--pp", "2", "--json", report)
    assert code == 1, out
    data = json.loads(report.read_text())
    jsonschema.validate(data, json.loads((ROOT / "schemas" / "report.schema.json").read_text()))
    assert data["pipeline"]["boundaries"][1] == ["hidden_states.1", "cos.1", "sin.1", "attention_mask.1"]
    assert data["discrepancies"][0]["stage"] == 1


def test_spec_pipeline_section_is_the_same_as_pp(tmp_path):
    _, seq, stages = _case(EXAMPLES / "llama_pp2")
    spec = tmp_path / "spec.yaml"
    spec.write_text("world_size: 2\npipeline: {stages: 2}\n")
    result = check(seq, stages, relations=spec)
    assert result.verdict == "verified" and result.inputs.pipeline.degree == 2
    code, _, err = _cli("check", seq, *stages, "--relations", spec, "--pp", "1")
    assert code == 2 and "pipeline stages 2 but --pp 1" in err
    spec.write_text("world_size: 1\npipeline: {stages: 2}\n")
    code, _, err = _cli("check", seq, *stages, "--relations", spec)
    assert code == 2 and "world size 1 but 2 rank files" in err
    for bad in ("pipeline: 2", "pipeline: {stages: 0}", "pipeline: {stages: 2, split: x}", "pipeline: {stages: true}"):
        spec.write_text(bad + "\n")
        code, _, err = _cli("check", seq, *stages, "--relations", spec)
        assert code == 2 and "pipeline must be a mapping like {stages: 2}" in err, (bad, err)
        assert err.count("\n") == 1


# --- small hand-built graphs -----------------------------------------------------------------

RNG = np.random.default_rng(1234)
W1 = RNG.standard_normal((4, 4)).astype(np.float32)
W2 = RNG.standard_normal((4, 4)).astype(np.float32)
C = np.array([0.5], dtype=np.float32)


def _model(nodes, inputs, outputs, inits, *, msft=False, typed=()) -> onnx.ModelProto:
    """A model from (name, shape) inputs/outputs (float32), {name: array} initializers and
    (name, shape) value infos for values ONNX shape inference cannot type (collective outputs)."""
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs]
    vo = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs]
    init = [numpy_helper.from_array(a, n) for n, a in inits.items()]
    infos = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in typed]
    opsets = [helper.make_opsetid("", 18)] + ([helper.make_opsetid("com.microsoft", 1)] if msft else [])
    model = helper.make_model(helper.make_graph(nodes, "g", vi, vo, init, value_info=infos), opset_imports=opsets)
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model)


def _n(op, inputs, outputs, **attrs) -> onnx.NodeProto:
    """A node in module ``block0`` (the first matmul, sigmoid and scale) or ``block1`` (the
    rest), recorded as torch.onnx does (``pkg.torch.onnx.name_scopes``)."""
    block = "block0" if outputs[0] in ("h", "r", "a") else "block1"
    node = helper.make_node(op, inputs, outputs, **attrs)
    node.metadata_props.add(key="pkg.torch.onnx.name_scopes", value=repr(["", block, outputs[0]]))
    return node


def _seq() -> onnx.ModelProto:
    """y = MatMul(Sigmoid(MatMul(x, w1)) * c, w2) * c + x (a residual from the model input)."""
    n = _n
    return _model(
        [
            n("MatMul", ["x", "w1"], ["h"]),
            n("Sigmoid", ["h"], ["r"]),
            n("Mul", ["r", "c"], ["a"]),
            n("MatMul", ["a", "w2"], ["z"]),
            n("Mul", ["z", "c"], ["zc"]),
            n("Add", ["zc", "x"], ["y"]),
        ],
        [("x", [2, 4])],
        [("y", [2, 4])],
        {"w1": W1, "w2": W2, "c": C},
    )


def _stage0(w1=W1, width=4, out="a") -> onnx.ModelProto:
    n = _n
    return _model(
        [n("MatMul", ["x", "w1"], ["h"]), n("Sigmoid", ["h"], ["r"]), n("Mul", ["r", "c"], [out])],
        [("x", [2, 4])],
        [(out, [2, width])],
        {"w1": w1, "c": C},
    )


def _stage1(w2=W2, width=4, boundary="a", boundary_shape=None, c=C, tp=False) -> onnx.ModelProto:
    """Reads the boundary tensor and the model input x again (the residual)."""
    n = _n
    nodes = [n("MatMul", [boundary, "w2"], ["z"])]
    if tp:
        nodes.append(n("AllReduce", ["z"], ["zr"], domain="com.microsoft", group_size=2, reduction="sum"))
    nodes += [n("Mul", ["zr" if tp else "z", "c"], ["zc"]), n("Add", ["zc", "x"], ["y"])]
    return _model(
        nodes,
        [(boundary, boundary_shape or [2, width]), ("x", [2, 4])],
        [("y", [2, 4])],
        {"w2": w2, "c": c},
        msft=tp,
        typed=[("zr", [2, 4])] if tp else [],
    )


def _save(tmp_path: Path, **models: onnx.ModelProto) -> dict[str, Path]:
    paths = {}
    for name, m in models.items():
        paths[name] = tmp_path / f"{name}.onnx"
        onnx.save(m, str(paths[name]))
    return paths


def test_small_chain_verified_with_input_reread_and_shared_constant(tmp_path):
    p = _save(tmp_path, seq=_seq(), s0=_stage0(), s1=_stage1())
    result = check(p["seq"], [p["s0"], p["s1"]], pipeline=2, numeric=True)
    assert result.verdict == "verified", result.verdict_.discrepancies
    assert result.numeric["y"] < 1e-5
    chain = result.inputs.ranks[0]
    assert [i.name for i in chain.graph.input] == ["x"]  # x read by both stages, one chain input
    assert [o.name for o in chain.graph.output] == ["y"]
    assert [t.name for t in chain.graph.initializer].count("c") == 1  # the equal constant is shared
    stages = {p.value for node in chain.graph.node for p in node.metadata_props if p.key == "shardlog.stage"}
    assert stages == {"0", "1"}


def test_small_chain_bug_in_stage1_is_located(tmp_path):
    """Stage 1 scales by a different constant of the same name: renamed, and the chain breaks
    at the first node that reads it, in stage 1."""
    p = _save(tmp_path, seq=_seq(), s0=_stage0(), s1=_stage1(c=np.array([2.0], dtype=np.float32)))
    result = check(p["seq"], [p["s0"], p["s1"]], pipeline=2, numeric=True)
    assert result.verdict == "discrepancy"
    assert result.numeric["y"] > 1e-2
    chain = result.inputs.ranks[0]
    assert {"c", "stage1/c"} <= {t.name for t in chain.graph.initializer}
    first = result.verdict_.discrepancies[0]
    assert first.op_type == "Mul" and first.outputs == ["zc"] and first.stage == 1


def test_chain_stages_returns_boundaries_and_leaves_inputs_untouched():
    s0, s1, seq = _stage0(), _stage1(), _seq()
    before = s1.SerializeToString()
    chain, boundaries = chain_stages(["s0.onnx", "s1.onnx"], [s0, s1], seq, "seq.onnx")
    assert boundaries == [[], ["a", "x"]]  # the shared constant c is not a boundary tensor
    assert s1.SerializeToString() == before
    names = [node.name for node in chain.graph.node]
    assert all(name.startswith(("stage0/", "stage1/")) or not name for name in names)
    onnx.checker.check_model(chain)


# --- pipeline x tensor parallelism (stretch) ------------------------------------------------


def _pp_tp_files(tmp_path: Path, allreduce: bool = True) -> list[Path]:
    """PP 2 x TP 2: stage 0 column-parallel (w1 split on axis 1), stage 1 row-parallel (w2 split
    on axis 0) and an AllReduce; files in global-rank order, tensor-parallel rank fastest."""
    files = [
        _stage0(w1=W1[:, :2], width=2),
        _stage0(w1=W1[:, 2:], width=2),
        _stage1(w2=W2[:2], width=2, tp=allreduce),
        _stage1(w2=W2[2:], width=2, tp=allreduce),
    ]
    p = _save(tmp_path, **{f"f{i}": m for i, m in enumerate(files)})
    return [p[f"f{i}"] for i in range(4)]


def test_pp_x_tp_verified(tmp_path):
    seq = _save(tmp_path, seq=_seq())["seq"]
    files = _pp_tp_files(tmp_path)
    assert split_stages([str(f) for f in files], 2) == [[str(files[0]), str(files[1])], [str(files[2]), str(files[3])]]
    result = check(seq, files, pipeline=2, numeric=True)
    assert result.verdict == "verified", result.verdict_.discrepancies
    assert result.inputs.world_size == 2
    assert result.numeric["y"] < 1e-5
    code, out, _ = _cli("check", seq, *files, "--pp", "2")
    assert code == 0 and "2 stages x 2 tensor-parallel ranks" in out


def test_pp_x_tp_missing_allreduce_in_stage1(tmp_path):
    """Stage 1's row-parallel matmul is never all-reduced: the partial sum meets the residual
    Add; the pending sum is made in stage 1, and the witness sees the error."""
    seq = _save(tmp_path, seq=_seq())["seq"]
    result = check(seq, _pp_tp_files(tmp_path, allreduce=False), pipeline=2, numeric=True)
    assert result.verdict == "discrepancy"
    assert result.numeric["y"] > 1e-2
    first = result.verdict_.discrepancies[0]
    assert first.op_type == "Add" and "missing-allreduce" in first.hint_ids
    assert (first.scope, first.origin_scope, first.stage) == ("block1", "block1", 1)


# --- malformed chains: one line, exit code 2 ---------------------------------------------------


def _one_line_error(*args) -> str:
    code, out, err = _cli("check", *args)
    assert code == 2, (code, out, err)
    assert err.startswith("shardlog: error: ") and err.count("\n") == 1, err
    return err


def test_stage_input_from_nowhere(tmp_path):
    p = _save(tmp_path, seq=_seq(), s0=_stage0(), s1=_stage1(boundary="a_typo"))
    err = _one_line_error(p["seq"], p["s0"], p["s1"], "--pp", "2")
    assert "'a_typo'" in err and "produced by no earlier stage" in err and "s1.onnx" in err


def test_first_stage_input_not_a_model_input(tmp_path):
    p = _save(tmp_path, seq=_seq(), s0=_stage1(), s1=_stage0())
    err = _one_line_error(p["seq"], p["s0"], p["s1"], "--pp", "2")
    assert "stage 0 input 'a'" in err


def test_boundary_shape_mismatch(tmp_path):
    p = _save(tmp_path, seq=_seq(), s0=_stage0(), s1=_stage1(boundary_shape=[2, 3]))
    err = _one_line_error(p["seq"], p["s0"], p["s1"], "--pp", "2")
    assert "boundary tensor 'a' is float32[2,3] here but float32[2,4]" in err


def test_boundary_dtype_mismatch(tmp_path):
    s1 = _stage1()
    s1.graph.input[0].type.tensor_type.elem_type = TensorProto.FLOAT16
    p = _save(tmp_path, seq=_seq(), s0=_stage0(), s1=s1)
    err = _one_line_error(p["seq"], p["s0"], p["s1"], "--pp", "2")
    assert "boundary tensor 'a' is float16[2,4] here but float32[2,4]" in err


def test_stage_output_reusing_an_earlier_name(tmp_path):
    s1 = _stage1()
    for node in s1.graph.node:
        node.output[:] = ["h" if o == "y" else o for o in node.output]
    s1.graph.output[0].name = "h"
    p = _save(tmp_path, seq=_seq(), s0=_stage0(), s1=s1)
    err = _one_line_error(p["seq"], p["s0"], p["s1"], "--pp", "2")
    assert "output 'h' reuses the name" in err


def test_files_that_do_not_split_into_stages(tmp_path):
    p = _save(tmp_path, seq=_seq(), s0=_stage0(), s1=_stage1())
    err = _one_line_error(p["seq"], p["s0"], p["s1"], p["s1"], "--pp", "2")
    assert "3 rank files do not split into 2 pipeline stages" in err
    err = _one_line_error(p["seq"], p["s0"], p["s1"], "--pp", "0")
    assert "at least 1" in err


def test_pp_1_is_plain_tensor_parallelism():
    folder = EXAMPLES / "llama_tp2"
    files = [folder / "rank0.onnx", folder / "rank1.onnx"]
    result = check(folder / "seq.onnx", files, pipeline=1)
    assert result.verdict == "verified" and result.inputs.pipeline is None


def test_chain_errors_are_input_errors():
    with pytest.raises(InputError, match="produced by no earlier stage"):
        chain_stages(["s0", "s1"], [_stage0(), _stage1(boundary="q")], _seq(), "seq")


# --- the producer ------------------------------------------------------------------------------

_missing = [m for m in ("torch", "transformers", "onnxscript", "onnxruntime") if importlib.util.find_spec(m) is None]


@pytest.mark.skipif(bool(_missing), reason=f"producer needs the export extra; missing: {_missing}")
def test_producer_swapped_rope_tiny(tmp_path):
    """scripts/export_pipeline.py with another seed: the bug shows on numbers (the script
    verifies that itself) and the check flags it in stage 1."""
    out = tmp_path / "case"
    script = ROOT / "scripts" / "export_pipeline.py"
    cmd = [sys.executable, str(script), "--bug", "swapped_rope", "--seed", "3", "--out", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr[-3000:]
    cfg, seq, stages = _case(out)
    assert cfg["expected"] == "discrepancy" and cfg["max_abs_error"] > 1e-2
    result = check(seq, stages, pipeline=2)
    assert result.verdict == "discrepancy" and result.verdict_.discrepancies[0].stage == 1
    assert result.verdict_.discrepancies[0].hint_ids == ["stage-input-other-value"]
