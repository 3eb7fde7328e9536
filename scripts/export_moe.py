#!/usr/bin/env python
"""Export a small Hugging Face mixture-of-experts model sequentially and expert-parallel.

The model is UNMODIFIED ``transformers`` code (``MixtralForCausalLM``, and ``Qwen2MoeForCausalLM``
with its shared expert for ``qwen2_moe_ep2``; Mixtral: a router
``MixtralTopKRouter`` with top-k over softmax probabilities, experts ``MixtralExperts`` with
stacked weights ``gate_up_proj [E, 2I, H]`` and ``down_proj [E, H, I]``), built from a tiny
config (hidden 32, 4 experts, top-2, 2 layers, 8 tokens) with seeded random weights. The experts
run HF's ``batched_mm`` implementation (``transformers/integrations/moe.py``,
``batched_mm_experts_forward``): every (token, expert) pair gathers its expert's weights
(``gate_up_proj[expert_ids]``) and runs a batched matmul, so every shape is static (HF's
``eager`` loop uses ``torch.where`` on the routing mask: data-dependent shapes, which shardlog
does not take).

Expert parallelism is HF's own: the model's ``base_model_ep_plan``
(``grouped_gemm`` on the stacked expert weights: ``Shard(0)``, rank r holds experts
``[r*E/N, (r+1)*E/N)``; ``ep_dispatch_experts`` on the experts module) applied by
``transformers.distributed.expert_parallel.apply_expert_parallelism`` with
``ep_implementation="all_reduce"`` (``AllReduceEP``, what HF's default ``AutoEP`` picks at
inference when the expert group shares the batch): every rank keeps the router replicated,
maps the global expert ids to its local range (off-rank routes get the sentinel local id
``E/N`` and routing weight 0), runs its own experts on every token, and an all-reduce sums the
ranks' partial outputs. HF's ``AllToAllEP`` (tokens exchanged by all-to-all) reads the split
sizes back to the host every layer (data-dependent shapes), so it cannot be exported with
static shapes; the AllToAll rules (``rules/collectives/AllToAll.dl``) are tested on
hand-written graphs only (``tests/test_rules_expert.py``).

Each rank is traced with ``make_fx`` under PyTorch's ``fake`` process group and exported by the
same pipeline as ``export_hf_tp.py`` (collectives -> ``com.microsoft`` ops). HF's combine calls
the in-place ``torch.distributed.all_reduce``, which ``make_fx`` records as
``c10d.allreduce_`` on process-group objects that ``torch.export`` cannot take; while tracing,
``transformers.distributed.parallel_utils`` sees an ``all_reduce`` that computes the functional
``all_reduce`` and writes it back in place (the same values, traced as
``_c10d_functional.all_reduce``).

``--form tp`` applies the model's ``base_model_tp_plan`` instead, expanded and applied by HF
(``_expand_parallel_plan``, ``transformers.distributed.tensor_parallel.apply_tensor_parallelism``):
attention colwise/rowwise, every expert's FFN split (``gate_up_proj`` ``packed_colwise``:
``_StridedShard(dim=1, split_factor=2)``, i.e. chunk r of the gate half and of the up half;
``down_proj`` ``rowwise``: ``Shard(2)``), the experts module ``moe_tp_experts`` (all-reduce of
the partial outputs), ``lm_head`` colwise with a gather. ``--form tp_ep`` applies both as
``DistributedConfig(tp_size=N, ep_size=N, ep_implementation="all_reduce")`` resolves them
(``_resolve_parallel_plans``: attention and lm_head tensor parallel, the experts expert parallel).
The strided gate/up layout cannot be read from shapes; the check finds it from the stored weights'
values (``Shard(1, sections=[I, I])``), so the case needs no spec.

Bug variants (``--bug``), one-line changes in one layer (layer 1):

* ``--form ep``, of ``AllReduceEP.__call__`` (registered as its own ``EPImplementation``):
  ``missing_allreduce``: the combine returns ``expert_output`` instead of
  ``_AllReduceForward.apply(expert_output, ep_group)``: each rank keeps its partial sum;
  ``expert_placement``: the ownership mask is round-robin, ``(top_k_index % ep_size) != ep_rank``,
  while ``grouped_gemm`` placed contiguous blocks of experts (``Shard(0)``): tokens are routed
  to the wrong global experts; ``expert_offset``: the local expert id is
  ``top_k_index - ep_rank`` instead of ``top_k_index % num_local_experts`` (right on rank 0,
  wrong on rank 1).
* ``--form tp``, of the plan: ``missing_allreduce``: the experts planned ``local_params``
  instead of ``moe_tp_experts`` (no all-reduce); ``fused_one_piece``: ``gate_up_proj`` planned
  ``colwise`` instead of ``packed_colwise`` (the fused weight cut in one piece).

Usage::

    python scripts/export_moe.py --case mixtral_ep2
    python scripts/export_moe.py --all
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_hf_tp as hf  # noqa: E402  (the TP producer's export pipeline)

REPO = Path(__file__).resolve().parents[1]

#: (form, bug) -> description ({m}: the module of the bug); the case.yaml ``bug`` text
BUG_TEXT = {
    ("ep", "missing_allreduce"): "the expert-parallel combine of {m} returns the rank's expert output without "
    "_AllReduceForward.apply(expert_output, ep_group) (AllReduceEP.__call__): each rank keeps its partial sum",
    ("ep", "expert_placement"): "{m} computes expert ownership round-robin, off_rank = (top_k_index % ep_size) "
    "!= ep_rank, instead of (top_k_index // num_local_experts) != ep_rank, while grouped_gemm placed contiguous "
    "blocks of experts (Shard(0)): tokens reach the wrong global experts",
    ("ep", "expert_offset"): "{m} maps a global expert id to its local id as top_k_index - ep_rank instead of "
    "top_k_index % num_local_experts (the rank used as the offset of its first expert, ep_rank * num_local_experts): "
    "rank 1 sends its tokens to the wrong local experts, rank 0 is unaffected",
    ("tp", "missing_allreduce"): "{m} is planned 'local_params' instead of 'moe_tp_experts': the experts run on "
    "their local shards but the partial outputs are never all-reduced",
    ("tp", "fused_one_piece"): "{m}.gate_up_proj is planned 'colwise' instead of 'packed_colwise': the fused "
    "[gate; up] weight "
    "is cut in one piece (rank 0 gets the gate rows, rank 1 the up rows) instead of each half sharded",
}
BUGS = sorted({b for _, b in BUG_TEXT})
DEFAULT_BUG_MODULE = {
    ("ep", "missing_allreduce"): "model.layers.1.mlp",
    ("ep", "expert_placement"): "model.layers.1.mlp.experts",
    ("ep", "expert_offset"): "model.layers.1.mlp.experts",
    ("tp", "missing_allreduce"): "model.layers.1.mlp.experts",
    ("tp", "fused_one_piece"): "model.layers.1.mlp.experts",
}
_EP2 = dict(model="mixtral", world_size=2, form="ep")
_TP2 = dict(model="mixtral", world_size=2, form="tp")
PRESETS = {
    "mixtral_ep2": _EP2,
    "mixtral_tp2": _TP2,
    "mixtral_tp2_ep2": dict(model="mixtral", world_size=2, form="tp_ep"),
    "qwen2_moe_ep2": dict(model="qwen2_moe", world_size=2, form="ep"),
    "mixtral_ep4": dict(model="mixtral", world_size=4, form="ep"),  # one expert per rank
    **{f"mixtral_{f}2_bug_{b}": {**(_EP2 if f == "ep" else _TP2), "bug": b} for f, b in BUG_TEXT},
}
FAMILIES = {
    "mixtral": ("MixtralConfig", "MixtralForCausalLM"),
    "qwen2_moe": ("Qwen2MoeConfig", "Qwen2MoeForCausalLM"),
}


def make_config(args):
    import transformers

    cfg = getattr(transformers, FAMILIES[args.model][0])(
        hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        vocab_size=args.vocab,
        num_experts_per_tok=args.top_k,
        max_position_embeddings=64,
        initializer_range=args.init_range,
        tie_word_embeddings=False,
        use_cache=False,
        **({"num_local_experts": args.experts} if args.model == "mixtral" else
           # Qwen2-MoE: every layer sparse, a shared expert beside the routed ones
           {"num_experts": args.experts, "moe_intermediate_size": args.intermediate // 2,
            "shared_expert_intermediate_size": args.intermediate, "decoder_sparse_step": 1}),
    )
    cfg._attn_implementation = "eager"
    cfg._experts_implementation = "batched_mm"
    return cfg


def build_base_state(args):
    """Build the model once (seeded): (config, state_dict, input_ids, torch logits)."""
    import torch
    import transformers

    cfg = make_config(args)
    torch.manual_seed(args.seed)
    model = getattr(transformers, FAMILIES[args.model][1])(cfg).eval()
    g = torch.Generator().manual_seed(args.seed + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + torch.randn(p.shape, generator=g) * 0.1)
    sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
    ids = torch.randint(0, cfg.vocab_size, (1, hf.SEQ_LEN), generator=g, dtype=torch.int64)
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


def _buggy_implementation(bug):
    """An ``EPImplementation``: HF's ``AllReduceEP.__call__`` with one line changed (``bug``)."""
    import torch
    from transformers.distributed.expert_parallel import AllReduceEP
    from transformers.distributed.parallel_utils import _AllReduceForward

    class BuggyAllReduceEP(AllReduceEP):
        def __call__(self, hidden_states, top_k_index, top_k_weights):
            ep_group = self.ep_mesh.get_group()
            if bug == "expert_placement":
                # BUG (one line): was (top_k_index // self.num_local_experts) != self.ep_mesh.get_local_rank()
                off_rank = (top_k_index % self.ep_mesh.size()) != self.ep_mesh.get_local_rank()
            else:
                off_rank = (top_k_index // self.num_local_experts) != self.ep_mesh.get_local_rank()
            if bug == "expert_offset":
                # BUG (one line): was top_k_index % self.num_local_experts
                local_index = torch.where(off_rank, self.num_local_experts, top_k_index - self.ep_mesh.get_local_rank())
            else:
                local_index = torch.where(off_rank, self.num_local_experts, top_k_index % self.num_local_experts)
            expert_output = self.experts_forward(hidden_states, local_index, top_k_weights.masked_fill(off_rank, 0.0))
            if bug == "missing_allreduce":
                return expert_output  # BUG (one line): was _AllReduceForward.apply(expert_output, ep_group)
            return _AllReduceForward.apply(expert_output, ep_group)

    return BuggyAllReduceEP


def tp_plan(model, args):
    """The model's ``tp_plan`` (``base_model_tp_plan``) expanded by HF itself
    (``_expand_parallel_plan``: every parameter to shard, then every module to hook), as
    ``from_pretrained(tp_plan="auto")`` applies it, with the bug's entry changed:
    {fqn: HF style name}."""
    plan = model._expand_parallel_plan(dict(model.tp_plan))
    if args.bug == "missing_allreduce":
        plan[args.bug_module] = "local_params"  # BUG (one line): was "moe_tp_experts"
    elif args.bug == "fused_one_piece":
        plan[args.bug_module + ".gate_up_proj"] = "colwise"  # BUG (one line): was "packed_colwise"
    return plan


def ep_plan(cfg, args):
    """HF's plan per layer: ({fqn: style name}, {layer: ep_implementation}, description)."""
    plans, impls, desc = {}, {}, {}
    bug_layer = None
    if args.bug:
        bug_layer = int(args.bug_module.split(".")[2])
    for i in range(cfg.num_hidden_layers):
        plan = {"model." + k.replace("*", str(i)): v for k, v in cfg.base_model_ep_plan.items()}
        plans[i] = plan
        impls[i] = f"shardlog_bug_{args.bug}" if i == bug_layer else "all_reduce"
        for k, v in plan.items():
            desc[k] = v
        desc[f"model.layers.{i}.mlp.experts"] += f" (ep_implementation={impls[i]!r})"
        if i == bug_layer:
            desc[f"model.layers.{i}.mlp.experts"] += "  # BUG"
    return plans, impls, desc


@contextlib.contextmanager
def functional_all_reduce():
    """While tracing: HF's in-place ``dist.all_reduce`` computed by the functional all_reduce
    (in the two modules of ``transformers.distributed`` that call it)."""
    import torch.distributed as dist
    import transformers.distributed.parallel_utils as pu
    import transformers.distributed.tensor_parallel as tp
    from torch.distributed._functional_collectives import all_reduce

    class _Dist:
        def __getattr__(self, name):
            return getattr(dist, name)

        @staticmethod
        def all_reduce(x, op=None, group=None, async_op=False):
            x.copy_(all_reduce(x, "sum", group))

    mods = (pu, tp)  # AllReduceEP / moe_tp_experts (parallel_utils), RowwiseParallel (tensor_parallel)
    saved = [m.dist for m in mods]
    for m in mods:
        m.dist = _Dist()
    try:
        yield
    finally:
        for m, d in zip(mods, saved):
            m.dist = d


def sections_of(seq, name, k):
    """The k equal section sizes of the sharded axis (1) of seq initializer ``name``."""
    dims = next(list(t.dims) for t in seq.graph.initializer if t.name == name)
    return [dims[1] // k] * k


def check_weight_shards(seq, ranks, k=2):
    """Each rank initializer is the seq initializer, its chunk r along one axis, or (HF's
    ``packed_colwise``: ``_StridedShard(split_factor=k)``) chunk r of each of k equal sections
    along that axis. Returns {name: "replicated" | "shard(axis=a)" | "sections(axis=a)"}."""
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
                if len(axes) != 1 or full.shape[axes[0]] != n * loc.shape[axes[0]]:
                    raise RuntimeError(f"rank {r} initializer {t.name}: shape {loc.shape} of {full.shape}")
                a = axes[0]
                ok, how = np.array_equal(np.split(full, n, axis=a)[r], loc), f"shard(axis={a})"
                if not ok:
                    strided = np.concatenate([np.split(sec, n, axis=a)[r] for sec in np.split(full, k, axis=a)], axis=a)
                    ok, how = np.array_equal(strided, loc), f"sections(axis={a})"
            if not ok:
                raise RuntimeError(f"rank {r} initializer {t.name} is not chunk {r} of the seq weight")
            layout[t.name] = how
    return layout


def config_summary(cfg, args):
    keys = ["hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
            "num_key_value_heads", "vocab_size", "num_local_experts", "num_experts", "num_experts_per_tok",
            "moe_intermediate_size", "shared_expert_intermediate_size", "norm_topk_prob",
            "hidden_act", "rms_norm_eps", "tie_word_embeddings"]
    out = {k: getattr(cfg, k) for k in keys if hasattr(cfg, k)}
    out.update(attn_implementation="eager", experts_implementation="batched_mm", use_cache=False,
               dtype="float32", seed=args.seed)
    return out


def produce(args, command):
    import onnx
    import torch
    import torch.distributed as dist
    import transformers
    from torch.distributed.device_mesh import DeviceMesh
    from torch.testing._internal.distributed.fake_pg import FakeStore
    from transformers.distributed.configuration_utils import DistributedConfig
    from transformers.distributed.expert_parallel import EPImplementationInterface, apply_expert_parallelism
    from transformers.distributed.tensor_parallel import apply_tensor_parallelism

    hf.register_collective_schemas()
    n = args.world_size
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rank*.onnx"):
        old.unlink()
    if args.bug and args.form == "ep":
        EPImplementationInterface.register(f"shardlog_bug_{args.bug}", _buggy_implementation(args.bug))

    cfg, sd, ids, ref_logits = build_base_state(args)
    hf_class = FAMILIES[args.model][1]
    meta = {"model": hf_class, "case": out.name}

    if dist.is_initialized():
        dist.destroy_process_group()
    model = fresh_model(args, cfg, sd)
    gm = hf.trace(model, ids)
    seq = hf.export_onnx(gm, ids, hf.constant_names(gm, model), rank=-1, world_size=1,
                         meta={**meta, "doc": f"{hf_class} sequential (shardlog example {out.name})"})
    onnx.save(seq, out / "seq.onnx")

    ranks, desc = [], None
    for r in range(n):
        dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=n)
        try:
            mesh = DeviceMesh("cpu", list(range(n)))
            model = fresh_model(args, cfg, sd)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if args.form == "tp":
                    desc = tp_plan(model, args)
                    apply_tensor_parallelism(model, mesh, desc)
                    if args.bug:
                        key = args.bug_module + (".gate_up_proj" if args.bug == "fused_one_piece" else "")
                        desc = {**desc, key: desc[key] + "  # BUG"}
                elif args.form == "tp_ep":
                    # what from_pretrained(distributed_config=...) applies (maybe_distribute_model)
                    dc = DistributedConfig(tp_size=n, ep_size=n, ep_implementation="all_reduce")
                    tplan, eplan, _ = model._resolve_parallel_plans(dc)
                    apply_tensor_parallelism(model, mesh, tplan)
                    apply_expert_parallelism(model, mesh, mesh, eplan, ep_implementation="all_reduce")
                    desc = {**tplan, **eplan}
                else:
                    plans, impls, desc = ep_plan(cfg, args)
                    for i, plan in plans.items():
                        apply_expert_parallelism(model, mesh, mesh, plan, ep_implementation=impls[i])
            with functional_all_reduce():
                gm = hf.trace(model, ids)
            doc = f"{hf_class} expert-parallel rank {r}/{n} (shardlog example {out.name})"
            proto = hf.export_onnx(gm, ids, hf.constant_names(gm, model), rank=r, world_size=n,
                                   meta={**meta, "doc": doc})
        finally:
            dist.destroy_process_group()
        onnx.save(proto, out / f"rank{r}.onnx")
        ranks.append(proto)

    print(hf.describe(seq, ranks))
    layout = check_weight_shards(seq, ranks)
    print(f"  weights: {Counter(layout.values())}")
    seq_err = max_err = None
    if args.verify:
        import onnxruntime as ort

        feeds = {"input_ids": ids.numpy()}
        sess = ort.InferenceSession(seq.SerializeToString(), providers=["CPUExecutionProvider"])
        seq_logits = sess.run(None, feeds)[0]
        seq_err = float(np.max(np.abs(seq_logits - ref_logits.numpy())))
        outs = hf.simulate_ranks(ranks, feeds)
        max_err = float(max(np.max(np.abs(o - seq_logits)) for o in outs))
        print(f"  seq onnx vs torch: {seq_err:.3g}   ranks (simulated) vs seq: {max_err:.3g}")

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
        "bug": BUG_TEXT[args.form, args.bug].format(m=args.bug_module) if args.bug else None,
        "bug_module": args.bug_module if args.bug else None,
        "max_abs_error": max_err,
        "seq_vs_torch_max_abs_error": seq_err,
        ("tp_plan" if args.form == "tp" else "ep_plan"): desc,
        **({"distributed_config": f"DistributedConfig(tp_size={n}, ep_size={n}, ep_implementation='all_reduce')"}
           if args.form == "tp_ep" else {}),
        "files": {"seq": "seq.onnx", "ranks": [f"rank{r}.onnx" for r in range(n)]},
        "produced_by": command,
    }
    hf.write_yaml(out / "case.yaml", data)
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"  wrote {out} ({size / 1024:.0f} KiB)")
    if args.verify:
        hf.check_case_errors(args, out, seq_err, max_err)
    return data


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--case", choices=sorted(PRESETS), help="produce one preset into examples/<case>/")
    sel.add_argument("--all", action="store_true", help="produce every preset")
    p.add_argument("--model", choices=sorted(FAMILIES), default="mixtral")
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--form", choices=("ep", "tp", "tp_ep"), default="ep",
                   help="ep: base_model_ep_plan (AllReduceEP); tp: base_model_tp_plan (moe_tp_experts); "
                   "tp_ep: both as DistributedConfig(tp_size=N, ep_size=N) resolves them")
    p.add_argument("--bug", choices=BUGS, default=None)
    p.add_argument("--bug-module", default=None, help="module of the bug (default depends on --bug)")
    p.add_argument("--experts", type=int, default=4)
    p.add_argument("--top-k", type=int, default=2)
    hf.add_model_args(p, hidden=32, intermediate=64, vocab=64)
    return p.parse_args(argv)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("TORCH_LOGS", "-all")
    args = parse(argv)
    hf._OPTS["stack_frames"] = args.stack_frames
    names = list(PRESETS) if args.all else [args.case] if args.case else [None]
    for name in names:
        a = hf.preset_args(parse, PRESETS, name, args) if name else args
        if a.bug and not a.bug_module:
            if (a.form, a.bug) not in BUG_TEXT:
                raise SystemExit(f"--bug {a.bug} is not a bug of --form {a.form}")
            a.bug_module = DEFAULT_BUG_MODULE[a.form, a.bug]
        if a.out is None:
            form = f"tp{a.world_size}_ep" if a.form == "tp_ep" else a.form
            a.out = str(REPO / "examples" / (f"{a.model}_{form}{a.world_size}" + (f"_bug_{a.bug}" if a.bug else "")))
        cmd = f"python scripts/export_moe.py --case {name}" if name else \
            "python scripts/export_moe.py " + shlex.join(argv)
        print(f"== {Path(a.out).name}: {a.model} world_size={a.world_size} bug={a.bug}", flush=True)
        produce(a, cmd)


if __name__ == "__main__":
    main()
