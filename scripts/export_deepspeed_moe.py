#!/usr/bin/env python
"""Export a tiny model with DeepSpeed's MoE layer sequentially and expert-parallel (AllToAll).

The MoE layer is UNMODIFIED DeepSpeed code (``deepspeed.moe.layer.MoE`` ->
``deepspeed.moe.sharded_moe.MOELayer`` with ``TopKGate``, top-1 GShard gating with a capacity
factor; experts ``deepspeed.moe.experts.Experts``). DeepSpeed's expert parallelism is combined
with data parallelism: every rank routes its OWN tokens (the batch is ``Shard(0)``), places
them in a capacity buffer ``[E, C, M]`` (``_sparse_encode``: a scatter of the token ids into
their slots, then ``index_select``), exchanges the buffer with ``_AllToAll`` (chunk j = the
experts of rank j), runs its local experts on the slots of every source rank, exchanges the
results back with the second ``_AllToAll`` and combines them with the gate values
(``_sparse_decode``). The sequential graph is the same layer with ``ep_size=1`` (all experts
local, no all-to-all) on the whole batch.

Static shapes: ``drop_tokens=True`` with ``capacity_factor = eval_capacity_factor = E`` makes
the capacity ``ceil(S / E * E) = S`` (the tokens of the graph), so no token is dropped, in the
sequential graph or on any rank (``drop_tokens=False`` would read the capacity back from the
routing: data-dependent). ``use_rts=False``, no gate noise (eval mode).

Tracing: each rank with ``make_fx`` under PyTorch's ``fake`` process group, the expert-parallel
group set to the world group (``ep_size`` = world size; DeepSpeed's ``_create_process_groups``
builds the same group through ``deepspeed.comm``, which is not initialised here).
``_AllToAll.forward`` calls ``deepspeed.comm.all_to_all_single(output, input)`` (in place);
while tracing, ``sharded_moe.dist`` sees an ``all_to_all_single`` that computes the functional
``torch.distributed._functional_collectives.all_to_all_single`` (equal splits) and writes it
back, traced as ``_c10d_functional.all_to_all_single`` and exported as
``com.microsoft::AllToAll``. The rank graphs name the experts' weights with DeepSpeed's
checkpoint convention: global expert ids (``runtime/engine.py``, ``_save_moe_checkpoint``:
``global_expert_id = expp_rank * num_local_experts + local_expert_id``).

Bug variants (``--bug``), one-line changes:

* ``missing_combine_alltoall``: ``MOELayer.forward`` skips the second all-to-all (the
  combine): ``expert_output = _AllToAll.apply(self.ep_group, expert_output)`` removed: each
  rank combines the outputs of its experts for the other ranks' tokens.

Usage::

    DS_ACCELERATOR=cpu /work/venv-ds/bin/python scripts/export_deepspeed_moe.py --case deepspeed_moe_ep2
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_hf_tp as hf  # noqa: E402  (the TP producer's export pipeline)

REPO = Path(__file__).resolve().parents[1]
MSFT = "com.microsoft"

BUG_TEXT = {
    "missing_combine_alltoall": "MOELayer.forward of {m} skips the second all-to-all: the line "
    "expert_output = _AllToAll.apply(self.ep_group, expert_output) is removed, so every rank combines "
    "its own experts' outputs for the other ranks' tokens instead of the outputs for its own tokens",
}
BUG_TEXT["expert_checkpoint_round_robin"] = (
    "the expert-parallel checkpoint load of {m} maps local expert l of rank r to global expert "
    "l * ep_size + r (round-robin) instead of r * num_local_experts + l (DeepSpeed's global_expert_id), while "
    "the all-to-all sends the slots of experts [r*L, (r+1)*L) to rank r: tokens run through the wrong experts")
DEFAULT_BUG_MODULE = {"missing_combine_alltoall": "moe.deepspeed_moe",
                      "expert_checkpoint_round_robin": "moe.deepspeed_moe"}
PRESETS = {
    "deepspeed_moe_ep2": dict(world_size=2),
    "deepspeed_moe_ep2_bug_missing_combine_alltoall": dict(world_size=2, bug="missing_combine_alltoall"),
    "deepspeed_moe_ep2_bug_expert_checkpoint_round_robin": dict(world_size=2, bug="expert_checkpoint_round_robin"),
}


def build_model(args, ep_size):
    import torch
    from deepspeed.moe.layer import MoE
    from torch import nn

    class Expert(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(args.hidden, args.intermediate)
            self.fc2 = nn.Linear(args.intermediate, args.hidden)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    class TinyMoEModel(nn.Module):
        """A residual block around DeepSpeed's MoE layer and an output projection."""

        def __init__(self):
            super().__init__()
            self.moe = MoE(hidden_size=args.hidden, expert=Expert(), num_experts=args.experts, ep_size=ep_size,
                           k=1, capacity_factor=float(args.experts), eval_capacity_factor=float(args.experts),
                           min_capacity=4, drop_tokens=True, use_rts=False)
            self.out = nn.Linear(args.hidden, args.hidden)

        def forward(self, x):
            h = x + self.moe(x)[0]
            return self.out(h)

    return TinyMoEModel().eval()


def global_state(args):
    """Seeded weights of the sequential model, every expert distinct: (state_dict, x, torch output)."""
    import torch

    model = build_model(args, 1)
    g = torch.Generator().manual_seed(args.seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * args.init_range)
    sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
    x = torch.randn(args.batch, args.tokens, args.hidden, generator=g)
    with torch.no_grad():
        y = model(x)
    return sd, x, y


EXPERT_KEY = ".deepspeed_moe.experts.deepspeed_experts."
N_RANKS = {"n": 1}


def local_state(sd, rank, num_local, bug=None):
    """Rank ``rank``'s state dict: its block of experts under their local ids (``bug``
    ``expert_checkpoint_round_robin``: global expert l * ep_size + rank as local l)."""
    out = {}
    for k, v in sd.items():
        if EXPERT_KEY not in k:
            out[k] = v
            continue
        pre, rest = k.split(EXPERT_KEY)
        gid, tail = rest.split(".", 1)
        lid = int(gid) - rank * num_local
        if bug == "expert_checkpoint_round_robin":
            lid = int(gid) // N_RANKS["n"] if int(gid) % N_RANKS["n"] == rank else -1  # BUG (one line)
        if 0 <= lid < num_local:
            out[f"{pre}{EXPERT_KEY}{lid}.{tail}"] = v
    return out


def global_names(names, rank, num_local):
    """Rename the local expert ids to global ones (DeepSpeed's checkpoint convention)."""
    out = {}
    for node, name in names.items():
        if EXPERT_KEY in name:
            pre, rest = name.split(EXPERT_KEY)
            lid, tail = rest.split(".", 1)
            name = f"{pre}{EXPERT_KEY}{rank * num_local + int(lid)}.{tail}"
        out[node] = name
    return out


@contextlib.contextmanager
def functional_all_to_all(bug=None):
    """While tracing: DeepSpeed's in-place ``dist.all_to_all_single(output, input, group)``
    computed by the functional ``all_to_all_single`` (equal splits) and written back in place.
    ``bug``: ``missing_combine_alltoall`` makes every second ``_AllToAll`` (the combine of a
    layer) return its input, as if the line were removed from ``MOELayer.forward``."""
    import deepspeed.moe.sharded_moe as sm
    from torch.distributed._functional_collectives import all_to_all_single

    class _Dist:
        def __getattr__(self, name):
            return getattr(saved, name)

        @staticmethod
        def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                              async_op=False):
            assert output_split_sizes is None and input_split_sizes is None
            output.copy_(all_to_all_single(input, None, None, group))

    saved, saved_apply = sm.dist, sm._AllToAll.apply
    calls = [0]

    def apply(group, x):
        calls[0] += 1
        if bug == "missing_combine_alltoall" and calls[0] % 2 == 0:
            return x  # BUG (one line): expert_output = _AllToAll.apply(self.ep_group, expert_output) removed
        return saved_apply(group, x)

    sm.dist = _Dist()
    sm._AllToAll.apply = apply
    try:
        with tracing_patches():
            yield
    finally:
        sm.dist = saved
        sm._AllToAll.apply = saved_apply


@contextlib.contextmanager
def tracing_patches():
    """While tracing (same values, no data-dependent host reads): ``F.one_hot`` checks its
    indices' range with ``.item()`` (make_fx refuses): computed as ``indices[..., None] ==
    arange(num_classes)``; ``_capacity`` computed from the static shapes (the formula of
    ``sharded_moe._capacity``) as an untraced constant, so ``int(C)`` reads no traced tensor."""
    import math

    import deepspeed.moe.sharded_moe as sm
    import torch

    class _F:
        def __getattr__(self, name):
            return getattr(saved_f, name)

        @staticmethod
        def one_hot(x, num_classes=-1):
            return (x.unsqueeze(-1) == torch.arange(int(num_classes), device=x.device)).to(torch.int64)

    def capacity(gates, capacity_factor, min_capacity):
        s, e = gates.shape
        return torch.tensor(max(math.ceil(s / e * float(capacity_factor)), int(min_capacity)), dtype=torch.int64)

    saved_f, saved_c = sm.F, sm._capacity
    sm.F, sm._capacity = _F(), capacity
    try:
        yield
    finally:
        sm.F, sm._capacity = saved_f, saved_c


def register_all_to_all():
    """com.microsoft::AllToAll schema (onnxruntime contrib op: group_size) and its translation."""
    import onnx
    import onnx.defs as D
    import onnxscript
    import torch

    if not D.has("AllToAll", MSFT):
        D.register_schema(D.OpSchema(
            "AllToAll", MSFT, 1,
            inputs=[D.OpSchema.FormalParameter("input", "T")],
            outputs=[D.OpSchema.FormalParameter("output", "T")],
            type_constraints=[("T", ["tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(double)",
                                     "tensor(int64)", "tensor(int32)"], "")],
            attributes=[D.OpSchema.Attribute("group_size", onnx.helper.make_attribute("group_size", 1))],
        ))
    msft = onnxscript.values.Opset(MSFT, 1)

    def all_to_all_single(x, output_split_sizes, input_split_sizes, group_name: str):
        return msft.AllToAll(x, group_size=hf._WORLD["n"])

    table = hf.translation_table
    if getattr(table, "_with_a2a", False):
        return

    def with_a2a():
        t = table()
        t[torch.ops._c10d_functional.all_to_all_single.default] = all_to_all_single
        return t

    with_a2a._with_a2a = True
    hf.translation_table = with_a2a


def trace(model, x):
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    def forward(hidden):
        return model(hidden)

    forward._orig_mod = model
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = make_fx(forward, record_module_stack=True, record_stack_traces=True)(x)
    gm.eval()
    return gm


def export(gm, x, names, rank, n, meta):
    import onnx

    prog = hf.torch_export(gm, (x,), n, input_names=("hidden_states",), output_names=("output",))
    proto = prog.model_proto
    hf._rename_values(proto.graph, names)
    proto = hf._optimize_keeping_weights(proto, set(names.values()))
    g = proto.graph
    known = {v.name for v in list(g.value_info) + list(g.output) + list(g.input)}
    if any(o and o not in known for nd in g.node for o in nd.output):
        proto = onnx.shape_inference.infer_shapes(proto)
    return hf.finish_model(proto, rank, n, meta)


def produce(args, command):
    import deepspeed
    import onnx
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    hf.register_collective_schemas()
    register_all_to_all()
    n = args.world_size
    L = args.experts // n
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rank*.onnx"):
        old.unlink()
    sd, x, ref = global_state(args)
    meta = {"model": "deepspeed.moe.layer.MoE", "case": out.name}

    if dist.is_initialized():
        dist.destroy_process_group()
    model = build_model(args, 1)
    model.load_state_dict(sd, strict=True)
    with tracing_patches():
        gm = trace(model, x)
    seq = export(gm, x, hf.constant_names(gm, model), -1, 1,
                 {**meta, "doc": f"DeepSpeed MoE sequential, all {args.experts} experts (shardlog example {out.name})"})
    onnx.save(seq, out / "seq.onnx")

    ranks = []
    xs = torch.chunk(x, n, dim=0)
    for r in range(n):
        dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=n)
        try:
            model = build_model(args, n)
            N_RANKS["n"] = n
            model.load_state_dict(local_state(sd, r, L, args.bug), strict=True)
            model.moe.deepspeed_moe._set_ep_group(dist.group.WORLD)
            with functional_all_to_all(args.bug):
                gm = trace(model, xs[r])
            names = global_names(hf.constant_names(gm, model), r, L)
            proto = export(gm, xs[r], names, r, n,
                           {**meta, "doc": f"DeepSpeed MoE expert-parallel rank {r}/{n} (shardlog example {out.name})"})
        finally:
            dist.destroy_process_group()
        onnx.save(proto, out / f"rank{r}.onnx")
        ranks.append(proto)
    print(hf.describe(seq, ranks))

    import onnxruntime as ort



    sess = ort.InferenceSession(seq.SerializeToString(), providers=["CPUExecutionProvider"])
    seq_out = sess.run(None, {"hidden_states": x.numpy()})[0]
    seq_err = float(np.max(np.abs(seq_out - ref.numpy())))
    from analyzer.witness.collectives import Rendezvous  # the project's simulator (AllToAll included)
    from analyzer.witness.simulate import _run_threads

    feeds = [{"hidden_states": c.numpy()} for c in xs]
    outs = [v["output"] for v in _run_threads(ranks, feeds, Rendezvous(n, timeout=120), False)]
    max_err = float(np.max(np.abs(np.concatenate(outs, axis=0) - seq_out)))
    print(f"  seq onnx vs torch: {seq_err:.3g}   ranks (simulated) vs seq: {max_err:.3g}")

    data = {
        "model": {
            "class": "deepspeed.moe.layer.MoE (MOELayer, TopKGate k=1, Experts)",
            "deepspeed_version": str(deepspeed.__version__),
            "torch_version": str(torch.__version__),
            "config": {"hidden_size": args.hidden, "intermediate_size": args.intermediate,
                       "num_experts": args.experts, "k": 1, "capacity_factor": float(args.experts),
                       "eval_capacity_factor": float(args.experts), "min_capacity": 4, "drop_tokens": True,
                       "use_rts": False, "ep_size": n, "batch": args.batch, "tokens": args.tokens,
                       "seed": args.seed, "dtype": "float32"},
            "input": {"name": "hidden_states", "shape": list(x.shape), "dtype": "float32",
                      "rank_layout": "Shard(0) (data parallel: every rank routes its own tokens)"},
            "output": {"name": "output", "shape": list(x.shape), "dtype": "float32"},
        },
        "world_size": n,
        "expected": "discrepancy" if args.bug else "verified",
        "bug": BUG_TEXT[args.bug].format(m=args.bug_module) if args.bug else None,
        "bug_module": args.bug_module if args.bug else None,
        "max_abs_error": max_err,
        "seq_vs_torch_max_abs_error": seq_err,
        "files": {"seq": "seq.onnx", "ranks": [f"rank{r}.onnx" for r in range(n)]},
        "produced_by": command,
    }
    hf.write_yaml(out / "case.yaml", data)
    hf.check_case_errors(args, out, seq_err, max_err, output="output")


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", choices=sorted(PRESETS))
    p.add_argument("--all", action="store_true")
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--bug", choices=sorted(BUG_TEXT), default=None)
    p.add_argument("--bug-module", default=None)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--intermediate", type=int, default=32)
    p.add_argument("--experts", type=int, default=4)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--tokens", type=int, default=8)
    p.add_argument("--init-range", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None)
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--no-verify", dest="verify", action="store_false")
    p.add_argument("--stack-frames", type=int, default=3)
    return p.parse_args(argv)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("TORCH_LOGS", "-all")
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    args = parse(argv)
    hf._OPTS["stack_frames"] = args.stack_frames
    names = list(PRESETS) if args.all else [args.case]
    for name in names:
        a = hf.preset_args(parse, PRESETS, name, args) if name else args
        if a.bug and not a.bug_module:
            a.bug_module = DEFAULT_BUG_MODULE[a.bug]
        if args.out and not args.all:
            a.out = args.out
        if a.out is None:
            a.out = str(REPO / "examples" / name)
        print(f"== {Path(a.out).name}: world_size={a.world_size} bug={a.bug}", flush=True)
        produce(a, f"DS_ACCELERATOR=cpu python scripts/export_deepspeed_moe.py --case {name}")


if __name__ == "__main__":
    main()
