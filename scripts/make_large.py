#!/usr/bin/env python
"""Produce weight-free ONNX graphs of full-size Llama models, sequential and tensor-parallel.

``make_large.py`` runs the pipeline of ``export_hf_tp.py`` (unmodified
``transformers.LlamaForCausalLM``, PyTorch's ``parallelize_module`` with the
model's ``base_model_tp_plan``, the ``fake`` c10d backend, ``make_fx``,
``torch.onnx.export(dynamo=True)`` with ``com.microsoft`` collectives, the same
onnxscript optimisation and metadata trimming) on the configs of real Llama 3
models, without ever materialising a weight:

* the model is built under ``torch.device("meta")`` (shapes and dtypes only, no
  storage), parallelised on the meta device (``src_data_rank=None``: each rank
  slices its meta shard locally), traced with ``make_fx`` on a meta
  ``input_ids`` and exported; the meta tensors the exporter sees as
  initializers are turned into **named graph inputs** (module paths, e.g.
  ``model.layers.97.mlp.down_proj.weight``, with the local shard shape on the
  ranks) before anything is serialised, so each file holds only the graph,
  its ``value_info`` and node metadata;
* the only tensor with data is ``model.rotary_emb.inv_freq`` (head_dim/2
  floats), computed on CPU from the config by HF's own rotary init (it stays an
  initializer, as in the small exports), plus the constants the optimizer folds
  (causal mask, shape tensors);
* the full depth is traced (no layer replication): every decoder layer is real
  traced model code with its own scopes and source lines.

The result equals ``export_hf_tp.py``'s for the same config: with ``--preset small2
--seq-len 8 --world-size 2 --check-against examples/llama_tp2`` the op sequences are
identical (and so are node inputs/outputs, attributes, metadata and value_info; feeding the
example's weights as inputs gives bit-identical logits in onnxruntime).

Speed: the onnxscript rewriter matches multi-output patterns in O(nodes^2); a
result-preserving early exit (``fast_multi_output_matching``) makes it linear.  Measured on
2 shared cores: llama3_8b ~30-60 s per graph (2.2k nodes, 1.8 MB), llama31_405b ~130 s per
graph (8.6k nodes, 7.2 MB; ``--stack-frames 1`` roughly halves the size).

``--bug-layer K`` applies ``export_hf_tp.py``'s ``missing_allreduce`` bug to
``model.layers.K.mlp.down_proj`` (``RowwiseParallel(output_layouts=Partial())``:
the row-parallel partial sum is never all-reduced).

Usage::

    python scripts/make_large.py --preset llama3_8b --world-size 8 --out /tmp/large/llama3_8b_tp8
    python scripts/make_large.py --preset llama31_405b --world-size 8 --out /tmp/large/llama31_405b_tp8
    python scripts/make_large.py --preset tiny --world-size 2 --bug-layer 1 --out /tmp/large/tiny_bug
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_hf_tp as E  # noqa: E402

SEQ_LEN = 16

_LLAMA3 = dict(vocab=128256, kv_heads=8, rope_theta=500000.0, rms_norm_eps=1e-5, max_pos=8192)
PRESETS = {
    # meta-llama/Meta-Llama-3-8B
    "llama3_8b": dict(_LLAMA3, layers=32, hidden=4096, heads=32, intermediate=14336),
    # meta-llama/Meta-Llama-3-70B
    "llama3_70b": dict(_LLAMA3, layers=80, hidden=8192, heads=64, intermediate=28672),
    # meta-llama/Llama-3.1-405B (llama3 rope scaling, 128k context)
    "llama31_405b": dict(
        _LLAMA3, layers=126, hidden=16384, heads=128, intermediate=53248, max_pos=131072,
        rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                          original_max_position_embeddings=8192),
    ),
    # small, for tests: GQA (16 q heads, 8 kv heads) so that world sizes 2, 4, 8 divide every sharded dim
    "tiny": dict(layers=3, hidden=128, heads=16, kv_heads=8, intermediate=256, vocab=256,
                 rope_theta=500000.0, rms_norm_eps=1e-5, max_pos=64),
    # the config of examples/llama_tp2 (export_hf_tp.py defaults): use with --seq-len 8 --check-against
    "small2": dict(layers=2, hidden=64, heads=4, kv_heads=2, intermediate=128, vocab=128,
                   rope_theta=10000.0, rms_norm_eps=1e-6, max_pos=64),
}


# ---------------------------------------------------------------------------
# model on the meta device
# ---------------------------------------------------------------------------
def make_config(p):
    import transformers

    kw = dict(
        hidden_size=p["hidden"],
        intermediate_size=p["intermediate"],
        num_hidden_layers=p["layers"],
        num_attention_heads=p["heads"],
        num_key_value_heads=p["kv_heads"],
        vocab_size=p["vocab"],
        max_position_embeddings=p["max_pos"],
        rms_norm_eps=p["rms_norm_eps"],
        rope_theta=p["rope_theta"],
        tie_word_embeddings=False,
        use_cache=False,
        mlp_bias=False,
        attention_bias=False,
    )
    if p.get("rope_scaling"):
        kw["rope_scaling"] = dict(p["rope_scaling"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = transformers.LlamaConfig(**kw)
    cfg._attn_implementation = "eager"
    return cfg


def meta_model(cfg):
    import torch
    import transformers

    with torch.device("meta"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = transformers.LlamaForCausalLM(cfg).eval()
    for prm in model.parameters():
        prm.requires_grad_(False)
    return model


def real_inv_freq(cfg):
    """inv_freq computed on CPU by HF's own rotary init for this config (the only real tensor)."""
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    return LlamaRotaryEmbedding(cfg).inv_freq.detach().float().numpy()


def constant_names(gm, model):
    """Map the GraphModule's get_attr constants to parameter / buffer names (by identity: meta has no data_ptr)."""
    from torch.distributed.tensor import DTensor

    by_id = {}
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        by_id.setdefault(id(t), name)
        if isinstance(t, DTensor):
            by_id.setdefault(id(t._local_tensor), name)
            by_id.setdefault(id(t.to_local()), name)
    mapping = {}
    for node in gm.graph.nodes:
        if node.op != "get_attr":
            continue
        t = getattr(gm, node.target)
        name = by_id.get(id(t))
        if name is None:
            raise RuntimeError(f"cannot map traced constant {node.target} {tuple(t.shape)} to a parameter")
        mapping[node.target] = name
    return mapping


# ---------------------------------------------------------------------------
# onnxscript rewriter: skip hopeless multi-output matches early (same result, linear time)
# ---------------------------------------------------------------------------
@contextlib.contextmanager
def fast_multi_output_matching():
    """Make the onnxscript rewriter's multi-output pattern matching linear instead of quadratic.

    ``SimplePatternMatcher.match`` for a pattern with several output nodes first builds an
    op-type index of the *whole graph* and only then tries the combinations whose first element
    is the candidate node, for every candidate node: O(nodes^2) (minutes per graph at 126
    layers).  Every combination starts with ``_match_node(pattern.output_nodes[0], node)`` on a
    fresh match, which begins with ``output_nodes[0].matches(node, ...)``; when that check
    fails no combination can match, so we return the failure before indexing the graph.  The
    rewrites applied are exactly the same (checked by ``--check-against``).
    """
    from onnxscript.rewriter import _basics, _matcher

    cls = _matcher.SimplePatternMatcher
    orig = cls.match

    def match(self, model, graph_or_function, node, *, verbose=0, remove_nodes=True, tracer=None):
        if not self.pattern.has_single_output_node:
            first = self.pattern.output_nodes[0]
            probe = _basics.MatchResult()
            if not first.matches(node, probe):
                return probe.fail(probe.reason or "first output node does not match")
        return orig(self, model, graph_or_function, node, verbose=verbose, remove_nodes=remove_nodes,
                    tracer=tracer)

    cls.match = match
    try:
        yield
    finally:
        cls.match = orig


# ---------------------------------------------------------------------------
# export: meta initializers -> named graph inputs, then export_hf_tp's post-processing
# ---------------------------------------------------------------------------
def export_weightless(gm, ids, names, *, rank, world_size, meta, real_consts):
    """torch.onnx.export the traced graph; weights become graph inputs (never serialised)."""
    import numpy as np
    import onnx
    import onnx_ir as ir
    import onnxscript

    prog = E.torch_export(gm, (ids,), world_size)
    model = prog.model
    g = model.graph
    weights = []
    for old in list(g.initializers):
        v = g.initializers.pop(old)
        new = names.get(old, old)
        v.name = new
        if old not in names:
            raise RuntimeError(f"unexpected exporter initializer {old}")
        t = v.const_value
        v.dtype = t.dtype
        v.shape = ir.Shape(list(t.shape))
        v.const_value = None
        weights.append(v)
    order = {n: i for i, n in enumerate(meta.pop("_weight_order"))}
    weights.sort(key=lambda v: order.get(v.name, len(order)))
    g.inputs.extend(weights)
    proto = ir.serde.serialize_model(model)
    del prog, model
    # like export_hf_tp._optimize_keeping_weights: every weight and buffer (also inv_freq) is a graph
    # input while the optimizer runs, so nothing derived from it is constant-folded
    with fast_multi_output_matching():
        proto = onnxscript.optimizer.optimize(proto)
    g = proto.graph
    # buffers whose value we know (inv_freq, head_dim/2 floats) become initializers again
    for name, value in real_consts.items():
        idx = [i for i, x in enumerate(g.input) if x.name == name]
        if not idx:
            continue
        del g.input[idx[0]]
        rest = list(g.initializer)
        del g.initializer[:]
        g.initializer.extend([onnx.numpy_helper.from_array(np.asarray(value, dtype=np.float32), name)] + rest)
    weights = [v for v in weights if v.name not in real_consts]
    known = {v.name for v in list(g.value_info) + list(g.output) + list(g.input)}
    if any(o and o not in known for n in g.node for o in n.output):
        proto = onnx.shape_inference.infer_shapes(proto)
    inputs = {i.name for i in proto.graph.input}
    lost = [v.name for v in weights if v.name not in inputs]
    if lost:
        raise RuntimeError(f"weights lost during optimisation: {lost}")
    big = [t.name for t in proto.graph.initializer if np.prod(t.dims) > 1 << 16]
    if big:
        raise RuntimeError(f"large initializers left: {big}")
    return E.finish_model(proto, rank, world_size, meta)


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------
def plan_args(world_size, bug_layer):
    """The argparse namespace export_hf_tp.tp_plan expects (missing_allreduce bug in layer K)."""
    a = argparse.Namespace(world_size=world_size, bug=None, bug_module=None)
    if bug_layer is not None:
        a.bug = "missing_allreduce"
        a.bug_module = f"model.layers.{bug_layer}.mlp.down_proj"
    return a


def produce(args, command):
    import onnx
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.tensor.parallel import parallelize_module
    from torch.testing._internal.distributed.fake_pg import FakeStore

    E.register_collective_schemas()
    E._OPTS["stack_frames"] = args.stack_frames
    p = PRESETS[args.preset]
    n = args.world_size
    if args.bug_layer is not None and not 0 <= args.bug_layer < p["layers"]:
        raise SystemExit(f"--bug-layer {args.bug_layer}: {args.preset} has layers 0..{p['layers'] - 1}")
    for dim, what in ((p["heads"], "heads"), (p["kv_heads"], "kv heads"), (p["intermediate"], "intermediate"),
                      (p["vocab"], "vocab"), (p["hidden"], "hidden")):
        if dim % n:
            raise SystemExit(f"world size {n} does not divide {what} ({dim}) of {args.preset}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rank*.onnx"):
        old.unlink()

    cfg = make_config(p)
    real_consts = {"model.rotary_emb.inv_freq": real_inv_freq(cfg)}
    ids = torch.zeros((1, args.seq_len), dtype=torch.int64, device="meta")
    case = out.name
    bug = None if args.bug_layer is None else E.BUGS["missing_allreduce"].format(
        m=f"model.layers.{args.bug_layer}.mlp.down_proj")
    meta = {"model": "LlamaForCausalLM", "case": case, "preset": args.preset, "weights": "graph inputs (no data)"}
    if bug:
        meta["bug"] = bug
    stats = {}

    def one(label, model, rank):
        t0 = time.time()
        gm = E.trace(model, ids)
        t1 = time.time()
        names = constant_names(gm, model)
        order = [k for k, _ in model.named_parameters()]
        doc = (f"LlamaForCausalLM ({args.preset}) sequential, weights as graph inputs" if rank < 0 else
               f"LlamaForCausalLM ({args.preset}) tensor-parallel rank {rank}/{n}, weights as graph inputs")
        proto = export_weightless(gm, ids, names, rank=rank, world_size=1 if rank < 0 else n,
                                  meta={**meta, "doc": doc, "_weight_order": order}, real_consts=real_consts)
        del gm
        path = out / f"{label}.onnx"
        onnx.save(proto, path)
        t2 = time.time()
        stats[label] = dict(nodes=len(proto.graph.node), bytes=path.stat().st_size,
                            trace_s=round(t1 - t0, 1), export_s=round(t2 - t1, 1))
        print(f"  {label}: {len(proto.graph.node)} nodes, {path.stat().st_size / 1e6:.2f} MB, "
              f"trace {t1 - t0:.1f}s export+optimize {t2 - t1:.1f}s", flush=True)
        return proto

    if dist.is_initialized():
        dist.destroy_process_group()
    t_all = time.time()
    protos = {}
    if not args.ranks_only:
        protos["seq"] = one("seq", meta_model(cfg), -1)
    plan_desc = None
    for r in range(n):
        dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=n)
        try:
            mesh = DeviceMesh("cpu", list(range(n)))
            model = meta_model(cfg)
            plan, plan_desc = E.tp_plan(plan_args(n, args.bug_layer), cfg, mesh)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parallelize_module(model, mesh, plan, src_data_rank=None)
            protos[f"rank{r}"] = one(f"rank{r}", model, r)
            del model
        finally:
            dist.destroy_process_group()
    total = time.time() - t_all
    bug_module = None if bug is None else f"model.layers.{args.bug_layer}.mlp.down_proj"

    data = {
        "model": {
            "hf_class": "LlamaForCausalLM",
            "preset": args.preset,
            "config": {k: v for k, v in p.items()},
            "input": {"name": "input_ids", "shape": [1, args.seq_len], "dtype": "int64"},
            "output": {"name": "logits", "shape": [1, args.seq_len, p["vocab"]], "dtype": "float32"},
            "weights": "graph inputs named by module path (rank files: local shard shape); no data",
        },
        "world_size": n,
        "expected": "discrepancy" if bug else "verified",
        "bug": bug,
        "bug_module": bug_module,
        "bug_layer": args.bug_layer,
        "tp_plan": "export_hf_tp.tp_plan (base_model_tp_plan + ColwiseParallel(output_layouts=Replicate()) "
                   "for model.embed_tokens and lm_head)"
                   + (f"; {bug_module}: {plan_desc.get(bug_module)}" if bug else ""),
        "files": {"seq": None if args.ranks_only else "seq.onnx", "ranks": [f"rank{r}.onnx" for r in range(n)]},
        "stats": stats,
        "seconds": round(total, 1),
        "produced_by": command,
    }
    E.write_yaml(out / "case.yaml", data)
    size = sum(f.stat().st_size for f in out.glob("*.onnx"))
    print(f"  wrote {out} ({size / 1e6:.1f} MB in {len(stats)} files, {total:.0f} s)", flush=True)
    return protos, data


def op_sequence(proto):
    return [(n.domain + "::" if n.domain else "") + n.op_type for n in proto.graph.node]


def check_against(protos, ref_dir):
    """Compare op sequences with an export of export_hf_tp.py (same config, same seq len)."""
    import onnx

    bad = []
    for label, proto in protos.items():
        ref = onnx.load(Path(ref_dir) / f"{label}.onnx", load_external_data=False)
        a, b = op_sequence(proto), op_sequence(ref)
        if a != b:
            bad.append(f"{label}: {len(a)} nodes vs {len(b)} in {ref_dir}: "
                       f"{Counter(a) - Counter(b)} / {Counter(b) - Counter(a)}")
        else:
            print(f"  {label}: op sequence identical to {ref_dir}/{label}.onnx ({len(a)} nodes)")
    if bad:
        raise SystemExit("op sequence differs:\n  " + "\n  ".join(bad))


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), required=True)
    p.add_argument("--world-size", type=int, default=8)
    p.add_argument("--out", required=True, help="output folder (seq.onnx, rank*.onnx, case.yaml)")
    p.add_argument("--bug-layer", type=int, default=None,
                   help="layer K whose row-parallel mlp.down_proj misses its all-reduce")
    p.add_argument("--seq-len", type=int, default=SEQ_LEN, help="static input_ids length (default 16)")
    p.add_argument("--stack-frames", type=int, default=3)
    p.add_argument("--ranks-only", action="store_true", help="skip seq.onnx (e.g. a bug variant of an existing case)")
    p.add_argument("--check-against", default=None,
                   help="folder of an export_hf_tp.py export of the same config: op sequences must be identical")
    return p.parse_args(argv)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("TORCH_LOGS", "-all")
    args = parse(argv)
    if Path(args.out).resolve().is_relative_to(E.REPO / "examples"):
        raise SystemExit("make_large.py never writes into examples/")
    print(f"== {args.preset} world_size={args.world_size} bug_layer={args.bug_layer} -> {args.out}", flush=True)
    protos, _ = produce(args, "python scripts/make_large.py " + shlex.join(argv))
    if args.check_against:
        check_against(protos, args.check_against)


if __name__ == "__main__":
    main()
