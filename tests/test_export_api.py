"""shardlog export: a Hugging Face config and a plan -> seq.onnx and rank files that
shardlog check reads, with nothing from scripts/ (analyzer/export/)."""

from __future__ import annotations

import contextlib
import importlib.util

import onnx
import pytest
from click.testing import CliRunner

from analyzer.cli import main

_missing = [m for m in ("torch", "transformers", "onnxscript") if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(bool(_missing), reason=f"the export extra is not installed (missing {_missing})")

CONFIG = """model_type: llama
hidden_size: 32
intermediate_size: 64
num_hidden_layers: 2
num_attention_heads: 4
num_key_value_heads: 2
vocab_size: 64
tie_word_embeddings: false
"""


def _run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


@pytest.mark.slow
def test_export_then_check_verifies_and_a_planned_bug_points_at_the_model_code(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG)
    out = tmp_path / "tp2"
    code, text = _run("export", "--hf", cfg, "--world-size", 2, "--out", out)
    assert code == 0, text
    files = [out / "seq.onnx", out / "rank0.onnx", out / "rank1.onnx"]
    meta = [{p.key: p.value for p in onnx.load(f, load_external_data=False).metadata_props} for f in files]
    assert [m["shardlog.rank"] for m in meta] == ["-1", "0", "1"]
    code, text = _run("check", *files, "--numeric")
    assert code == 0 and "logits = Replicate on ranks 0..1" in text, text

    plan = tmp_path / "plan.yaml"
    plan.write_text("model.layers.1.mlp.down_proj: RowwiseParallel(output_layouts=Partial())\n")
    bug = tmp_path / "bug"
    code, text = _run("export", "--hf", cfg, "--world-size", 2, "--out", bug, "--plan", plan)
    assert code == 0, text
    code, text = _run("check", bug / "seq.onnx", bug / "rank0.onnx", bug / "rank1.onnx")
    assert code == 1, text
    first = text[text.index("discrepancy 1") :].split("\n\n")[0]
    assert "source: transformers/models/llama/modeling_llama.py:" in first
    assert "the partial sum comes from" in first and "model.layers.1.mlp.down_proj" in first


@pytest.mark.parametrize(
    "plan, message",
    [
        ("lm_head: diagonal\n", "plan: lm_head: 'diagonal' is not a parallel style"),
        ("model.nowhere.*: colwise\n", "plan: 'model.nowhere.*' matches no module of the model"),
        ("lm_head: ColwiseParallel(output_layouts=Replicat())\n", "is not a placement or a constant"),
        ("[1, 2]\n", "expected a mapping of module patterns to styles"),
    ],
)
def test_bad_plans_are_one_line_errors_before_anything_is_traced(tmp_path, plan, message):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG)
    (tmp_path / "plan.yaml").write_text(plan)
    out = tmp_path / "out"
    code, text = _run("export", "--hf", cfg, "--world-size", 2, "--out", out, "--plan", tmp_path / "plan.yaml")
    assert code == 2 and len(text.strip().splitlines()) == 1 and message in text, text
    assert not (out / "seq.onnx").exists()


def test_bad_configs_and_a_used_folder_are_one_line_errors(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("hidden_size: 32\n")
    code, text = _run("export", "--hf", cfg, "--world-size", 2, "--out", tmp_path / "o")
    assert code == 2 and "the config needs a model_type" in text, text
    cfg.write_text(CONFIG)
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "seq.onnx").write_bytes(b"mine")
    code, text = _run("export", "--hf", cfg, "--world-size", 2, "--out", tmp_path / "o")
    assert code == 2 and "seq.onnx: exists; export into a new folder" in text, text
    assert (tmp_path / "o" / "seq.onnx").read_bytes() == b"mine"
    code, text = _run("export", "--hf", cfg, "--world-size", 1, "--out", tmp_path / "p")
    assert code == 2, text


def _config_json(tmp_path, layers=2):
    """A model folder holding a Hugging Face config.json (what save_pretrained or a Hub snapshot leaves)."""
    import json

    import yaml

    folder = tmp_path / "tiny-llama"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**yaml.safe_load(CONFIG), "num_hidden_layers": layers}))
    return folder


@pytest.mark.slow
def test_export_a_training_step_from_a_local_config_json_then_check_verifies(tmp_path):
    """--train adamw --clip on 2 tensor-parallel ranks: loss and every updated parameter and
    optimizer state are outputs, and the check proves them (analyzer/export/train.py)."""
    folder = _config_json(tmp_path)
    out = tmp_path / "tp2_adamw"
    code, text = _run("export", "--hf", folder, "--world-size", 2, "--train", "adamw", "--clip", "1.0", "--out", out)
    assert code == 0, text
    seq = onnx.load(out / "seq.onnx", load_external_data=False)
    names = [o.name for o in seq.graph.output]
    assert names[0] == "loss" and "updated.model.layers.1.mlp.down_proj.weight" in names
    assert "updated.state.exp_avg_sq.lm_head.weight" in names
    assert [i.name for i in seq.graph.input][:3] == ["input_ids", "labels", "num_items_in_batch"]
    rank1 = onnx.load(out / "rank1.onnx", load_external_data=False)
    assert any(n.op_type == "AllReduce" for n in rank1.graph.node)
    code, text = _run("check", out / "seq.onnx", out / "rank0.onnx", out / "rank1.onnx")
    assert code == 0 and "output updated.model.layers.0.mlp.down_proj.weight = Shard(1)" in text, text
    assert "output loss = Replicate" in text, text


@pytest.mark.slow
def test_export_a_mesh_training_step_then_check_verifies(tmp_path):
    """--mesh tp=2,dp=2 --train sgd: 4 ranks, the replica's step and the spec; the gradient
    all-reduces name the dp axis, the row-parallel ones the tp axis (analyzer/export/mesh.py)."""
    folder = _config_json(tmp_path, layers=1)
    out = tmp_path / "mesh"
    code, text = _run("export", "--hf", folder / "config.json", "--mesh", "tp=2,dp=2", "--train", "sgd", "--out", out)
    assert code == 0, text
    spec = out / "mesh.yaml"
    assert "replica_seq: seq_replica.onnx" in spec.read_text()
    rank3 = onnx.load(out / "rank3.onnx", load_external_data=False)
    reduces = [n for n in rank3.graph.node if n.op_type == "AllReduce"]
    axes = {a.s.decode() for n in reduces for a in n.attribute if a.name == "mesh_axis"}
    assert axes == {"dp", "tp"}, axes
    meta = {p.key: p.value for p in rank3.metadata_props}
    assert meta["shardlog.rank"] == "3" and meta["shardlog.world_size"] == "4"
    ranks = [out / f"rank{r}.onnx" for r in range(4)]
    code, text = _run("check", out / "seq.onnx", *ranks, "--relations", spec, "-q")
    assert code == 0 and text.strip() == "verified", text


@pytest.mark.parametrize(
    "args, message",
    [
        (["--mesh", "tp=2,pp=2"], "axis 'pp' is not one of dp, tp"),
        (["--mesh", "tp=two"], "expected axis=size pairs like tp=2,dp=2"),
        (["--mesh", "tp=2,tp=2"], "axis tp is given twice"),
        (["--mesh", "dp=1"], "the mesh needs 2 ranks or more"),
        (["--mesh", "tp=2,dp=2", "--world-size", "2"], "give --world-size N (tensor parallel), --mesh"),
        ([], "give --world-size N (tensor parallel), --mesh"),
        (["--world-size", "2", "--clip", "1"], "--clip needs --train and a positive norm"),
        (["--mesh", "dp=2", "--batch", "3"], "the batch (3) must be a multiple of the data-parallel size dp=2"),
    ],
)
def test_bad_meshes_and_step_options_are_one_line_errors(tmp_path, args, message):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG)
    code, text = _run("export", "--hf", cfg, *args, "--out", tmp_path / "o")
    assert code == 2 and len(text.strip().splitlines()) == 1 and message in text, text
    assert not (tmp_path / "o" / "seq.onnx").exists()


def test_a_model_name_not_in_the_local_cache_is_one_line(tmp_path, monkeypatch):
    """--hf NAME reads the local Hugging Face cache only: an absent model is one line, no download."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    code, text = _run("export", "--hf", "nobody/no-such-model", "--world-size", 2, "--out", tmp_path / "o")
    assert code == 2 and len(text.strip().splitlines()) == 1, text
    assert "nobody/no-such-model: no such config file, model folder or model in the local Hugging Face cache" in text


@pytest.mark.slow
def test_export_pipeline_stages_then_check_verifies(tmp_path):
    """--pp 2: torch.distributed.pipelining splits the model before the middle layer; the stages
    chain by the boundary names and the check proves them (analyzer/export/stages.py)."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG)
    out = tmp_path / "pp2"
    code, text = _run("export", "--hf", cfg, "--pp", 2, "--out", out)
    assert code == 0, text
    stage0 = onnx.load(out / "stage0.onnx", load_external_data=False)
    assert "hidden_states.1" in [o.name for o in stage0.graph.output]
    assert {p.key: p.value for p in stage0.metadata_props}["shardlog.stage"] == "0"
    code, text = _run("check", out / "seq.onnx", out / "stage0.onnx", out / "stage1.onnx", "--pp", 2, "-q")
    assert code == 0 and text.strip() == "verified", text


@pytest.mark.parametrize(
    "args, message",
    [
        (["--pp", "2", "--world-size", "2"], "--pp exports the stages of the sequential forward: not with"),
        (["--world-size", "2", "--split-layer", "1"], "--split-layer needs --pp 2"),
        (["--pp", "2", "--split-layer", "2"], "--split-layer 2: the model has layers 0..1; split at 1..1"),
    ],
)
def test_bad_pipeline_options_are_one_line_errors(tmp_path, args, message):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG)
    code, text = _run("export", "--hf", cfg, *args, "--out", tmp_path / "o")
    assert code == 2 and len(text.strip().splitlines()) == 1 and message in text, text
    assert not (tmp_path / "o" / "seq.onnx").exists()


def test_a_model_name_in_the_local_hub_cache_gives_its_config(tmp_path):
    """--hf NAME finds the config a Hub download left in the cache (models--ORG--NAME/snapshots/REV,
    refs/main), offline; a fresh process so the cache location is read from the environment."""
    import json
    import os
    import subprocess
    import sys

    import yaml

    repo = tmp_path / "hub" / "models--someorg--tiny-llama"
    snap = repo / "snapshots" / "0123abcd"
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    (snap / "config.json").write_text(json.dumps({**yaml.safe_load(CONFIG), "hidden_size": 48}))
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    code = "from analyzer.export import hf_config as h; c = h('someorg/tiny-llama'); print(c.model_type, c.hidden_size)"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == ["llama", "48"], res.stdout


def test_hf_plan_words_of_qwen3_resolve_and_a_replicated_module_has_no_style():
    """Every word of Qwen3's own tp_plan resolves (its q_norm/k_norm are
    ``replicated_with_grad_allreduce``: left replicated, no style), and HF's row-parallel words
    name PyTorch's style (transformers/distributed/tensor_parallel.py, ALL_PARALLEL_STYLES)."""
    import transformers
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import RowwiseParallel

    from analyzer.export.plan import hf_plan, resolve_plan, style_of, style_text

    cfg = transformers.Qwen3Config(
        hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, vocab_size=64,
    )  # fmt: skip
    model = transformers.Qwen3ForCausalLM(cfg)
    own = hf_plan(model)
    assert own["model.layers.*.self_attn.q_norm"] == "replicated_with_grad_allreduce"
    styles = resolve_plan(own, model)
    assert "model.layers.0.self_attn.q_proj" in styles and "model.layers.0.mlp.down_proj" in styles
    assert not any(name.endswith(("q_norm", "k_norm")) for name in styles)
    assert style_of("replicated_with_grad_allreduce") is None and style_text("replicated_with_grad_allreduce") is None
    for word in ("rowwise_split_input", "rowwise_rep"):
        style = style_of(word)
        assert isinstance(style, RowwiseParallel) and style.input_layouts == (Replicate(),), word
        assert style_text(word) == "RowwiseParallel(input_layouts=Replicate())"


def test_an_all_reduce_with_max_is_exported_as_an_allreduce_with_reduction_max():
    """``all_reduce(x, "max", group)`` (Megatron-LM's vocab-parallel row max) becomes
    ``com.microsoft::AllReduce(reduction="max")``; sum stays sum, avg (DTensor's Partial("avg"))
    avg; another op is refused."""
    import torch
    import torch.distributed as dist
    from torch.distributed._functional_collectives import all_reduce
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.testing._internal.distributed.fake_pg import FakeStore

    from analyzer.export.collectives import collective_schemas
    from analyzer.export.pipeline import torch_export

    stack = contextlib.ExitStack()
    stack.enter_context(collective_schemas())  # registered for this test only
    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)
    try:
        group = dist.group.WORLD

        def row_max_then_sum(x):
            m = all_reduce(x.max(dim=-1, keepdim=True).values, "max", group)
            s = all_reduce(torch.exp(x - m).sum(dim=-1, keepdim=True), "sum", group)
            return all_reduce(s, "avg", group)  # DTensor's Partial("avg") -> Replicate()

        x = torch.randn(2, 4)
        proto = torch_export(make_fx(row_max_then_sum)(x), (x,), 2, input_names=("x",), output_names=("s",))
        proto = proto.model_proto
        got = [
            (n.op_type, onnx.helper.get_attribute_value(next(a for a in n.attribute if a.name == "reduction")))
            for n in proto.graph.node
            if n.domain == "com.microsoft"
        ]
        assert got == [("AllReduce", b"max"), ("AllReduce", b"sum"), ("AllReduce", b"avg")], got

        def product(x):
            return all_reduce(x, "product", group)

        with pytest.raises(Exception, match="reduce_op=product"):
            torch_export(make_fx(product)(x), (x,), 2, input_names=("x",), output_names=("s",))
    finally:
        dist.destroy_process_group()
        stack.close()


def test_in_place_collectives_trace_as_functional_ones_and_a_one_rank_group_as_nothing():
    """``functional_inplace_collectives``: ``torch.distributed.all_reduce(t, op=MAX)``,
    ``all_gather_into_tensor`` (also under another name bound in a module, as Megatron-core's
    mappings.py binds it) and ``reduce_scatter_tensor`` trace to ``_c10d_functional`` ops and
    export as AllReduce(max) / AllGather / ReduceScatter; without the block they trace to
    ``c10d`` ops on a process-group object; on a one-rank group they trace to no collective;
    everything swapped is put back."""
    import types

    import torch
    import torch.distributed as dist
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.testing._internal.distributed.fake_pg import FakeStore

    from analyzer.export.collectives import collective_schemas, functional_inplace_collectives
    from analyzer.export.pipeline import torch_export

    bound = types.ModuleType("bound")  # a module that bound the gather at import, like mappings.py
    bound.gather = dist.all_gather_into_tensor
    originals = (dist.all_reduce, dist.all_gather_into_tensor, dist.reduce_scatter_tensor, bound.gather)

    def program(x):
        m = x.max(dim=-1, keepdim=True).values.contiguous()
        dist.all_reduce(m, op=dist.ReduceOp.MAX)
        g = torch.empty(2 * x.shape[0], x.shape[1])
        bound.gather(g, x - m)
        s = torch.empty(x.shape[0] // 2, x.shape[1])
        dist.reduce_scatter_tensor(s, x)
        return g.sum(0) + s.sum(0)

    def ops(gm):
        return [str(n.target) for n in gm.graph.nodes if n.op == "call_function" and "c10d" in str(n.target)]

    x = torch.randn(4, 6)
    stack = contextlib.ExitStack()
    stack.enter_context(collective_schemas())
    if dist.is_initialized():
        dist.destroy_process_group()
    try:
        dist.init_process_group("fake", store=FakeStore(), rank=1, world_size=2)
        with functional_inplace_collectives(bound):
            gm = make_fx(program)(x)
        assert (dist.all_reduce, dist.all_gather_into_tensor, dist.reduce_scatter_tensor, bound.gather) == originals
        assert [o for o in ops(gm) if "wait" not in o] == [
            "_c10d_functional.all_reduce.default",
            "_c10d_functional.all_gather_into_tensor.default",
            "_c10d_functional.reduce_scatter_tensor.default",
        ]
        proto = torch_export(gm, (x,), 2, input_names=("x",), output_names=("y",)).model_proto
        got = [(n.op_type, {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute})
               for n in proto.graph.node if n.domain == "com.microsoft"]  # fmt: skip
        assert [(op, a.get("reduction")) for op, a in got] == [
            ("AllReduce", b"max"), ("AllGather", None), ("ReduceScatter", b"sum")]
        assert all(a["group_size"] == 2 for _, a in got)
        assert any("c10d.allreduce_" in o for o in ops(make_fx(program)(x)))  # without the block
        dist.destroy_process_group()

        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=1)

        def one_rank(x):
            dist.all_reduce(x, op=dist.ReduceOp.MAX)
            return x * 2

        with functional_inplace_collectives():
            assert ops(make_fx(one_rank)(x)) == []
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
        stack.close()
