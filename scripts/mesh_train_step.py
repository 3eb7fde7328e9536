"""Export a TP x DP training step of a small Hugging Face Llama: sequential, replica and per rank.

The mesh is PyTorch's own: ``init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))`` on
the ``fake`` c10d backend. Each rank's model is parallelized with
``parallelize_module(model, mesh["tp"], base_model_tp_plan)`` (the plans of
``scripts/export_hf_tp.py``), gets the rows of its data-parallel replica, and runs one training
step as in ``scripts/export_train_step.py``: forward, loss normalized by the token count of the
*whole* batch (``num_items_in_batch``), ``torch.autograd.grad``, then the data-parallel gradient
all-reduce over ``mesh["dp"]``'s process group on each parameter's local gradient (what
``DistributedDataParallel`` / ``replicate(device_mesh=mesh["dp"])`` does for a tensor-parallel
model, without bucketing: ``funcol.all_reduce(g.to_local(), "sum", mesh["dp"])`` placed back
with the gradient's own tp placement), then ``param.add_(grad, alpha=-lr)`` on the DTensors (a
Partial gradient of a Replicate parameter is all-reduced over tp first); ``llama_tp2_dp2_adamw_clip``
clips by the norm of all gradients and runs ``torch.optim._functional.adamw`` instead, its state
entering as inputs ``state.<kind>.<param>`` chunked like the parameter. The loss is
all-reduced over dp too. Collectives carry ``mesh_axis`` (``"dp"`` or ``"tp"``, docs/mesh.md).

Files written into ``examples/<case>/``:
``seq.onnx`` (the sequential step on the whole batch), ``seq_replica.onnx`` (the data-parallel
step at tp=1 of replica 0: its rows, the gradient and loss all-reduces over ``dp``; every replica
runs this same program on its own rows), ``rank{r}.onnx`` for the 4 ranks (global rank
``r = i*2 + t``), ``mesh.yaml`` (the spec) and ``case.yaml``.

Bug variant ``grad_allreduce_over_tp``: the gradients are all-reduced over the tensor-parallel
group instead of the data-parallel one (``funcol.all_reduce(g, "sum", mesh["tp"])``: DDP given
``get_tensor_model_parallel_group()`` where ``get_data_parallel_group()`` belongs). The shapes
and the number of collectives are those of the correct program. Bug variant
``missing_dp_grad_allreduce``: the gradient of one parameter (``model.layers.1.mlp.down_proj``)
is not all-reduced over dp (left out of the buckets), so its update uses the replica's own
partial gradient.

Usage: ``python scripts/mesh_train_step.py --case llama_tp2_dp2_sgd`` (``--layers 1 --out DIR``
for a smaller copy elsewhere); about 3.5 minutes, each file traced in a fresh process.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_hf_tp as hf  # noqa: E402
import export_train_step as ets  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MESH = {"dp": 2, "tp": 2}
BUG = "grad_allreduce_over_tp"
MISSING = "missing_dp_grad_allreduce"
MISSING_TEXT = f"the gradient of {ets.BUG_PARAM} is not all-reduced over mesh['dp'] (left out of DDP's buckets)"
BUG_TEXT = (
    "gradients all-reduced over the tensor-parallel group (funcol.all_reduce(g, 'sum', mesh['tp'])) "
    "instead of the data-parallel group mesh['dp']"
)
PRESETS = {
    "llama_tp2_dp2_sgd": {},
    "llama_tp2_dp2_adamw_clip": {"optimizer": "adamw", "clip": True},
    "llama_tp2_dp2_sgd_bug_grad_allreduce_over_tp": {"bug": BUG},
    "llama_tp2_dp2_sgd_bug_missing_dp_grad_allreduce": {"bug": MISSING},
}


def _opts(args):
    """The package's step options for a preset: SGD or AdamW, clipped at export_train_step's CLIP."""
    from analyzer.export.train import TrainOptions

    return TrainOptions(optimizer=args.optimizer, clip=ets.CLIP if args.clip else None, lr=ets.LR,
                        steps_done=ets.STEPS_DONE, seed=args.seed)


def _train_step(model, args, dp_mesh=None, grad_mesh=None, skip=None):
    """The traced step (:func:`analyzer.export.train.train_step`: the same code makes the
    sequential step, the replica's data-parallel step and the TP x DP ranks' step). ``grad_mesh``:
    the mesh the gradients are all-reduced over (default ``dp_mesh``; the bug variant passes
    ``mesh["tp"]``); ``skip``: a parameter whose gradient is not all-reduced (the other bug)."""
    from analyzer.export.train import train_step

    return train_step(model, _opts(args), dp_mesh, grad_mesh, (skip,) if skip else ())


def _state(args, model):
    """AdamW's state inputs (names, full tensors; none for SGD)."""
    from analyzer.export.train import adamw_state

    return adamw_state(model, _opts(args))


def _trace(step, model, inputs):
    """make_fx of the step (:func:`analyzer.export.train.make_fx_step`)."""
    return ets.make_fx_step(step, model, inputs)


def _step_args(preset, layers=2):
    """The model options (export_hf_tp's defaults: the tiny Llama), optimizer and bug variant."""
    args = hf.parse([])
    args.mesh_bug, args.layers = preset.get("bug"), layers
    args.optimizer, args.clip = preset.get("optimizer", "sgd"), preset.get("clip", False)
    return args


def _batch(args):
    import torch

    cfg, sd, _, _ = hf.build_base_state(args)
    ids, labels = ets.batch(args, cfg)
    num_items = torch.tensor(float((labels[:, 1:] != -100).sum()))
    return cfg, sd, ids, labels, num_items


def _names(args, model):
    """(input names, output names) of the step."""
    from analyzer.export.train import step_names

    return step_names(model, _opts(args))


def _export_data_parallel(args, rank, world, meta):
    """The sequential step (world 1) or replica ``rank``'s data-parallel step at tp=1 on a 1-D
    ``("dp",)`` mesh (run in a fresh process); the dp all-reduces carry ``mesh_axis="dp"``.
    Returns ONNX bytes."""
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    hf.register_collective_schemas()
    cfg, sd, ids, labels, num_items = _batch(args)
    model = hf.fresh_model(args, cfg, sd)
    b = ids.shape[0] // world
    rows = slice(max(rank, 0) * b, (max(rank, 0) + 1) * b)
    inputs = [ids[rows], labels[rows], num_items, *_state(args, model)[1]]
    dp_mesh = None
    if world > 1:
        from torch.distributed.device_mesh import init_device_mesh

        dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world)
        dp_mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("dp",))
        hf._MESH_GROUPS[dp_mesh.get_group("dp").group_name] = ("dp", world)
    try:
        gm = _trace(_train_step(model, args, dp_mesh), model, inputs)
        names = ets._constant_names(gm, model)
        doc = "training step, sequential" if world == 1 else f"training step, data-parallel replica {rank}/{world}"
        proto = ets.export_step(gm, inputs, *_names(args, model), names, rank=rank if world > 1 else -1,
                                world_size=world, meta={**meta, "doc": doc})
    finally:
        if world > 1:
            dist.destroy_process_group()
    return proto.SerializeToString()


def _export_rank(args, r, meta):
    """Global rank ``r`` = (dp i, tp t) of the TP x DP step (run in a fresh process)."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import parallelize_module
    from torch.testing._internal.distributed.fake_pg import FakeStore

    hf.register_collective_schemas()
    dp, tp = MESH["dp"], MESH["tp"]
    cfg, sd, ids, labels, num_items = _batch(args)
    b = ids.shape[0] // dp
    i, t = divmod(r, tp)
    dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=dp * tp)
    try:
        dm = init_device_mesh("cpu", (dp, tp), mesh_dim_names=("dp", "tp"))
        for ax in ("dp", "tp"):
            hf._MESH_GROUPS[dm.get_group(ax).group_name] = (ax, dm[ax].size())
        model = hf.fresh_model(args, cfg, sd)
        plan, plan_desc = hf.tp_plan(args, cfg, dm["tp"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parallelize_module(model, dm["tp"], plan, src_data_rank=None)
        params = [p for _, p in model.named_parameters()] * 2  # exp_avg, exp_avg_sq
        state = [ets._local_chunk(s, p) for s, p in zip(_state(args, model)[1], params)]
        inputs = [ids[i * b : (i + 1) * b], labels[i * b : (i + 1) * b], num_items, *state]
        grad_mesh = dm["tp"] if args.mesh_bug == BUG else dm["dp"]  # BUG (one line): mesh["tp"] for mesh["dp"]
        skip = ets.BUG_PARAM if args.mesh_bug == MISSING else None  # BUG (one line)
        gm = _trace(_train_step(model, args, dm["dp"], grad_mesh, skip), model, inputs)
        names = ets._constant_names(gm, model)
        doc = f"training step, rank {r} = (dp {i}, tp {t}) of mesh dp={dp} x tp={tp}"
        proto = ets.export_step(gm, inputs, *_names(args, model), names, rank=r,
                                world_size=dp * tp, meta={**meta, "doc": doc, "mesh": f"dp={dp},tp={tp}"})
    finally:
        dist.destroy_process_group()
    return proto.SerializeToString(), plan_desc


def _in_fresh_process(fn, *args):
    """Run ``fn(*args)`` in a new process: DTensor's dispatch caches compare meshes by layout,
    not by process group, so a second rank traced in one process would reuse the first's
    groups (docs/mesh.md)."""
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        return pool.submit(fn, *args).result()


def _verify(seq, replica, ranks, args):
    """Run the files (onnxruntime for seq, the mesh simulator for the ranks): returns
    (replica vs seq max abs error of every output, ranks vs seq max abs error)."""
    import onnxruntime as ort

    cfg, sd, ids, labels, num_items = _batch(args)
    state_names, state = _state(args, hf.fresh_model(args, cfg, sd))
    feeds = {"input_ids": ids.numpy(), "labels": labels.numpy(), "num_items_in_batch": num_items.numpy(),
             **{n: t.numpy() for n, t in zip(state_names, state)}}
    sess = ort.InferenceSession(seq.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    dp, tp = MESH["dp"], MESH["tp"]
    b = ids.shape[0] // dp
    batch = ("input_ids", "labels")
    rows = [{k: (v[i * b : (i + 1) * b] if k in batch else v) for k, v in feeds.items()} for i in range(dp)]
    rep = simulate_mesh_outputs([replica] * dp, rows, {"dp": dp})
    rep_err = max(float(np.max(np.abs(np.asarray(o) - np.asarray(w)))) for o, w in zip(rep[0], want))
    outs = simulate_mesh_outputs(ranks, [_tp_piece(ranks[r], rows[r // tp], r % tp) for r in range(dp * tp)], MESH)
    full = [np.asarray(w) for w in want]
    err = 0.0
    for r, o in enumerate(outs):
        for got, w in zip(o, full):
            if got.shape != w.shape:  # a tp shard of a parameter: compare with its chunk
                axis = next(a for a, (x, y) in enumerate(zip(got.shape, w.shape)) if x != y)
                w = np.split(w, tp, axis=axis)[r % tp]
            err = max(err, float(np.max(np.abs(got - w))))
    return rep_err, err


def _tp_piece(model, feeds, t):
    """``feeds`` with every input whose shape in ``model`` is smaller cut to chunk ``t`` along the
    divided axis (AdamW's state of a tp-sharded parameter)."""
    out = {}
    for inp in model.graph.input:
        v = feeds[inp.name]
        dims = [d.dim_value for d in inp.type.tensor_type.shape.dim]
        axis = next((a for a, (x, y) in enumerate(zip(dims, v.shape)) if x != y), None)
        out[inp.name] = v if axis is None else np.split(v, v.shape[axis] // dims[axis], axis=axis)[t]
    return out


def simulate_mesh_outputs(protos, feeds, mesh):
    """Every output of every rank file run together (mesh_export.simulate_mesh returns the first)."""
    import mesh_export

    return mesh_export.simulate_mesh(protos, feeds, mesh, all_outputs=True)


def produce(name, verify=True, out=None, layers=2):
    """Write the case ``name`` (a PRESETS key) into ``out`` (default examples/<name>).

    Raises:
        SystemExit: the simulated files do not back the case (the replicas or, for the correct
            step, the ranks do not rebuild the sequential step; a bug's error is not visible).
    """
    import onnx
    import torch
    import transformers

    args = _step_args(PRESETS[name], layers)
    out = Path(out) if out else REPO / "examples" / name
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rank*.onnx"):
        old.unlink()
    hf.register_collective_schemas()
    meta = {"model": hf.FAMILIES[args.model][1], "case": name}
    dp, tp = MESH["dp"], MESH["tp"]
    seq = onnx.load_from_string(_in_fresh_process(_export_data_parallel, args, -1, 1, meta))
    onnx.save(seq, out / "seq.onnx")
    replica = onnx.load_from_string(_in_fresh_process(_export_data_parallel, args, 0, dp, meta))
    onnx.save(replica, out / "seq_replica.onnx")
    ranks = []
    for r in range(dp * tp):
        data, plan_desc = _in_fresh_process(_export_rank, args, r, meta)
        ranks.append(onnx.load_from_string(data))
        onnx.save(ranks[-1], out / f"rank{r}.onnx")
    rep_err = max_err = None
    if verify:
        rep_err, max_err = _verify(seq, replica, ranks, args)
        print(f"  replicas (simulated) vs seq: {rep_err:.3g}   ranks (simulated) vs seq: {max_err:.3g}")
        if rep_err > 1e-3 or (args.mesh_bug is None and max_err > 1e-3):
            raise SystemExit(f"{name}: the simulated files do not rebuild the sequential step ({rep_err}, {max_err})")
        if args.mesh_bug is not None and max_err <= 1e-3:  # the correct step: 5e-7
            raise SystemExit(f"bug case {name}: error {max_err} is not clearly visible")
    cfg, *_ = _batch(args)
    hf.write_yaml(out / "mesh.yaml", {
        "mesh": MESH,
        "replica_seq": "seq_replica.onnx",
        "relations": {"input_ids": {"dp": {"shard": 0}}, "labels": {"dp": {"shard": 0}}},
    })
    hf.write_yaml(out / "case.yaml", {
        "model": {"hf_class": meta["model"], "config": hf.config_summary(cfg, args),
                  "transformers_version": str(transformers.__version__), "torch_version": str(torch.__version__),
                  "batch": ets.BATCH, "seq_len": hf.SEQ_LEN},
        "training_step": {"parallel": "tensor x data", "optimizer": args.optimizer, "clip": bool(args.clip),
                          "lr": ets.LR},
        "world_size": dp * tp,
        "mesh": MESH,
        "expected": "discrepancy" if args.mesh_bug else "verified",
        "bug": {BUG: BUG_TEXT, MISSING: MISSING_TEXT}.get(args.mesh_bug),
        "bug_module": ets.BUG_PARAM.rsplit(".", 1)[0] if args.mesh_bug == MISSING else None,
        "max_abs_error": max_err,
        "replica_vs_seq_max_abs_error": rep_err,
        "tp_plan": plan_desc,
        "files": {"seq": "seq.onnx", "ranks": [f"rank{r}.onnx" for r in range(dp * tp)], "spec": "mesh.yaml"},
        "produced_by": f"python scripts/mesh_train_step.py --case {name}" + (f" --layers {layers}" * (layers != 2)),
    })
    print(f"  wrote {out}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", choices=sorted(PRESETS), required=True)
    p.add_argument("--no-verify", dest="verify", action="store_false")
    p.add_argument("--out", default=None, help="output folder (default examples/<case>)")
    p.add_argument("--layers", type=int, default=2, help="decoder layers of the tiny Llama")
    a = p.parse_args(argv)
    produce(a.case, a.verify, a.out, a.layers)


if __name__ == "__main__":
    main()
