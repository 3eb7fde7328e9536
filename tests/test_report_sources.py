"""Reports point at the user's code: the innermost frame outside the frameworks, a module's call
for nodes traced inside them, --source-root / --path-map for SARIF locations in the user's
repository, and text a user reads without knowing the fact tables."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import EXAMPLES

from analyzer import check
from analyzer.cli import main
from analyzer.facts.source import FrameChoice, pick_frame, stack_frames

USER = ("transformers/models/llama/modeling_llama.py", 164, "down_proj = self.down_proj(x)")
LINEAR = ("torch/nn/modules/linear.py", 134, "return F.linear(input, self.weight, self.bias)")
PROXY = ("torch/fx/experimental/proxy_tensor.py", 1823, "return func(*args, **kwargs)")


def _trace(*frames) -> str:
    return "".join(f'File "{f}", line {line}, in fn\n    {code}\n' for f, line, code in frames)


def test_the_site_is_the_innermost_frame_outside_the_frameworks():
    frames = stack_frames(_trace(USER, LINEAR, PROXY))
    assert [f[0] for f in frames] == [USER[0], LINEAR[0], PROXY[0]]
    assert pick_frame(frames) == (USER, None)


def test_only_framework_frames_give_no_site_and_the_innermost_as_context():
    assert pick_frame(stack_frames(_trace(LINEAR, PROXY))) == (None, PROXY)
    assert pick_frame([]) == (None, None)


def test_own_code_outside_installed_packages_comes_before_installed_model_code():
    installed = ("/venv/lib/python3.11/site-packages/transformers/models/llama/modeling_llama.py", 164, "")
    mine = ("/home/me/train/model.py", 40, "y = block(x)")
    assert pick_frame([mine, installed, LINEAR]) == (mine, None)
    assert pick_frame([installed, LINEAR]) == (installed, None)  # then installed model code


def test_include_exclude_and_path_map(tmp_path):
    mega = ("/opt/tiger/Megatron-LM/megatron/core/layers.py", 260, "out = self.weight[i]")
    helper = ("/opt/tiger/Megatron-LM/megatron/core/utils.py", 12, "return f(x)")
    assert pick_frame([mega, helper])[0] == helper
    assert pick_frame([mega, helper], FrameChoice(exclude=("*/utils.py",)))[0] == mega
    assert pick_frame([mega, helper], FrameChoice(include=("*/layers.py",)))[0] == mega
    (tmp_path / "megatron" / "core").mkdir(parents=True)
    (tmp_path / "megatron" / "core" / "layers.py").write_text("x\n")
    choice = FrameChoice(root=str(tmp_path), path_map=(("/opt/tiger/Megatron-LM", str(tmp_path)),))
    site, _ = pick_frame([mega, helper], choice)
    assert site == (str(tmp_path / "megatron" / "core" / "layers.py"), 260, "out = self.weight[i]")
    assert choice.in_root(site[0]) == "megatron/core/layers.py"
    assert FrameChoice(path_map=(("/opt/tiger/Megatron-LM/", "."),)).mapped(mega[0]) == "megatron/core/layers.py"
    assert choice.in_root("/etc/passwd") is None and choice.in_root("../outside.py") is None


def _example(case):
    folder = EXAMPLES / case
    if not folder.is_dir():
        pytest.skip(f"examples/{case} not present")
    return folder / "seq.onnx", [folder / "rank0.onnx", folder / "rank1.onnx"]


def test_a_gradient_node_points_at_its_modules_call_not_at_proxy_tensor():
    seq, ranks = _example("llama_dp2_sgd_bug_missing_grad_allreduce")
    first = check(seq, ranks).verdict_.discrepancies[0]
    assert first.scope == "model.layers.1.mlp.down_proj"
    assert (first.source, first.source_from) == ("transformers/models/llama/modeling_llama.py:164", "module")
    assert first.code.startswith("down_proj = self.down_proj(")
    # the backward matmul that made the partial gradient: its trace is all torch frames
    assert first.origin_source == "transformers/models/llama/modeling_llama.py:164"


def test_text_names_ranks_and_says_when_no_frame_was_exported():
    seq, ranks = _example("llama_tp2_bug_shard_order")
    out = CliRunner().invoke(main, ["check", str(seq), *map(str, ranks)]).output
    assert "discrepancy 1 (on rank 0): node_cat_7 (Concat)" in out and "(r0 node)" not in out
    assert "input split_1_split_0: not a piece of any sequential value <- node_Split_83 (Split, lm_head)" in out
    seq, ranks = _example("llama_dp2_sgd_bug_missing_inv_world")
    out = CliRunner().invoke(main, ["check", str(seq), *map(str, ranks)]).output
    first = out[out.index("discrepancy 1") :].split("\n\n")[0]
    assert "scope:" not in first and "?" not in first, first
    assert "source: none in your code was exported for this node" in first
    assert "compare the rank nodes below" not in out


GPT_BUG = EXAMPLES / "entangle" / "bug_missing_layernorm_allreduce"
PUBLISHED = EXAMPLES / "entangle" / "published" / "bug_missing_layernorm_allreduce"
EXPORTER_ROOT = "/dfs/project/kgrlm/shirwu/hank/Megatron-LM"


@pytest.mark.skipif(not PUBLISHED.is_dir(), reason="examples/entangle/published not present")
def test_sarif_with_a_source_root_is_repository_relative_and_valid(tmp_path):
    import jsonschema
    from test_sarif import SCHEMA_PATH, _assert_valid

    repo = tmp_path / "Megatron-LM"
    target = repo / "megatron" / "core" / "fusions" / "fused_bias_dropout.py"
    target.parent.mkdir(parents=True)
    target.write_text("".join(f"line {i}\n" for i in range(1, 60)))
    sarif = tmp_path / "out.sarif"
    args = [
        "check", str(PUBLISHED / "tp1" / "both.g0.r0.py"),
        str(PUBLISHED / "tp2.bug" / "both.g0.r0.py"), str(PUBLISHED / "tp2.bug" / "both.g0.r1.py"),
        "--relations", str(GPT_BUG / "spec.yaml"), "--sarif", str(sarif),
        "--source-root", str(repo), "--path-map", f"{EXPORTER_ROOT}={repo}",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "source: megatron/core/fusions/fused_bias_dropout.py:33" in result.output
    log = json.loads(sarif.read_text())
    schema = json.loads(SCHEMA_PATH.read_text())
    _assert_valid(jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER), log)
    run = log["runs"][0]
    art = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert art == {"uri": "megatron/core/fusions/fused_bias_dropout.py", "uriBaseId": "SRCROOT"}
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == repo.resolve().as_uri() + "/"
    assert EXPORTER_ROOT not in sarif.read_text().split('"invocations"')[0]


@pytest.mark.parametrize(
    "option, message",
    [
        (["--path-map", "no-equals-sign"], "--path-map 'no-equals-sign': expected OLD=NEW (NEW may be empty or '.')"),
        (["--source-root", "/no/such/folder"], "--source-root /no/such/folder: no such folder"),
    ],
)
def test_bad_source_options_are_one_line_errors(option, message):
    seq, ranks = _example("llama_tp2")
    result = CliRunner().invoke(main, ["check", str(seq), *map(str, ranks), *option])
    assert result.exit_code == 2 and result.output.strip() == f"shardlog: error: {message}"


def test_extract_writes_the_graphs_around_the_frontier(tmp_path):
    import onnx

    seq, ranks = _example("llama_tp2_bug_missing_allreduce")
    out = tmp_path / "x"
    args = ["check", str(seq), *map(str, ranks), "--extract", str(out), "-q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    files = sorted(p.name for p in out.iterdir())
    assert files == ["discrepancy1_rank0.onnx", "discrepancy1_rank1.onnx", "discrepancy1_seq.onnx"]
    for name in files:
        model = onnx.load(out / name)
        onnx.checker.check_model(model)
        assert [o.name for o in model.graph.output] == ["add_16"]  # the frontier node's output
        assert "node_add_16" in {n.name for n in model.graph.node}
    rank0 = onnx.load(out / "discrepancy1_rank0.onnx")
    assert "AllReduce" in {n.op_type for n in rank0.graph.node}  # the rank side of the story
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 2 and "already holds extracted graphs" in again.output
