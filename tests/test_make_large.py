"""Tests for scripts/make_large.py (weight-free exports of full-size Llama configs).

The script is run on the ``tiny`` preset (3 layers, world size 2), once correct and once with
``--bug-layer 1 --ranks-only`` (the bug case reuses the correct case's ``seq.onnx``), into a
temporary folder.  The checks:

* the files exist and are small; the weights are named graph inputs (module paths; the local
  shard shape on the ranks), no large initializer is left;
* the per-decoder-layer op histograms equal those of the real small export
  ``examples/llama_tp2`` (layer 0 holds the cos/sin ``Unsqueeze`` shared by all layers, so it
  is compared with layer 0 there, every other layer with layer 1);
* node scopes name ``model.layers.<k>`` for every layer;
* the bug variant drops exactly one ``AllReduce`` per rank, in layer 1's ``mlp.down_proj``, and
  the checker reports a discrepancy in ``model.layers.1``.

Skipped (with the reason) when torch, transformers or onnxscript are not importable.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "make_large.py"
REF = REPO / "examples" / "llama_tp2"
LAYERS = 3  # tiny preset
BUG_LAYER = 1

_missing = [m for m in ("torch", "transformers", "onnxscript") if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(
    bool(_missing),
    reason=f"make_large.py needs the 'export' extra (torch==2.13.0, transformers, onnxscript); missing: {_missing}",
)


def _produce(folder: Path, *extra: str) -> Path:
    cmd = [sys.executable, str(SCRIPT), "--preset", "tiny", "--world-size", "2", "--out", str(folder), *extra]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr[-4000:]
    return folder


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    base = tmp_path_factory.mktemp("large")
    return {
        "ok": _produce(base / "tiny_tp2"),
        # seq.onnx does not depend on the TP plan: --ranks-only saves one export (the test's time)
        "bug": _produce(base / "tiny_tp2_bug", "--bug-layer", str(BUG_LAYER), "--ranks-only"),
    }


def _load(path: Path):
    import onnx

    return onnx.load(str(path), load_external_data=False)


def _scopes(node) -> list[str]:
    for m in node.metadata_props:
        if m.key == "pkg.torch.onnx.name_scopes":
            return ast.literal_eval(m.value)
    return []


def _layer(node) -> str:
    """The decoder layer scope ('model.layers.K') of a node, else 'other'."""
    return next((s for s in _scopes(node) if s.startswith("model.layers.") and s.count(".") == 2), "other")


def _layer_histograms(proto) -> dict[str, Counter]:
    h: dict[str, Counter] = defaultdict(Counter)
    for n in proto.graph.node:
        h[_layer(n)][(n.domain + "::" if n.domain else "") + n.op_type] += 1
    return h


def _param_names(layers: int) -> list[str]:
    per_layer = ["input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                 "self_attn.o_proj", "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"]
    names = ["model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"]
    names += [f"model.layers.{k}.{m}.weight" for k in range(layers) for m in per_layer]
    return names


def _shapes(vis) -> dict[str, list[int]]:
    return {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in vis}


def test_files_exist_and_are_small(cases):
    for folder in cases.values():
        for f in ("rank0.onnx", "rank1.onnx", "case.yaml"):
            assert (folder / f).is_file(), folder / f
        assert (folder / "seq.onnx").is_file() == (folder == cases["ok"])
        assert not (folder / "rank2.onnx").exists()
        for f in folder.glob("*.onnx"):
            assert f.stat().st_size < 1_000_000, (f, f.stat().st_size)
        assert not list(folder.glob("*.data")), "no external data file may be written"


def test_weights_are_graph_inputs(cases):
    import numpy as np

    folder = cases["ok"]
    seq = _load(folder / "seq.onnx")
    seq_in = _shapes(seq.graph.input)
    names = _param_names(LAYERS)
    assert list(seq_in)[0] == "input_ids" and seq_in["input_ids"] == [1, 16]
    assert set(names) <= set(seq_in), set(names) - set(seq_in)
    assert seq_in["model.layers.2.mlp.down_proj.weight"] == [128, 256]
    for proto in [seq] + [_load(folder / f"rank{r}.onnx") for r in range(2)]:
        # only folded constants and the RoPE inv_freq keep data, all of them tiny
        for t in proto.graph.initializer:
            assert int(np.prod(t.dims)) <= 4096, (t.name, list(t.dims))
            assert not t.name.endswith(".weight"), t.name
        assert "model.rotary_emb.inv_freq" in {t.name for t in proto.graph.initializer}
        assert [o.name for o in proto.graph.output] == ["logits"]
    for r in range(2):
        rank_in = _shapes(_load(folder / f"rank{r}.onnx").graph.input)
        assert set(rank_in) == set(seq_in)
        for name in names:
            full, local = seq_in[name], rank_in[name]
            diff = [a for a in range(len(full)) if full[a] != local[a]]
            if "norm" in name:
                assert diff == [], name  # replicated
            else:  # sharded on exactly one axis by the world size
                assert len(diff) == 1 and full[diff[0]] == 2 * local[diff[0]], (name, full, local)
        assert rank_in["model.layers.0.mlp.down_proj.weight"] == [128, 128]  # row-parallel: Shard(1)
        assert rank_in["model.layers.0.mlp.up_proj.weight"] == [128, 128]  # col-parallel: Shard(0)


@pytest.mark.parametrize("label", ["seq", "rank0", "rank1"])
def test_per_layer_ops_match_real_small_export(cases, label):
    ref = _layer_histograms(_load(REF / f"{label}.onnx"))
    got = _layer_histograms(_load(cases["ok"] / f"{label}.onnx"))
    assert set(got) == {"other"} | {f"model.layers.{k}" for k in range(LAYERS)}
    assert got["model.layers.0"] == ref["model.layers.0"]
    for k in range(1, LAYERS):
        assert got[f"model.layers.{k}"] == ref["model.layers.1"], k
    assert got["other"] == ref["other"]


def test_scopes_and_source_lines(cases):
    proto = _load(cases["ok"] / "rank0.onnx")
    seen = set()
    for n in proto.graph.node:
        keys = {m.key: m.value for m in n.metadata_props}
        assert "pkg.torch.onnx.name_scopes" in keys, n.name
        assert "pkg.torch.onnx.stack_trace" in keys, n.name
        seen.add(_layer(n))
    assert {f"model.layers.{k}" for k in range(LAYERS)} <= seen
    ar = [n for n in proto.graph.node if n.domain == "com.microsoft" and n.op_type == "AllReduce"]
    down = [n for n in ar if f"model.layers.{LAYERS - 1}.mlp.down_proj" in _scopes(n)]
    assert len(ar) == 2 * LAYERS and len(down) == 1
    assert "modeling_llama.py" in {m.key: m.value for m in down[0].metadata_props}["pkg.torch.onnx.stack_trace"]


def test_bug_layer_drops_one_allreduce(cases):
    for r in range(2):
        ok = _layer_histograms(_load(cases["ok"] / f"rank{r}.onnx"))
        bug = _layer_histograms(_load(cases["bug"] / f"rank{r}.onnx"))
        for key in ok:
            diff = ok[key] - bug[key]
            if key == f"model.layers.{BUG_LAYER}":
                assert diff == Counter({"com.microsoft::AllReduce": 1}), diff
                assert bug[key] - ok[key] == Counter()
            else:
                assert ok[key] == bug[key], key
        proto = _load(cases["bug"] / f"rank{r}.onnx")
        assert not any(n.op_type == "AllReduce" and f"model.layers.{BUG_LAYER}.mlp.down_proj" in _scopes(n)
                       for n in proto.graph.node)


def test_checker_on_tiny(cases):
    from analyzer import check

    ok = cases["ok"]
    res = check(str(ok / "seq.onnx"), [str(ok / f"rank{r}.onnx") for r in range(2)])
    assert res.verdict == "verified"
    bug = cases["bug"]
    res = check(str(ok / "seq.onnx"), [str(bug / f"rank{r}.onnx") for r in range(2)])
    assert res.verdict == "discrepancy"
    first = res.verdict_.discrepancies[0]
    where = f"{first.scope} {first.origin_scope}"
    assert f"model.layers.{BUG_LAYER}." in where, (first.kind, first.node, first.scope, first.origin_scope)


@pytest.mark.parametrize("label", ["ok", "bug"])
def test_shared_rank_model_gives_the_report_of_parsing_each_file(cases, label, monkeypatch):
    """The rank files hold byte-identical graphs (weights are inputs of the local shape) and
    differ in ``shardlog.rank``: rank 1's graph is not parsed again, and the check gives what
    parsing every file gives."""
    from analyzer import check
    from analyzer.facts.extract import GraphKey
    from analyzer.inputs.load import load_inputs
    from analyzer.reports.text import to_json

    seq, ranks = str(cases["ok"] / "seq.onnx"), [str(cases[label] / f"rank{r}.onnx") for r in range(2)]
    inp = load_inputs(seq, ranks)
    assert inp.ranks[1] is inp.ranks[0] and [m["shardlog.rank"] for m in inp.rank_metadata] == ["0", "1"]
    fast = check(seq, ranks)
    monkeypatch.setattr(GraphKey, "header", lambda self: object())  # no two files share a model
    assert load_inputs(seq, ranks).ranks[1] is not load_inputs(seq, ranks).ranks[0]
    slow = check(seq, ranks)
    assert fast.derivation.derived == slow.derivation.derived
    assert fast.verdict == slow.verdict == ("verified" if label == "ok" else "discrepancy")
    strip = ("seconds", "timings")
    assert {k: v for k, v in to_json(fast).items() if k not in strip} == {
        k: v for k, v in to_json(slow).items() if k not in strip
    }
