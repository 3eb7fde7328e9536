"""Tests for scripts/export_hf_tp.py (the producer of examples/<case>/).

* The example folders are checked without torch (structure of case.yaml, files present,
  collectives present in rank files, initializer names shared between seq and ranks).
* The producer itself is run on a tiny config when torch, transformers and onnxscript
  are importable; otherwise those tests are skipped with the reason.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import example_cases

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "export_hf_tp.py"
EXAMPLES = REPO / "examples"
CASES = example_cases("forward")  # pipeline and training-step cases: tests/test_pipeline.py, test_train_steps.py
REQUIRED_KEYS = {"model", "world_size", "expected", "bug", "bug_module", "max_abs_error", "produced_by"}

_missing = [m for m in ("torch", "transformers", "onnxscript") if importlib.util.find_spec(m) is None]
needs_export_stack = pytest.mark.skipif(
    bool(_missing),
    reason=f"producer needs the 'export' extra (torch==2.13.0, transformers, onnxscript); missing: {_missing}",
)


def _load_case(folder: Path) -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((folder / "case.yaml").read_text())


@pytest.mark.parametrize("folder", CASES, ids=[p.name for p in CASES])
def test_example_case_is_well_formed(folder: Path):
    onnx = pytest.importorskip("onnx")
    case = _load_case(folder)
    assert REQUIRED_KEYS <= set(case), REQUIRED_KEYS - set(case)
    n = case["world_size"]
    assert case["expected"] in ("verified", "discrepancy")
    if case["expected"] == "verified":
        assert case["bug"] is None and case["bug_module"] is None
        assert case["max_abs_error"] < 1e-4
    else:
        assert case["bug"] and case["bug_module"]
        if case.get("collective_mismatch"):  # the ranks' collectives do not pair: no logits to compare
            assert case["max_abs_error"] is None and "collective #" in case["collective_mismatch"]
        else:
            assert case["max_abs_error"] > 1e-2
    seq = onnx.load(str(folder / "seq.onnx"))
    seq_inits = {t.name for t in seq.graph.initializer}
    for r in range(n):
        rank = onnx.load(str(folder / f"rank{r}.onnx"))
        # a whole model (input_ids -> logits) or one layer (DeepSpeed-MoE: hidden_states -> output);
        # a loss takes the labels too (scripts/export_tp_idioms.py's vocab_ce)
        inputs = [case["model"].get("input", {}).get("name", "input_ids")]
        inputs += [case["model"]["labels"]["name"]] if "labels" in case["model"] else []
        inputs += case["model"].get("extra_inputs", [])  # e.g. sequence-sharded position_ids (export_cp.py)
        assert [i.name for i in rank.graph.input] == inputs
        assert [o.name for o in rank.graph.output] == [case["model"].get("output", {}).get("name", "logits")]
        ops = {(node.domain, node.op_type) for node in rank.graph.node}
        # tensor parallel gathers the logits; expert parallel (scripts/export_moe.py) all-reduces
        # the experts' partial outputs and keeps lm_head replicated; DeepSpeed-MoE exchanges tokens
        if "deepspeed_version" in case["model"]:
            expected = "AllToAll"
        else:
            # a vocab-parallel loss all-reduces its row max, predicted logit and sum of exponentials
            loss = case["model"].get("output", {}).get("name") == "loss"
            expected = "AllReduce" if "ep_plan" in case or loss else "AllGather"
        assert ("com.microsoft", expected) in ops
        weights = {t.name for t in rank.graph.initializer if t.name.endswith((".weight", ".bias"))}
        assert weights and weights <= seq_inits
        # every node can be traced back to its HF module
        for node in rank.graph.node:
            assert any(m.key == "pkg.torch.onnx.name_scopes" for m in node.metadata_props), node.name
    assert not (folder / f"rank{n}.onnx").exists()


def _run(tmp_path: Path, *extra: str) -> dict:
    out = tmp_path / "case"
    cmd = [sys.executable, str(SCRIPT), "--model", "llama", "--world-size", "2", "--hidden", "32",
           "--intermediate", "64", "--vocab", "64", "--out", str(out), *extra]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr[-4000:]
    assert (out / "seq.onnx").is_file() and (out / "rank0.onnx").is_file() and (out / "rank1.onnx").is_file()
    return _load_case(out)


@needs_export_stack
def test_producer_correct_tiny(tmp_path: Path):
    case = _run(tmp_path)
    assert case["expected"] == "verified"
    assert case["max_abs_error"] < 1e-4


@needs_export_stack
def test_producer_missing_allreduce_tiny(tmp_path: Path):
    case = _run(tmp_path, "--bug", "missing_allreduce")
    assert case["expected"] == "discrepancy"
    assert case["bug_module"] == "model.layers.1.mlp.down_proj"
    assert case["max_abs_error"] > 1e-2


@needs_export_stack
def test_producer_sequence_parallel_with_rank_dependent_plan_tiny(tmp_path: Path):
    """--form sp builds torchtitan's plan per rank; the collective_order bug changes rank 1's
    plan only, so the exporter's own simulation stops at the first collective that differs."""
    case = _run(tmp_path, "--form", "sp", "--layers", "1", "--bug", "collective_order",
                "--bug-module", "model.layers.0.mlp.down_proj")
    assert case["expected"] == "discrepancy"
    assert case["max_abs_error"] is None
    assert "rank 0 ReduceScatter" in case["collective_mismatch"]
    assert "rank 1 AllReduce" in case["collective_mismatch"]


@needs_export_stack
def test_moe_producer_expert_parallel_one_layer(tmp_path: Path):
    """scripts/export_moe.py on one layer: HF's AllReduceEP export is verified by the rules and
    its bug (round-robin expert ownership) flagged at the experts' lookup."""
    from analyzer import check

    outs = {}
    bug = ["--bug", "expert_placement", "--bug-module", "model.layers.0.mlp.experts"]
    for name, extra in (("ok", []), ("bug", bug)):
        out = tmp_path / name
        cmd = [sys.executable, str(REPO / "scripts" / "export_moe.py"), "--layers", "1", "--out", str(out), *extra]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stdout + res.stderr[-4000:]
        outs[name] = check(out / "seq.onnx", [out / "rank0.onnx", out / "rank1.onnx"])
    assert outs["ok"].verdict == "verified"
    first = outs["bug"].verdict_.discrepancies[0]
    assert outs["bug"].verdict == "discrepancy" and first.scope == "model.layers.0.mlp.experts"
    assert "expert-range" in first.hint_ids


@needs_export_stack
def test_producer_context_parallel_positions_tiny(tmp_path: Path):
    """scripts/export_cp.py: ranks hold chunks of the sequence; with the rank's positions the
    concatenated rank logits are the sequential ones, without them (HF's default arange(S/N) on
    every rank) they are not."""
    script = REPO / "scripts" / "export_cp.py"
    cases = {}
    for bug in ((), ("--bug", "rotary_offset")):
        out = tmp_path / ("bug" if bug else "ok")
        cmd = [sys.executable, str(script), "--hidden", "32", "--intermediate", "64", "--vocab", "64",
               "--layers", "1", "--out", str(out), *bug]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stdout + res.stderr[-4000:]
        cases[bool(bug)] = _load_case(out)
    assert cases[False]["expected"] == "verified" and cases[False]["max_abs_error"] < 1e-4
    assert cases[True]["bug_module"] == "model.rotary_emb" and cases[True]["max_abs_error"] > 1e-2


@needs_export_stack
def test_train_step_producer_expert_parallel(tmp_path: Path):
    """scripts/export_train_step.py --case mixtral_ep2_sgd: a training step of HF Mixtral under
    HF's AllReduceEP, verified with every stacked expert weight updated Shard(0) and every other
    parameter Replicate."""
    from analyzer import check

    out = tmp_path / "ep_step"  # a folder not named after the case: case.yaml still names the preset
    cmd = [sys.executable, str(REPO / "scripts" / "export_train_step.py"), "--case", "mixtral_ep2_sgd",
           "--out", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr[-4000:]
    case = _load_case(out)
    assert case["produced_by"] == "python scripts/export_train_step.py --case mixtral_ep2_sgd"
    assert case["training_step"]["parallel"] == "expert" and case["expected"] == "verified"
    assert case["seq_loss_vs_torch_max_abs_error"] < 1e-5
    result = check(out / "seq.onnx", [out / "rank0.onnx", out / "rank1.onnx"])
    assert result.verdict == "verified"
    updated = {o.name: o.relation for o in result.verdict_.outputs if o.name.startswith("updated.")}
    assert updated and all(rel == ("Shard(0)" if ".experts." in name else "Replicate") for name, rel in updated.items())


@needs_export_stack
def test_tp_dp_training_step_producer_one_layer(tmp_path: Path):
    """scripts/mesh_train_step.py on one layer: the 4 ranks of the TP x DP SGD step (simulated)
    rebuild the sequential step, and the mesh check proves every update in its placement."""
    from analyzer import check

    out = tmp_path / "step"
    cmd = [sys.executable, str(REPO / "scripts" / "mesh_train_step.py"), "--case", "llama_tp2_dp2_sgd",
           "--layers", "1", "--out", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stdout + res.stderr[-4000:]
    case = _load_case(out)
    assert case["expected"] == "verified" and case["max_abs_error"] < 1e-4
    result = check(out / "seq.onnx", [out / f"rank{r}.onnx" for r in range(4)], relations=out / "mesh.yaml")
    assert result.verdict == "verified"
    assert all(o.relation.startswith("dp: Replicate, tp: ") for o in result.verdict_.outputs)


@needs_export_stack
@pytest.mark.slow
@pytest.mark.parametrize(
    "script, case",
    [
        # Qwen3's own plan: q_norm/k_norm "replicated_with_grad_allreduce" (analyzer/export/plan.py)
        ("export_hf_families.py", "qwen3_tp2"),
        # all_reduce(m, "max") -> AllReduce(reduction="max") (analyzer/export/collectives.py)
        ("export_tp_idioms.py", "qwen3_tp2_vocab_softmax"),
        # GPT-2's Conv1D converted to nn.Linear (weights stored transposed), MLP tensor-parallel
        ("export_tp_idioms.py", "gpt2_tp2_linear_from_conv1d"),
        # Megatron-core's in-place collectives traced as functional ones (needs megatron-core)
        ("export_megatron_core.py", "megatron_gpt_tp2_loss"),
    ],
)
def test_families_and_idioms_producers_reproduce_their_committed_case(tmp_path: Path, script: str, case: str):
    """Regenerated with the package's export pipeline, a case is the committed one: the same
    case.yaml (plan, errors, verdict expected), the same ops, and the same verdict."""
    import onnx
    import yaml

    from analyzer import check

    if script == "export_megatron_core.py":
        pytest.importorskip("megatron.core", reason="pip install megatron-core==0.16.1 --no-deps")
    out = tmp_path / case
    subprocess.run([sys.executable, str(REPO / "scripts" / script), "--case", case, "--out", str(out)],
                   check=True, capture_output=True, timeout=900, cwd=REPO)  # fmt: skip
    old = EXAMPLES / case
    new_case, old_case = (yaml.safe_load((d / "case.yaml").read_text()) for d in (out, old))
    assert new_case == old_case
    for name in ("seq.onnx", "rank0.onnx", "rank1.onnx"):
        a, b = onnx.load(out / name), onnx.load(old / name)
        assert [n.op_type for n in a.graph.node] == [n.op_type for n in b.graph.node], name
    assert check(out / "seq.onnx", [out / "rank0.onnx", out / "rank1.onnx"]).verdict == old_case["expected"]
