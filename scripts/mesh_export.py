"""Two-dimensional meshes (TP x DP) for ``export_hf_tp.py --mesh dp=2,tp=2``.

The model is the same unmodified Hugging Face causal LM as for tensor parallelism; the mesh is
PyTorch's own: ``init_device_mesh("cpu", (DP, TP), mesh_dim_names=("dp", "tp"))`` on the
``fake`` c10d backend (world DP*TP), then ``parallelize_module(model, mesh["tp"], plan)`` with
the model's ``base_model_tp_plan`` (as ``export_hf_tp.tp_plan``), and the batch split over
``dp``: global rank ``r = i*TP + t`` (``DeviceMesh`` is row-major) gets rows
``[i*B/DP, (i+1)*B/DP)`` of ``input_ids``. The forward has no data-parallel collective; the
tensor-parallel ones run over ``mesh["tp"]``'s process group. The translation table of
``export_hf_tp`` writes the mesh axis of each collective's process group as the string
attribute ``mesh_axis`` (``com.microsoft::AllReduce(mesh_axis="tp", group_size=2, ...)``), the
axis-name analogue of ONNX Runtime's ``NcclAllReduce(group_type=...)`` (docs/mesh.md).

Files written into the case folder: ``seq.onnx`` (the sequential model on the global batch),
``seq_replica.onnx`` (the same pipeline on one data-parallel replica's batch, B/DP rows: what
each dp group computes), ``rank{r}.onnx`` for r in 0..DP*TP-1, ``mesh.yaml`` (the spec:
``mesh``, ``replica_seq`` and ``input_ids: {dp: {shard: 0}}``) and ``case.yaml``.

Bug variant ``wrong_group_allreduce``: one row-parallel ``mlp.down_proj`` all-reduces its
partial sum over the data-parallel group (``funcol.all_reduce(local, "sum", dp_mesh)``) where
``RowwiseParallel`` reduces over the tensor-parallel one (the mesh it was given): the classic
"collective over the wrong process group" (``get_data_parallel_group()`` passed where
``get_tensor_model_parallel_group()`` belongs). Its shapes and op sequence are those of the
correct program; only the ``mesh_axis`` attribute differs.
"""

from __future__ import annotations

import sys
import threading
import warnings
from pathlib import Path

import numpy as np

BUG = "wrong_group_allreduce"
BUG_TEXT = (
    "row-parallel {m} all-reduces its partial sum over the data-parallel group "
    "(funcol.all_reduce(local, 'sum', mesh['dp'])) instead of the tensor-parallel group it was "
    "planned on (RowwiseParallel() on mesh['tp'])"
)
DEFAULT_BUG_MODULE = "model.layers.1.mlp.down_proj"


def parse_mesh(text: str) -> dict[str, int]:
    """``"dp=2,tp=2"`` -> ``{"dp": 2, "tp": 2}`` (only this axis order is produced)."""
    out = {}
    for part in text.split(","):
        name, _, size = part.partition("=")
        if not size.isdigit() or int(size) < 1:
            raise SystemExit(f"--mesh {text!r}: expected name=size,name=size like dp=2,tp=2")
        out[name.strip()] = int(size)
    if list(out) != ["dp", "tp"]:
        raise SystemExit(f"--mesh {text!r}: only the mesh dp=D,tp=T is produced")
    return out


def _wrong_group_rowwise(dp_mesh):
    """RowwiseParallel whose output all-reduce runs over ``dp_mesh`` (the bug variant)."""
    from torch.distributed import _functional_collectives as funcol
    from torch.distributed.tensor import Partial
    from torch.distributed.tensor.parallel import RowwiseParallel

    class WrongGroupRowwise(RowwiseParallel):
        def __init__(self):
            super().__init__(output_layouts=Partial())

        @staticmethod
        def _prepare_output_fn(output_layouts, use_local_output, mod, outputs, device_mesh):
            local = outputs.to_local()  # the partial sum of this tp rank
            return funcol.all_reduce(local, "sum", dp_mesh)  # BUG (one line): was device_mesh (tp)

    return WrongGroupRowwise()


def _export_rank(args, r):
    """Export global rank ``r`` (run in a fresh process); returns (ONNX bytes, plan text)."""
    import export_hf_tp as hf
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import parallelize_module
    from torch.testing._internal.distributed.fake_pg import FakeStore

    hf._OPTS["stack_frames"] = args.stack_frames
    hf.register_collective_schemas()
    mesh = parse_mesh(args.mesh)
    dp, tp = mesh["dp"], mesh["tp"]
    n = dp * tp
    cfg, sd, ids, _ = hf.build_base_state(args)
    b = ids.shape[0] // dp
    hf_class = hf.FAMILIES[args.model][1]
    i, t = divmod(r, tp)
    dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=n)
    try:
        dm = init_device_mesh("cpu", (dp, tp), mesh_dim_names=("dp", "tp"))
        for ax in ("dp", "tp"):
            hf._MESH_GROUPS[dm.get_group(ax).group_name] = (ax, dm[ax].size())
        model = hf.fresh_model(args, cfg, sd)
        plan, plan_desc = hf.tp_plan(args, cfg, dm["tp"])
        if args.bug == BUG:
            plan[args.bug_module] = _wrong_group_rowwise(dm["dp"])
            plan_desc[args.bug_module] = "RowwiseParallel() whose all-reduce runs over mesh['dp']  # BUG"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parallelize_module(model, dm["tp"], plan, src_data_rank=None)
        local_ids = ids[i * b : (i + 1) * b]
        gm = hf.trace(model, local_ids)
        case = Path(args.out).name
        doc = f"{hf_class} rank {r} = (dp {i}, tp {t}) of mesh dp={dp} x tp={tp} (shardlog example {case})"
        meta = {"model": hf_class, "case": case, "doc": doc, "mesh": f"dp={dp},tp={tp}"}
        proto = hf.export_onnx(gm, local_ids, hf.constant_names(gm, model), rank=r, world_size=n, meta=meta)
    finally:
        dist.destroy_process_group()
    return proto.SerializeToString(), plan_desc


class _GroupComm:
    """Rendezvous of the rank threads of one process group (issue order, as NCCL)."""

    def __init__(self, members):
        self.members = list(members)
        self.barrier = threading.Barrier(len(self.members), timeout=120)
        self.slots = {}

    def exchange(self, rank, tag, x):
        self.slots[rank] = (tag, x)
        self.barrier.wait()
        got = [self.slots[m] for m in self.members]
        self.barrier.wait()
        if len({t for t, _ in got}) != 1:
            raise RuntimeError(f"collective differs across ranks {self.members}: {[t for t, _ in got]}")
        return [v for _, v in got]


def simulate_mesh(protos, feeds, mesh, all_outputs=False):
    """Run the rank files together; each collective meets the ranks of its ``mesh_axis``.
    Returns each rank's first output (``all_outputs``: the list of its outputs)."""
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.op_run import OpRun

    names, sizes = list(mesh), list(mesh.values())
    n = int(np.prod(sizes))
    coords = [np.unravel_index(r, sizes) for r in range(n)]
    comms = {}
    for ax_i, ax in enumerate(names):
        for r in range(n):
            key = (ax, tuple(c for j, c in enumerate(coords[r]) if j != ax_i))
            comms.setdefault(key, [])
            comms[key].append(r)
    comms = {k: _GroupComm(v) for k, v in comms.items()}

    def comm_of(rank, group):
        ax_i = names.index(group)
        return comms[(group, tuple(c for j, c in enumerate(coords[rank]) if j != ax_i))]

    def ops(rank):
        class AllReduce(OpRun):
            op_domain = "com.microsoft"

            def _run(self, x, group_size=None, reduction=None, mesh_axis=None):
                c = comm_of(rank, mesh_axis)
                xs = c.exchange(rank, ("AllReduce", x.shape, mesh_axis), x)
                return (np.sum(np.stack(xs), axis=0).astype(x.dtype),)

        class AllGather(OpRun):
            op_domain = "com.microsoft"

            def _run(self, x, group_size=None, axis=None, mesh_axis=None):
                c = comm_of(rank, mesh_axis)
                xs = c.exchange(rank, ("AllGather", x.shape, axis, mesh_axis), x)
                return (np.concatenate(xs, axis=axis or 0),)

        return [AllReduce, AllGather]

    results, errors = [None] * n, [None] * n

    def run(r):
        try:
            outs = ReferenceEvaluator(protos[r], new_ops=ops(r)).run(None, feeds[r])
            results[r] = outs if all_outputs else outs[0]
        except Exception as e:  # noqa: BLE001
            errors[r] = e
            for c in comms.values():
                c.barrier.abort()

    threads = [threading.Thread(target=run, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first = next((e for e in errors if e is not None and not isinstance(e, threading.BrokenBarrierError)), None)
    if first is not None or any(errors):
        raise first or next(e for e in errors if e)
    return results


def produce_mesh(args, command, hf):
    """Export a TP x DP case (``hf`` is the ``export_hf_tp`` module)."""
    import onnx
    import torch
    import torch.distributed as dist
    import transformers

    mesh = parse_mesh(args.mesh)
    dp, tp = mesh["dp"], mesh["tp"]
    n = dp * tp
    if args.bug not in (None, BUG):
        raise SystemExit(f"--mesh: the bug variant is --bug {BUG}")
    hf.register_collective_schemas()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rank*.onnx"):
        old.unlink()

    args.batch = dp * max(1, args.batch // dp)
    cfg, sd, ids, ref_logits = hf.build_base_state(args)
    b = ids.shape[0] // dp
    hf_class = hf.FAMILIES[args.model][1]
    meta = {"model": hf_class, "case": out.name}

    if dist.is_initialized():
        dist.destroy_process_group()
    for name, batch_ids in (("seq", ids), ("seq_replica", ids[:b])):
        model = hf.fresh_model(args, cfg, sd)
        gm = hf.trace(model, batch_ids)
        doc = f"{hf_class} sequential, batch {batch_ids.shape[0]} (shardlog example {out.name})"
        proto = hf.export_onnx(gm, batch_ids, hf.constant_names(gm, model), rank=-1, world_size=1,
                               meta={**meta, "doc": doc})
        onnx.save(proto, out / f"{name}.onnx")
        if name == "seq":
            seq = proto
        else:
            replica = proto

    # one fresh process per rank: DTensor's C++ dispatch cache keys sharding decisions by mesh,
    # and two meshes compare equal by layout and names, not by process group, so a second rank
    # traced in this process would reuse the first one's groups
    import concurrent.futures
    import multiprocessing

    ranks, rank_ids = [], []
    ctx = multiprocessing.get_context("spawn")
    for r in range(n):
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as pool:
            data, plan_desc = pool.submit(_export_rank, args, r).result()
        proto = onnx.load_from_string(data)
        onnx.save(proto, out / f"rank{r}.onnx")
        ranks.append(proto)
        rank_ids.append(ids[(r // tp) * b : (r // tp + 1) * b])

    print(hf.describe(seq, ranks))

    seq_err = max_err = None
    if args.verify:
        import onnxruntime as ort

        def run_ort(proto, x):
            sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
            return sess.run(None, {"input_ids": x.numpy()})[0]

        seq_logits = run_ort(seq, ids)
        seq_err = float(np.max(np.abs(seq_logits - ref_logits.numpy())))
        rep_err = float(np.max(np.abs(run_ort(replica, ids[:b]) - ref_logits[:b].numpy())))
        seq_err = max(seq_err, rep_err)
        outs = simulate_mesh(ranks, [{"input_ids": x.numpy()} for x in rank_ids], mesh)
        max_err = float(max(np.max(np.abs(o - seq_logits[(r // tp) * b : (r // tp + 1) * b]))
                            for r, o in enumerate(outs)))
        print(f"  seq onnx vs torch: {seq_err:.3g}   ranks (simulated, per group) vs seq: {max_err:.3g}")

    hf.write_yaml(out / "mesh.yaml", {
        "mesh": mesh,
        "replica_seq": "seq_replica.onnx",
        "relations": {"input_ids": {"dp": {"shard": 0}}},
    })
    bug_module = args.bug_module if args.bug else None
    data = {
        "model": {
            "hf_class": hf_class,
            "transformers_version": str(transformers.__version__),
            "torch_version": str(torch.__version__),
            "config": hf.config_summary(cfg, args),
            "input": {"name": "input_ids", "shape": list(ids.shape), "dtype": "int64"},
            "output": {"name": "logits", "shape": [*ids.shape, cfg.vocab_size], "dtype": "float32"},
        },
        "world_size": n,
        "mesh": mesh,
        "expected": "discrepancy" if args.bug else "verified",
        "bug": BUG_TEXT.format(m=bug_module) if args.bug else None,
        "bug_module": bug_module,
        "max_abs_error": max_err,
        "seq_vs_torch_max_abs_error": seq_err,
        "tp_plan": plan_desc,
        "files": {"seq": "seq.onnx", "ranks": [f"rank{r}.onnx" for r in range(n)], "spec": "mesh.yaml"},
        "produced_by": command,
    }
    hf.write_yaml(out / "case.yaml", data)
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"  wrote {out} ({size / 1024:.0f} KiB)")
    if args.verify:
        hf.check_case_errors(args, out, seq_err, max_err)
    return data


if __name__ == "__main__":
    sys.exit("run scripts/export_hf_tp.py --mesh dp=2,tp=2")
