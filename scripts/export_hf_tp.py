#!/usr/bin/env python
"""Export a small Hugging Face causal LM sequentially and tensor-parallel to ONNX.

This is the *producer* of shardlog's example cases.  It takes UNMODIFIED model
code from ``transformers`` (``LlamaForCausalLM``, ``Qwen2ForCausalLM``,
``MistralForCausalLM``, ``Gemma2ForCausalLM``), builds a tiny model from a small config with random
(seeded) weights, and writes

* ``seq.onnx``               - the sequential model, and
* ``rank0.onnx`` ... ``rank{N-1}.onnx`` - what rank r of an N-way tensor-parallel
  implementation executes,

plus a ``case.yaml`` describing the case.

Method
------
1. The model is built once with a fixed seed; its ``state_dict`` is the single
   source of truth.  Every graph below starts from a fresh model that loads
   this exact state_dict, so rank r holds exactly chunk r of every sharded
   weight.
2. Tensor parallelism is applied with PyTorch's own API,
   ``torch.distributed.tensor.parallel.parallelize_module``, using the model's
   ``base_model_tp_plan`` (``colwise`` -> ``ColwiseParallel()``, ``rowwise`` ->
   ``RowwiseParallel()``) plus ``ColwiseParallel(output_layouts=Replicate())``
   for ``model.embed_tokens`` (embedding dim sharded, then all-gather) and for
   ``lm_head`` (vocab sharded, then all-gather of the logits).
   ``src_data_rank=None`` makes every rank slice its chunk from the (identical)
   local full weight instead of receiving it from rank 0.
3. Each rank is traced in this single process with the ``fake`` c10d backend
   (``FakeStore``; one init/destroy per rank).  ``make_fx`` traces *below*
   DTensor: the result is local ATen ops on local shards plus explicit
   ``torch.ops._c10d_functional`` collectives (``all_reduce``,
   ``all_gather_into_tensor``, ``wait_tensor``, ...).  ``record_module_stack``
   (enabled by giving the traced function an ``_orig_mod`` attribute) and
   ``record_stack_traces`` keep the HF module path and the source line of
   every node.  HF's mask code is told it is being traced
   (``transformers.masking_utils.is_tracing`` -> True) so it does not branch on
   data.
4. The traced ``GraphModule`` goes through ``torch.onnx.export(dynamo=True)``
   with a ``custom_translation_table`` mapping the collectives to ONNX Runtime
   contrib ops: ``com.microsoft::AllReduce(group_size=N, reduction="sum")``,
   ``com.microsoft::AllGather(group_size=N, axis=0)``,
   ``com.microsoft::ReduceScatter(group_size=N, reduction="sum", axis=0)``;
   ``wait_tensor`` becomes ``Identity`` (removed by the optimizer).  Schemas for
   those contrib ops are registered in-process so the ONNX tooling accepts them.
   The sequential model goes through exactly the same pipeline (make_fx then
   export, no process group, no parallelize), so both sides decompose
   identically.
5. Post-processing: initializers are renamed to their module path
   (``model.layers.0.mlp.down_proj.weight``; rank files hold the local shard
   under the same name); the onnxscript optimizer then removes the exporter's
   shape-computation noise while the weights are temporarily turned into
   graph inputs so that they cannot be constant-folded into anonymous
   tensors (e.g. a pre-transposed weight).  Node metadata is kept, slimmed:
   ``pkg.torch.onnx.name_scopes`` (module path), ``pkg.torch.onnx.stack_trace``
   (the innermost ``--stack-frames`` frames, site-packages prefix stripped) and
   ``namespace`` (module classes, short names); ``class_hierarchy`` and
   ``fx_node`` are dropped to keep the files small.  Nodes the optimizer creates
   (e.g. ``Split``) inherit the metadata of their producer.
6. Verification (always on unless ``--no-verify``): the sequential ONNX model
   is run with onnxruntime and compared with PyTorch's logits; the rank files
   are run together by a small private simulator (``onnx.reference`` with
   thread-rendezvous implementations of the ``com.microsoft`` collectives) and
   every rank's logits are compared with the sequential logits.  The measured
   error goes into ``case.yaml``.  A correct case must match to ~1e-5; a bug
   case must differ (exit code 1 otherwise).

Bug variants (``--bug NAME``) are realistic one-line changes of the TP plan:

* ``missing_allreduce``: one layer's ``mlp.down_proj`` is planned as
  ``RowwiseParallel(output_layouts=Partial())`` instead of ``RowwiseParallel()``,
  so its partial sum is never all-reduced.
* ``bias_every_rank``: with ``mlp_bias=True``, one layer's row-parallel
  ``mlp.down_proj`` marks its (full, per-rank) bias as ``Partial()`` instead of
  ``Replicate()``: every rank adds the full bias before the all-reduce, so the
  bias is counted N times.
* ``shard_order``: ``lm_head``'s all-gather of the vocab-sharded logits
  concatenates the gathered chunks in reversed rank order.

Other parallel forms (``--form sp``: sequence parallel; ``--form vocab``: vocab parallel)
and their bug variants are in ``tp_forms.py``.

Usage::

    python scripts/export_hf_tp.py --case llama_tp2            # one preset
    python scripts/export_hf_tp.py --all                       # every preset
    python scripts/export_hf_tp.py --model llama --world-size 2 \\
        --bug missing_allreduce --out /tmp/x                   # free form
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import threading
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # the analyzer package of this checkout
import mesh_export  # noqa: E402  (TP x DP meshes: --mesh dp=2,tp=2)
import tp_forms  # noqa: E402  (sequence / vocab parallel plans and their bug variants)

# the export pipeline lives in the package (shardlog export); this producer calls it
from analyzer.export.collectives import (  # noqa: E402, F401
    _MESH_GROUPS,
    _WORLD,
    MSFT,
    register_collective_schemas,
    reset_dtensor_caches,
    translation_table,
)
from analyzer.export.pipeline import (  # noqa: E402, F401
    _OPTS,
    OPSET,
    _optimize_keeping_weights,
    _rename_values,
    _trim_metadata,
    constant_names,
    export_onnx,
    finish_model,
    hf_tracing_patches,
    torch_export,
    trace,
)
from analyzer.export.plan import style_of, style_text  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SEQ_LEN = 8
_OPTS["source_root"] = str(REPO)  # frames of this checkout's files are recorded relative to it

# ---------------------------------------------------------------------------
# presets
# ---------------------------------------------------------------------------
BUGS = {
    "missing_allreduce": "row-parallel {m} keeps its partial sum local: planned as "
    "RowwiseParallel(output_layouts=Partial()) instead of RowwiseParallel(), so its all-reduce is missing",
    "bias_every_rank": "row-parallel {m} (mlp_bias=True) marks its bias Partial() instead of Replicate(): "
    "every rank adds the full bias before the all-reduce, so the bias is summed world_size times",
    "shard_order": "{m} all-gathers its vocab-sharded logits and concatenates the gathered chunks "
    "in reversed rank order (torch.cat(chunks[::-1], -1) instead of torch.cat(chunks, -1))",
    **tp_forms.BUGS,
    mesh_export.BUG: mesh_export.BUG_TEXT,
}
DEFAULT_BUG_MODULE = {
    "missing_allreduce": "model.layers.1.mlp.down_proj",
    "bias_every_rank": "model.layers.0.mlp.down_proj",
    "shard_order": "lm_head",
    **tp_forms.DEFAULT_BUG_MODULE,
    mesh_export.BUG: mesh_export.DEFAULT_BUG_MODULE,
}

_SMALL = dict(hidden=32, intermediate=64, vocab=64, heads=4, kv_heads=4)
PRESETS = {
    "llama_tp2": dict(model="llama", world_size=2),
    "llama_tp2_bug_missing_allreduce": dict(model="llama", world_size=2, bug="missing_allreduce"),
    "llama_tp2_bug_bias_every_rank": dict(model="llama", world_size=2, bug="bias_every_rank"),
    "llama_tp2_bug_shard_order": dict(model="llama", world_size=2, bug="shard_order"),
    # secondary cases use a smaller config to keep examples/ small
    "llama_tp4": dict(model="llama", world_size=4, **_SMALL),
    "llama_tp4_bug_missing_allreduce": dict(model="llama", world_size=4, bug="missing_allreduce", **_SMALL),
    "qwen2_tp2": dict(model="qwen2", world_size=2, **{**_SMALL, "kv_heads": 2}),
    "mistral_tp2": dict(model="mistral", world_size=2, **{**_SMALL, "kv_heads": 2, "seed": 1}),
    "qwen2_tp2_bug_missing_allreduce": dict(
        model="qwen2", world_size=2, bug="missing_allreduce", **{**_SMALL, "kv_heads": 2}
    ),
    "mistral_tp2_bug_shard_order": dict(
        model="mistral", world_size=2, bug="shard_order", **{**_SMALL, "kv_heads": 2, "seed": 1}
    ),
    # parallel forms beyond base_model_tp_plan (scripts/tp_forms.py) and their bug corpus
    **tp_forms.PRESETS,
    # a TP x DP mesh (scripts/mesh_export.py): batch split over dp, parallelize_module on mesh["tp"]
    "llama_tp2_dp2": dict(model="llama", mesh="dp=2,tp=2", batch=2, **_SMALL),
    "llama_tp2_dp2_bug_wrong_group_allreduce": dict(
        model="llama", mesh="dp=2,tp=2", batch=2, bug=mesh_export.BUG, **_SMALL
    ),
}

FAMILIES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
    "mistral": ("MistralConfig", "MistralForCausalLM"),
    # sandwich norms: post_attention_layernorm / post_feedforward_layernorm normalize the
    # attention / MLP output before the residual add
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM"),
}


# ---------------------------------------------------------------------------
# model
# ---------------------------------------------------------------------------
def make_config(args):
    import transformers

    cfg_cls = getattr(transformers, FAMILIES[args.model][0])
    kw = dict(
        hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        vocab_size=args.vocab,
        max_position_embeddings=64,
        initializer_range=args.init_range,
        tie_word_embeddings=False,
        use_cache=False,
    )
    if args.model == "llama":
        # a row-parallel bias: the bug's DTensor form, or scripts/export_tp_idioms.py's vLLM form
        kw["mlp_bias"] = args.bug == "bias_every_rank" or getattr(args, "mlp_bias", False)
    elif args.bug == "bias_every_rank":
        raise SystemExit("--bug bias_every_rank needs --model llama (mlp_bias)")
    if args.model == "gemma2":  # Gemma2's defaults are for head_dim 256 and 4096-token windows
        kw.update(head_dim=args.hidden // args.heads, query_pre_attn_scalar=args.hidden // args.heads,
                  sliding_window=4)
    cfg = cfg_cls(**kw)
    cfg._attn_implementation = "eager"
    return cfg


def config_summary(cfg, args):
    keys = [
        "hidden_size",
        "intermediate_size",
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "vocab_size",
        "hidden_act",
        "rms_norm_eps",
        "mlp_bias",
        "attention_bias",
        "tie_word_embeddings",
        "sliding_window",
        "hidden_activation",  # Gemma2's keys (absent from the other families)
        "query_pre_attn_scalar",
        "attn_logit_softcapping",
        "final_logit_softcapping",
    ]
    out = {}
    for k in keys:
        v = getattr(cfg, k, None)
        if v is None and k not in ("sliding_window",):
            continue
        out[k] = v if isinstance(v, (int, float, str, bool)) or v is None else str(v)
    if "head_dim" not in out:
        out["head_dim"] = cfg.hidden_size // cfg.num_attention_heads
    out["attn_implementation"] = "eager"
    out["use_cache"] = False
    out["dtype"] = "float32"
    out["seed"] = args.seed
    return out


def build_base_state(args):
    """Build the model once (seeded) and return (config, state_dict, input_ids, torch logits)."""
    import torch
    import transformers

    cfg = make_config(args)
    torch.manual_seed(args.seed)
    model = getattr(transformers, FAMILIES[args.model][1])(cfg).eval()
    # HF initialises biases to 0 and norm weights to 1: randomise them too so a
    # bias/norm mistake changes the numbers.
    g = torch.Generator().manual_seed(args.seed + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".bias"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)
            elif "norm" in name:
                p.copy_(1.0 + torch.randn(p.shape, generator=g) * 0.1)
    sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
    ids = torch.randint(0, cfg.vocab_size, (getattr(args, "batch", 1), SEQ_LEN), generator=g, dtype=torch.int64)
    with torch.no_grad():
        logits = model(input_ids=ids, use_cache=False).logits.detach().clone()
    return cfg, sd, ids, logits


def fresh_model(args, cfg, sd):
    import transformers

    model = getattr(transformers, FAMILIES[args.model][1])(cfg).eval()
    model.load_state_dict(sd, strict=True)
    for p in model.parameters():
        p.requires_grad_(False)
    return model


# ---------------------------------------------------------------------------
# tensor-parallel plan (+ the bug variants)
# ---------------------------------------------------------------------------
def tp_plan(args, cfg, mesh):
    """Return ({module fqn: ParallelStyle}, {module fqn: description})."""
    import torch
    from torch import nn
    from torch.distributed._functional_collectives import all_gather_single
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    class BiasOnEveryRankRowwise(RowwiseParallel):
        """RowwiseParallel whose partition fn declares the per-rank full bias as Partial."""

        def _partition_linear_fn(self, name, module, device_mesh):
            w = distribute_tensor(module.weight, device_mesh, [Shard(1)], src_data_rank=self.src_data_rank)
            module.register_parameter("weight", nn.Parameter(w, requires_grad=False))
            if module.bias is not None:
                # BUG (one line): was distribute_tensor(module.bias, device_mesh, [Replicate()], ...)
                b = DTensor.from_local(module.bias.detach(), device_mesh, [Partial()], run_check=False)
                module.register_parameter("bias", nn.Parameter(b, requires_grad=False))

    class ReversedGatherColwise(ColwiseParallel):
        """ColwiseParallel(output_layouts=Replicate()) with a hand-written all-gather."""

        @staticmethod
        def _prepare_output_fn(output_layouts, use_local_output, mod, outputs, device_mesh):
            local = outputs.to_local()
            gathered = all_gather_single(local, 0, device_mesh)  # [N*B, S, V/N], rank order
            chunks = torch.chunk(gathered, device_mesh.size(), dim=0)
            return torch.cat(chunks[::-1], dim=local.ndim - 1)  # BUG (one line): was torch.cat(chunks, ...)

    form = getattr(args, "form", "tp")
    if form == "sp":
        plan, desc = tp_forms.sp_plan(cfg)
        if args.bug:
            tp_forms.apply_bug(args.bug, args.bug_module, plan, desc, form)
        return plan, desc

    # HF's plan entries as PyTorch styles: analyzer.export.plan reads HF's words (a word that
    # leaves the module replicated, Qwen3's q_norm/k_norm, has no style)
    plan, desc = {}, {}
    for pattern, kind in cfg.base_model_tp_plan.items():
        where = f"{cfg.model_type} tp plan: {pattern}"
        style, text = style_of(kind, where), style_text(kind)
        if style is None:
            continue
        for i in range(cfg.num_hidden_layers):
            fqn = "model." + pattern.replace("*", str(i))
            plan[fqn] = style_of(kind, where)  # one instance per module
            desc[fqn] = text
    for fqn in ("model.embed_tokens", "lm_head"):
        plan[fqn] = ColwiseParallel(output_layouts=Replicate())
        desc[fqn] = "ColwiseParallel(output_layouts=Replicate())"

    if form == "vocab":
        plan, desc = tp_forms.vocab_plan(cfg, plan, desc)
    bug_module = args.bug_module
    if args.bug in tp_forms.BUGS:
        tp_forms.apply_bug(args.bug, bug_module, plan, desc, form)
    elif args.bug == "missing_allreduce":
        plan[bug_module] = RowwiseParallel(output_layouts=Partial())
        desc[bug_module] = "RowwiseParallel(output_layouts=Partial())  # BUG"
    elif args.bug == "bias_every_rank":
        plan[bug_module] = BiasOnEveryRankRowwise()
        desc[bug_module] = "RowwiseParallel() with bias placement Partial() instead of Replicate()  # BUG"
    elif args.bug == "shard_order":
        plan[bug_module] = ReversedGatherColwise(output_layouts=Replicate())
        desc[bug_module] = "ColwiseParallel(output_layouts=Replicate()) gathering in reversed rank order  # BUG"
    return plan, desc


# ---------------------------------------------------------------------------
# verification: private simulator of the rank programs
# ---------------------------------------------------------------------------
class CollectiveMismatch(RuntimeError):
    """The ranks' k-th collectives differ (op, shape or axis): NCCL would hang or mix data."""


class _Comm:
    """Rendezvous of N rank threads at each collective (in program order)."""

    def __init__(self, n):
        self.n = n
        self.barrier = threading.Barrier(n, timeout=120)
        self.slots = [None] * n
        self.issued = [0] * n

    def exchange(self, rank, tag, x):
        k = self.issued[rank]
        self.issued[rank] += 1
        self.slots[rank] = (tag, x)
        self.barrier.wait()
        got = list(self.slots)
        self.barrier.wait()
        tags = [t for t, _ in got]
        if len(set(tags)) != 1:
            each = "; ".join(f"rank {r} {t[0]}{list(t[1])}" + (f" axis {t[2]}" if len(t) > 2 else "")
                             for r, t in enumerate(tags))
            raise CollectiveMismatch(f"collective #{k} differs across ranks: {each}")
        return [v for _, v in got]


def _collective_ops(rank, comm):
    from onnx.reference.op_run import OpRun

    class AllReduce(OpRun):
        op_domain = MSFT

        def _run(self, x, group_size=None, reduction=None, mesh_axis=None):
            reduce = {"sum": np.sum, "max": np.max, "avg": np.mean}[reduction or "sum"]
            xs = comm.exchange(rank, ("AllReduce", x.shape, reduction or "sum"), x)
            return (reduce(np.stack(xs), axis=0).astype(x.dtype),)

    class AllGather(OpRun):
        op_domain = MSFT

        def _run(self, x, group_size=None, axis=None, mesh_axis=None):
            xs = comm.exchange(rank, ("AllGather", x.shape, axis), x)
            return (np.concatenate(xs, axis=axis or 0),)

    class ReduceScatter(OpRun):
        op_domain = MSFT

        def _run(self, x, group_size=None, reduction=None, axis=None, mesh_axis=None):
            xs = comm.exchange(rank, ("ReduceScatter", x.shape, axis), x)
            s = np.sum(np.stack(xs), axis=0).astype(x.dtype)
            return (np.split(s, comm.n, axis=axis or 0)[rank],)

    return [AllReduce, AllGather, ReduceScatter]


def simulate_ranks(protos, feeds):
    """Run the rank programs together; ``feeds`` is one dict for every rank, or a list of one
    dict per rank (each rank's own chunk of the inputs, context parallelism)."""
    from onnx.reference import ReferenceEvaluator

    n = len(protos)
    per_rank = feeds if isinstance(feeds, list) else [feeds] * n
    comm = _Comm(n)
    results, errors = [None] * n, [None] * n

    def run(r):
        try:
            sess = ReferenceEvaluator(protos[r], new_ops=_collective_ops(r, comm))
            results[r] = sess.run(None, per_rank[r])[0]
        except Exception as e:  # noqa: BLE001
            errors[r] = e
            comm.barrier.abort()

    threads = [threading.Thread(target=run, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        if isinstance(e, CollectiveMismatch):
            raise e
    for e in errors:
        if e is not None and not isinstance(e, threading.BrokenBarrierError):
            raise e
    if any(e is not None for e in errors):
        raise errors[0] or next(e for e in errors if e)
    return results


def check_weight_shards(seq, ranks):
    """Each rank initializer must be the seq initializer or its chunk r along one axis."""
    from onnx import numpy_helper

    sw = {t.name: numpy_helper.to_array(t) for t in seq.graph.initializer}
    n = len(ranks)
    layout = {}
    for r, p in enumerate(ranks):
        for t in p.graph.initializer:
            if t.name not in sw or "." not in t.name:
                continue
            full, loc = sw[t.name], numpy_helper.to_array(t)
            if full.shape == loc.shape:
                ok, how = np.array_equal(full, loc), "replicated"
            else:
                axes = [a for a in range(full.ndim) if full.shape[a] != loc.shape[a]]
                ok = len(axes) == 1 and full.shape[axes[0]] == n * loc.shape[axes[0]]
                ok = ok and np.array_equal(np.split(full, n, axis=axes[0])[r], loc)
                how = f"shard(axis={axes[0]})" if axes else "?"
            if not ok:
                raise RuntimeError(f"rank {r} initializer {t.name} is not chunk {r} of the seq weight")
            layout[t.name] = how
    return layout


# ---------------------------------------------------------------------------
# reporting helpers
# ---------------------------------------------------------------------------
def op_histogram(proto):
    return Counter((n.domain + "::" if n.domain else "") + n.op_type for n in proto.graph.node)


def describe(seq, ranks):
    hs = op_histogram(seq)
    lines = [f"  seq   : {len(seq.graph.node)} nodes {dict(sorted(hs.items()))}"]
    for r, p in enumerate(ranks):
        hr = op_histogram(p)
        diff = {k: hr.get(k, 0) - hs.get(k, 0) for k in set(hs) | set(hr) if hr.get(k, 0) != hs.get(k, 0)}
        lines.append(f"  rank{r}: {len(p.graph.node)} nodes, delta vs seq {dict(sorted(diff.items()))}")
    for n in ranks[0].graph.node:
        if n.domain == MSFT:
            import onnx

            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
            attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in attrs.items()}
            scope = next((m.value for m in n.metadata_props if m.key == "pkg.torch.onnx.name_scopes"), "")
            lines.append(f"    {n.op_type}{attrs} {list(n.input)}->{list(n.output)} scopes={scope}")
    return "\n".join(lines)


def write_yaml(path, data):
    import yaml

    with open(path, "w") as f:
        yaml.safe_dump(data, f, sort_keys=False, default_flow_style=False, width=120)


# ---------------------------------------------------------------------------
# main driver
# ---------------------------------------------------------------------------
def produce(args, command):
    import onnx
    import torch
    import torch.distributed as dist
    import transformers
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.tensor.parallel import parallelize_module
    from torch.testing._internal.distributed.fake_pg import FakeStore

    register_collective_schemas()
    n = args.world_size
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rank*.onnx"):
        old.unlink()

    cfg, sd, ids, ref_logits = build_base_state(args)
    hf_class = FAMILIES[args.model][1]
    meta = {"model": hf_class, "case": out.name}

    # ---- sequential: same pipeline, no process group, no parallelize -------
    if dist.is_initialized():
        dist.destroy_process_group()
    model = fresh_model(args, cfg, sd)
    gm = trace(model, ids)
    seq = export_onnx(gm, ids, constant_names(gm, model), rank=-1, world_size=1,
                      meta={**meta, "doc": f"{hf_class} sequential (shardlog example {out.name})"})
    onnx.save(seq, out / "seq.onnx")

    # ---- ranks ----------------------------------------------------------------
    ranks, plan_desc = [], None
    for r in range(n):
        dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=n)
        try:
            reset_dtensor_caches()
            mesh = DeviceMesh("cpu", list(range(n)))
            model = fresh_model(args, cfg, sd)
            plan, plan_desc = tp_plan(args, cfg, mesh)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parallelize_module(model, mesh, plan, src_data_rank=None)
            gm = trace(model, ids)
            names = constant_names(gm, model)
            doc = f"{hf_class} tensor-parallel rank {r}/{n} (shardlog example {out.name})"
            proto = export_onnx(gm, ids, names, rank=r, world_size=n, meta={**meta, "doc": doc})
            if args.bug in tp_forms.PATCHED:
                proto = tp_forms.patch_rank(proto, r, args.bug, args.bug_module)
        finally:
            dist.destroy_process_group()
        onnx.save(proto, out / f"rank{r}.onnx")
        ranks.append(proto)

    print(describe(seq, ranks))
    layout = check_weight_shards(seq, ranks)
    print(f"  weights: {Counter(layout.values())}")

    # ---- verification ---------------------------------------------------------
    seq_err = max_err = mismatch = None
    if args.verify:
        import onnxruntime as ort

        feeds = {"input_ids": ids.numpy()}
        sess = ort.InferenceSession(seq.SerializeToString(), providers=["CPUExecutionProvider"])
        seq_logits = sess.run(None, feeds)[0]
        seq_err = float(np.max(np.abs(seq_logits - ref_logits.numpy())))
        try:
            outs = simulate_ranks(ranks, feeds)
            max_err = float(max(np.max(np.abs(o - seq_logits)) for o in outs))
            print(f"  seq onnx vs torch: {seq_err:.3g}   ranks (simulated) vs seq: {max_err:.3g}")
        except CollectiveMismatch as exc:
            if not args.bug:
                raise
            mismatch = str(exc)  # the ranks' programs cannot run together: no logits to compare
            print(f"  seq onnx vs torch: {seq_err:.3g}   ranks (simulated): {mismatch}")

    bug_desc = BUGS[args.bug].format(m=args.bug_module) if args.bug else None
    data = {
        "model": {
            "hf_class": hf_class,
            "transformers_version": str(transformers.__version__),
            "torch_version": str(torch.__version__),
            "config": config_summary(cfg, args),
            "input": {"name": "input_ids", "shape": list(ids.shape), "dtype": "int64"},
            "output": {"name": "logits", "shape": [*ids.shape, cfg.vocab_size], "dtype": "float32"},
        },
        "world_size": n,
        "expected": "discrepancy" if args.bug else "verified",
        "bug": bug_desc,
        "bug_module": args.bug_module if args.bug else None,
        "max_abs_error": max_err,
        **({"collective_mismatch": mismatch} if mismatch else {}),
        "seq_vs_torch_max_abs_error": seq_err,
        "tp_plan": plan_desc,
        "files": {"seq": "seq.onnx", "ranks": [f"rank{r}.onnx" for r in range(n)]},
        "produced_by": command,
    }
    write_yaml(out / "case.yaml", data)
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"  wrote {out} ({size / 1024:.0f} KiB)")

    if args.verify:
        check_case_errors(args, out, seq_err, max_err, bug_visible=mismatch is None)
    return data


def case_command(name):
    return f"python scripts/export_hf_tp.py --case {name}"


def parse(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--case", choices=sorted(PRESETS), help="produce one preset into examples/<case>/")
    sel.add_argument("--all", action="store_true", help="produce every preset")
    p.add_argument("--model", choices=sorted(FAMILIES), default="llama")
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--form", choices=tp_forms.FORMS, default="tp",
                   help="parallel form: tp (base_model_tp_plan), sp (sequence parallel), vocab (vocab parallel)")
    p.add_argument("--batch", type=int, default=1, help="batch size of input_ids [B, 8]")
    p.add_argument("--mesh", default=None,
                   help="a 2-D mesh dp=D,tp=T (mesh_export.py): batch split over dp, TP plan on mesh['tp']")
    p.add_argument("--bug", choices=sorted(BUGS), default=None)
    p.add_argument("--bug-module", default=None, help="module path of the bug (default depends on --bug)")
    add_model_args(p)
    return p.parse_args(argv)


def add_model_args(p, *, hidden: int = 64, intermediate: int = 128, vocab: int = 128) -> None:
    """The tiny model's size, seed, output and verification options, shared by the producers."""
    p.add_argument("--hidden", type=int, default=hidden)
    p.add_argument("--intermediate", type=int, default=intermediate)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--vocab", type=int, default=vocab)
    p.add_argument("--init-range", type=float, default=0.1, help="std of the random weights")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="output folder (default examples/<case>)")
    p.add_argument("--no-verify", dest="verify", action="store_false")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--stack-frames", type=int, default=3,
                   help="innermost stack frames kept in pkg.torch.onnx.stack_trace (0 = all)")


def check_case_errors(args, out, seq_err, max_err, *, output="logits", bug_visible=True) -> None:
    """Refuse to write a case whose numbers do not back it: the sequential ONNX must match
    PyTorch, a correct case's ranks must rebuild the sequential ``output``, and a bug case's
    error must be clearly visible (``bug_visible=False``: not measurable, e.g. the collectives
    do not pair). Raises SystemExit with the reason."""
    if seq_err > args.tol:
        raise SystemExit(f"seq ONNX does not match PyTorch: {seq_err}")
    if args.bug is None and max_err > args.tol:
        raise SystemExit(f"correct case {out.name}: ranks do not rebuild seq {output} ({max_err})")
    if args.bug is not None and bug_visible and max_err <= 1e3 * args.tol:
        raise SystemExit(f"bug case {out.name}: error {max_err} is not clearly visible")


def preset_args(parse_fn, presets, name, args):
    """CLI defaults of ``parse_fn`` with preset ``name`` applied; verification options and the
    output folder (examples/<name>) come from ``args``/the preset (shared by the exporters)."""
    base = parse_fn([])
    for k, v in presets[name].items():
        setattr(base, k, v)
    base.verify, base.tol, base.stack_frames = args.verify, args.tol, args.stack_frames
    one_out = getattr(args, "out", None) and not getattr(args, "all", False)
    base.out = str(args.out) if one_out else str(REPO / "examples" / name)  # --out: one case elsewhere
    return base


def resolve(args, name=None):
    """Apply preset `name` on top of the CLI defaults."""
    if name is not None:
        args = preset_args(parse, PRESETS, name, args)
    if args.bug and not args.bug_module:
        args.bug_module = DEFAULT_BUG_MODULE[args.bug]
    if args.bug in tp_forms.BUG_FORMS and args.form not in tp_forms.BUG_FORMS[args.bug]:
        raise SystemExit(f"--bug {args.bug} needs --form {' or '.join(tp_forms.BUG_FORMS[args.bug])}")
    if args.bug == mesh_export.BUG and not args.mesh:
        raise SystemExit(f"--bug {args.bug} needs --mesh dp=D,tp=T")
    if args.out is None and args.mesh:
        m = mesh_export.parse_mesh(args.mesh)
        name = f"{args.model}_tp{m['tp']}_dp{m['dp']}" + (f"_bug_{args.bug}" if args.bug else "")
        args.out = str(REPO / "examples" / name)
    if args.out is None:
        form = f"_{args.form}" if args.form != "tp" else ""
        name = f"{args.model}_tp{args.world_size}{form}" + (f"_bug_{args.bug}" if args.bug else "")
        args.out = str(REPO / "examples" / name)
    return args


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("TORCH_LOGS", "-all")
    args = parse(argv)
    _OPTS["stack_frames"] = args.stack_frames
    if args.all:
        names = list(PRESETS)
    elif args.case:
        names = [args.case]
    else:
        names = [None]
    for name in names:
        a = resolve(args, name)
        cmd = case_command(name) if name else "python scripts/export_hf_tp.py " + shlex.join(argv)
        if name and not args.verify:
            cmd += " --no-verify"
        if name and args.stack_frames != 3:
            cmd += f" --stack-frames {args.stack_frames}"
        size = f"mesh {a.mesh}" if a.mesh else f"world_size={a.world_size}"
        print(f"== {Path(a.out).name}: {a.model} {size} bug={a.bug}", flush=True)
        if a.mesh:
            mesh_export.produce_mesh(a, cmd.strip(), sys.modules[__name__])
        else:
            produce(a, cmd.strip())


if __name__ == "__main__":
    main()
