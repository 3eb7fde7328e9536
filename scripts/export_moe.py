#!/usr/bin/env python
"""Export a small Hugging Face mixture-of-experts model sequentially and expert-parallel.

The model is UNMODIFIED ``transformers`` code (``MixtralForCausalLM``: a router
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

Bug variants (``--bug``), one-line changes of ``AllReduceEP.__call__`` in one layer's experts
(registered as their own ``EPImplementation``):

* ``missing_allreduce``: the combine returns ``expert_output`` instead of
  ``_AllReduceForward.apply(expert_output, ep_group)``: each rank keeps its partial sum.
* ``expert_placement``: the ownership mask is round-robin,
  ``(top_k_index % ep_size) != ep_rank``, while ``grouped_gemm`` placed contiguous blocks of
  experts (``Shard(0)``): tokens are routed to the wrong global experts.

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

BUGS = {
    "missing_allreduce": "the expert-parallel combine of {m} returns the rank's expert output without "
    "_AllReduceForward.apply(expert_output, ep_group) (AllReduceEP.__call__): each rank keeps its partial sum",
    "expert_placement": "{m} computes expert ownership round-robin, off_rank = (top_k_index % ep_size) != ep_rank, "
    "instead of (top_k_index // num_local_experts) != ep_rank, while grouped_gemm placed contiguous blocks of "
    "experts (Shard(0)): tokens reach the wrong global experts",
}
DEFAULT_BUG_MODULE = {
    "missing_allreduce": "model.layers.1.mlp",
    "expert_placement": "model.layers.1.mlp.experts",
}
_EP2 = dict(model="mixtral", world_size=2)
PRESETS = {
    "mixtral_ep2": _EP2,
    **{f"mixtral_ep2_bug_{b}": {**_EP2, "bug": b} for b in BUGS},
}
FAMILIES = {"mixtral": ("MixtralConfig", "MixtralForCausalLM")}


def make_config(args):
    import transformers

    cfg = getattr(transformers, FAMILIES[args.model][0])(
        hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        vocab_size=args.vocab,
        num_local_experts=args.experts,
        num_experts_per_tok=args.top_k,
        max_position_embeddings=64,
        initializer_range=args.init_range,
        tie_word_embeddings=False,
        use_cache=False,
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
            local_index = torch.where(off_rank, self.num_local_experts, top_k_index % self.num_local_experts)
            expert_output = self.experts_forward(hidden_states, local_index, top_k_weights.masked_fill(off_rank, 0.0))
            if bug == "missing_allreduce":
                return expert_output  # BUG (one line): was _AllReduceForward.apply(expert_output, ep_group)
            return _AllReduceForward.apply(expert_output, ep_group)

    return BuggyAllReduceEP


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
    """While tracing: HF's in-place ``dist.all_reduce`` computed by the functional all_reduce."""
    import torch.distributed as dist
    import transformers.distributed.parallel_utils as pu
    from torch.distributed._functional_collectives import all_reduce

    class _Dist:
        def __getattr__(self, name):
            return getattr(dist, name)

        @staticmethod
        def all_reduce(x, op=None, group=None, async_op=False):
            x.copy_(all_reduce(x, "sum", group))

    saved = pu.dist
    pu.dist = _Dist()
    try:
        yield
    finally:
        pu.dist = saved


def config_summary(cfg, args):
    keys = ["hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
            "num_key_value_heads", "vocab_size", "num_local_experts", "num_experts_per_tok",
            "hidden_act", "rms_norm_eps", "tie_word_embeddings"]
    out = {k: getattr(cfg, k) for k in keys}
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
    from transformers.distributed.expert_parallel import EPImplementationInterface, apply_expert_parallelism

    hf.register_collective_schemas()
    n = args.world_size
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rank*.onnx"):
        old.unlink()
    if args.bug:
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
            plans, impls, desc = ep_plan(cfg, args)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
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
    layout = hf.check_weight_shards(seq, ranks)
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
        "bug": BUGS[args.bug].format(m=args.bug_module) if args.bug else None,
        "bug_module": args.bug_module if args.bug else None,
        "max_abs_error": max_err,
        "seq_vs_torch_max_abs_error": seq_err,
        "ep_plan": desc,
        "files": {"seq": "seq.onnx", "ranks": [f"rank{r}.onnx" for r in range(n)]},
        "produced_by": command,
    }
    hf.write_yaml(out / "case.yaml", data)
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"  wrote {out} ({size / 1024:.0f} KiB)")
    if args.verify:
        if seq_err > args.tol:
            raise SystemExit(f"seq ONNX does not match PyTorch: {seq_err}")
        if args.bug is None and max_err > args.tol:
            raise SystemExit(f"correct case {out.name}: ranks do not rebuild seq logits ({max_err})")
        if args.bug is not None and max_err <= 1e3 * args.tol:
            raise SystemExit(f"bug case {out.name}: error {max_err} is not clearly visible")
    return data


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--case", choices=sorted(PRESETS), help="produce one preset into examples/<case>/")
    sel.add_argument("--all", action="store_true", help="produce every preset")
    p.add_argument("--model", choices=sorted(FAMILIES), default="mixtral")
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--bug", choices=sorted(BUGS), default=None)
    p.add_argument("--bug-module", default=None, help="module of the bug (default depends on --bug)")
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--intermediate", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--experts", type=int, default=4)
    p.add_argument("--top-k", type=int, default=2)
    p.add_argument("--init-range", type=float, default=0.1, help="std of the random weights")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="output folder (default examples/<case>)")
    p.add_argument("--no-verify", dest="verify", action="store_false")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--stack-frames", type=int, default=3,
                   help="innermost stack frames kept in pkg.torch.onnx.stack_trace (0 = all)")
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
            a.bug_module = DEFAULT_BUG_MODULE[a.bug]
        if a.out is None:
            a.out = str(REPO / "examples" / (f"{a.model}_ep{a.world_size}" + (f"_bug_{a.bug}" if a.bug else "")))
        cmd = f"python scripts/export_moe.py --case {name}" if name else \
            "python scripts/export_moe.py " + shlex.join(argv)
        print(f"== {Path(a.out).name}: {a.model} world_size={a.world_size} bug={a.bug}", flush=True)
        produce(a, cmd)


if __name__ == "__main__":
    main()
