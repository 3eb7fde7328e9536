"""``shardlog export``: a PyTorch model and its tensor-parallel plan -> ``seq.onnx`` and one
``rank<r>.onnx`` per rank, the inputs of ``shardlog check``.

Each rank is traced in this one process with PyTorch's ``fake`` process-group backend: a copy
of the model is parallelized with ``torch.distributed.tensor.parallel.parallelize_module``
(``src_data_rank=None``: every rank slices its own chunk of the same weights), ``make_fx``
records it below DTensor (local ATen ops and ``_c10d_functional`` collectives), and
:mod:`analyzer.export.pipeline` turns that into ONNX (collectives as ``com.microsoft`` ops,
weights named by module path, module scopes and source frames kept, ``shardlog.rank`` and
``shardlog.world_size`` in the metadata). The sequential model goes through the same pipeline
without a process group, so both sides decompose alike.

Beyond the forward on tensor-parallel ranks, :func:`export_hf` exports a training step
(``train="sgd"|"adamw"``: :mod:`analyzer.export.train`) and a data-parallel x tensor-parallel
mesh (``mesh="tp=2,dp=2"``: :mod:`analyzer.export.mesh`, with ``seq_replica.onnx`` and the spec
``mesh.yaml``).

Needs the ``export`` extra: ``pip install 'shardlog[export]'`` (torch, transformers, onnxscript).

Example::

    from analyzer.export import export_hf
    export_hf({"model_type": "llama", "hidden_size": 64, ...}, world_size=2, out_dir="out")
    # shardlog check out/seq.onnx out/rank0.onnx out/rank1.onnx
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from analyzer.errors import InputError
from analyzer.export.collectives import with_collective_schemas

__all__ = ["export", "export_hf", "hf_config"]


def _need_torch() -> None:
    import importlib.util

    missing = [m for m in ("torch", "onnxscript") if importlib.util.find_spec(m) is None]
    if missing:
        raise InputError(f"shardlog export needs {', '.join(missing)}: pip install 'shardlog[export]'")


def _fresh_folder(out_dir: str | Path, world_size: int, names=()) -> Path:
    out = Path(out_dir)
    old = [out / "seq.onnx", *(out / f"rank{r}.onnx" for r in range(world_size)), *(out / n for n in names)]
    there = [p for p in old if p.exists()]
    if there:
        raise InputError(f"{there[0]}: exists; export into a new folder (nothing is overwritten)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {out}: {exc.strerror or exc}") from None
    return out


@with_collective_schemas
def export(
    model,
    plan: Mapping,
    world_size: int,
    example_inputs: Sequence,
    out_dir: str | Path,
    *,
    call: Callable | None = None,
    input_names: Sequence[str] = ("input_ids",),
    output_names: Sequence[str] = ("logits",),
    meta: Mapping[str, str] | None = None,
) -> list[Path]:
    """Export ``model`` sequentially and as ``world_size`` tensor-parallel ranks.

    Args:
        model: a ``torch.nn.Module`` in eval mode (not changed: each rank parallelizes a copy).
        plan: module path pattern -> parallel style (:mod:`analyzer.export.plan`).
        world_size: number of ranks N (>= 2).
        example_inputs: the tensors the forward is traced on (shapes are fixed in the export).
        out_dir: a folder without ``seq.onnx``/``rank*.onnx`` (created).
        call: ``call(model, *inputs) -> tensor``; default ``model(*inputs)``, its ``.logits``
            when the output has them, else its first element when it is a tuple.
        input_names: the ONNX graph input names, one per example input.
        output_names: the ONNX graph output name(s).
        meta: more ``shardlog.<key>`` metadata for every file.

    Returns:
        The files written: ``seq.onnx`` then ``rank0.onnx`` ... ``rank{N-1}.onnx``.

    Raises:
        InputError: the export extra is missing, a bad plan, world size or output folder.
    """
    _need_torch()
    import onnx
    import torch.distributed as dist
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.tensor.parallel import parallelize_module
    from torch.testing._internal.distributed.fake_pg import FakeStore

    from analyzer.export.collectives import register_collective_schemas, reset_dtensor_caches
    from analyzer.export.pipeline import constant_names, export_onnx, trace_call
    from analyzer.export.plan import resolve_plan

    if not isinstance(world_size, int) or world_size < 2:
        raise InputError(f"world size must be 2 or more, got {world_size!r}")
    call = call or _default_call
    inputs = tuple(example_inputs)
    resolve_plan(plan, model)  # a bad plan fails here, before anything is traced
    out = _fresh_folder(out_dir, world_size)
    register_collective_schemas()
    info = {"model": type(model).__name__, **(meta or {})}

    def one(m, rank: int, n: int, doc: str) -> onnx.ModelProto:
        gm = trace_call(m, inputs, call)
        names = {k: v for k, v in constant_names(gm, m).items()}
        return export_onnx(
            gm, inputs, names, rank=rank, world_size=n, meta={**info, "doc": doc},
            input_names=input_names, output_names=output_names,
        )  # fmt: skip

    if dist.is_initialized():
        dist.destroy_process_group()
    written = [out / "seq.onnx"]
    onnx.save(one(copy.deepcopy(model), -1, 1, f"{info['model']} sequential"), written[0])
    for r in range(world_size):
        dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=world_size)
        try:
            reset_dtensor_caches()
            mesh = DeviceMesh("cpu", list(range(world_size)))
            m = copy.deepcopy(model)
            styles = resolve_plan(plan, m)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parallelize_module(m, mesh, styles, src_data_rank=None)
            proto = one(m, r, world_size, f"{info['model']} tensor-parallel rank {r}/{world_size}")
        finally:
            dist.destroy_process_group()
        written.append(out / f"rank{r}.onnx")
        onnx.save(proto, written[-1])
    return written


def _default_call(model, *inputs):
    out = model(*inputs)
    if hasattr(out, "logits"):
        return out.logits
    return out[0] if isinstance(out, tuple) else out


def hf_config(config):
    """A Hugging Face config from a ``PretrainedConfig``, a mapping with ``model_type``, a
    ``config.json`` / YAML file of one, a model folder holding ``config.json``, or a Hub model
    name (``Qwen/Qwen2-0.5B``) whose config is in the local Hugging Face cache (never
    downloaded: ``local_files_only``); attention ``eager``, no KV cache.

    Raises:
        InputError: no ``model_type``, an unknown one, an unreadable file, or a name that is
            neither a file nor a model in the local cache.
    """
    import transformers

    if isinstance(config, (str, Path)):
        p = Path(config)
        if p.is_dir() and (p / "config.json").is_file():  # a model folder (save_pretrained, a snapshot)
            p = p / "config.json"
        if not p.is_file():
            return _hub_config(str(config))
        import yaml

        try:
            config = yaml.safe_load(p.read_text(encoding="utf-8"))  # JSON is YAML
        except yaml.YAMLError as exc:
            raise InputError(f"{p}: not a JSON/YAML config ({str(exc).splitlines()[0]})") from None
    if isinstance(config, Mapping):
        kw = dict(config)
        kind = kw.pop("model_type", None)
        if not kind:
            raise InputError("the config needs a model_type (llama, qwen2, mistral, ...)")
        try:
            config = transformers.AutoConfig.for_model(str(kind), **kw)
        except (ValueError, KeyError) as exc:
            raise InputError(f"config: {str(exc).splitlines()[0]}") from None
    config._attn_implementation = "eager"
    config.use_cache = False
    return config


def _hub_config(name: str):
    """The config of Hub model ``name`` from the local cache (``HF_HOME``, ``HF_HUB_CACHE``)."""
    import transformers

    try:
        return transformers.AutoConfig.from_pretrained(name, local_files_only=True)
    except (OSError, ValueError):
        raise InputError(
            f"{name}: no such config file, model folder or model in the local Hugging Face cache "
            f"(nothing is downloaded: fetch it first, e.g. huggingface-cli download {name} config.json)"
        ) from None


@with_collective_schemas
def export_hf(
    config,
    world_size: int | None,
    out_dir: str | Path,
    *,
    plan: Mapping | None = None,
    seq_len: int = 8,
    batch: int | None = None,
    seed: int = 0,
    mesh: Mapping[str, int] | str | None = None,
    train: str | None = None,
    clip: float | None = None,
) -> list[Path]:
    """Export a Hugging Face causal LM built from ``config`` with seeded random weights.

    Args:
        config: see :func:`hf_config` (a file, a model folder, a cached Hub name, a mapping).
        world_size: number of tensor-parallel ranks (None with ``mesh``).
        out_dir: a new folder.
        plan: module pattern -> style, ahead of the model's own ``tp_plan``
            (:func:`analyzer.export.plan.hf_plan`): a module a ``plan`` pattern matches takes
            that style, the model's plan covers the rest.
        seq_len, batch: the traced ``input_ids`` shape ``(batch, seq_len)``; the batch defaults
            to the data-parallel size (1 without one) and must be a multiple of it.
        seed: seed of the weights and of the example tokens.
        mesh: ``{"dp": D, "tp": T}`` or its text ``"tp=2,dp=2"`` (:mod:`analyzer.export.mesh`):
            a data-parallel x tensor-parallel mesh; ``dp=N`` alone is plain data parallelism.
        train: ``"sgd"`` or ``"adamw"``: export one training step (:mod:`analyzer.export.train`:
            loss, backward, gradient all-reduce over dp, update; outputs ``loss`` and
            ``updated.<param>``) instead of the forward.
        clip: with ``train``, clip the gradients to this total norm.

    Returns:
        The files written: ``seq.onnx``, then ``seq_replica.onnx`` and ``mesh.yaml`` for a
        two-axis mesh, then ``rank0.onnx`` ... in global rank order.

    Raises:
        InputError: the export extra is missing; a bad config, plan, mesh, batch, optimizer or
            output folder.
    """
    _need_torch()
    from analyzer.export.mesh import parse_mesh

    if mesh is not None and world_size is not None:
        raise InputError("give the world size or the mesh, not both")
    if mesh is None and world_size is None:
        raise InputError("give the world size (tensor-parallel ranks) or a mesh (tp=2,dp=2)")
    if isinstance(mesh, str):
        mesh = parse_mesh(mesh)
    elif mesh is not None:
        mesh = parse_mesh(",".join(f"{k}={v}" for k, v in mesh.items()))
    if train is not None and train not in ("sgd", "adamw"):
        raise InputError(f"--train {train!r}: the optimizer is sgd or adamw")
    if clip is not None and (train is None or not clip > 0):
        raise InputError("--clip needs --train and a positive norm")
    if mesh is None and train is None:
        return _export_hf_tp(config, world_size, out_dir, plan=plan, seq_len=seq_len, batch=batch or 1, seed=seed)
    if mesh is None:
        if not isinstance(world_size, int) or world_size < 2:
            raise InputError(f"world size must be 2 or more, got {world_size!r}")
        mesh = {"dp": 1, "tp": world_size}
    return _export_mesh(config, mesh, out_dir, plan=plan, seq_len=seq_len, batch=batch, seed=seed, train=train,
                        clip=clip)  # fmt: skip


def _export_mesh(config, mesh, out_dir, *, plan, seq_len, batch, seed, train, clip) -> list[Path]:
    """:func:`export_hf` on a mesh or for a training step (:mod:`analyzer.export.mesh`)."""
    import onnx
    import yaml

    from analyzer.export.mesh import FileJob, export_file
    from analyzer.export.plan import resolve_plan
    from analyzer.export.train import TrainOptions

    dp, tp = mesh["dp"], mesh["tp"]
    batch = batch or dp
    if batch % dp:
        raise InputError(f"the batch ({batch}) must be a multiple of the data-parallel size dp={dp}")
    cfg = hf_config(config)
    if tp > 1 or plan:  # a bad plan fails here, before anything is traced
        from analyzer.export.mesh import build_model
        from analyzer.export.plan import hf_plan

        probe = build_model(FileJob(cfg, plan, dp, tp, -1, batch, seq_len, seed))
        own = hf_plan(probe) if tp > 1 else {}
        resolve_plan({**(plan or {}), **{k: v for k, v in own.items() if k not in (plan or {})}}, probe)
    two_axes = dp > 1 and tp > 1
    world = dp * tp
    out = _fresh_folder(out_dir, world, ["seq_replica.onnx", "mesh.yaml"] if two_axes else [])
    opts = TrainOptions(optimizer=train, clip=clip, seed=seed) if train else None
    meta = {"mesh": f"dp={dp},tp={tp}"} if two_axes else {}
    jobs = [("seq.onnx", -1), *([("seq_replica.onnx", "replica")] if two_axes else []),
            *((f"rank{r}.onnx", r) for r in range(world))]  # fmt: skip
    written = []
    for name, rank in jobs:
        job = FileJob(cfg, dict(plan or {}), dp, tp, rank, batch, seq_len, seed, opts, meta if rank != -1 else {})
        data = _in_fresh_process(export_file, job) if two_axes else export_file(job)
        written.append(out / name)
        onnx.save(onnx.load_from_string(data), written[-1])
    if two_axes:
        relations = {"input_ids": {"dp": {"shard": 0}}, **({"labels": {"dp": {"shard": 0}}} if train else {})}
        spec = {"mesh": {"dp": dp, "tp": tp}, "replica_seq": "seq_replica.onnx", "relations": relations}
        (out / "mesh.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
        written.insert(2, out / "mesh.yaml")
    return written


def _in_fresh_process(fn, *args):
    """``fn(*args)`` in a new (spawned) process: DTensor's dispatch caches would carry one mesh
    rank's process groups into the next rank traced in the same process."""
    import concurrent.futures
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        return pool.submit(fn, *args).result()


def _export_hf_tp(
    config,
    world_size: int,
    out_dir: str | Path,
    *,
    plan: Mapping | None = None,
    seq_len: int = 8,
    batch: int = 1,
    seed: int = 0,
) -> list[Path]:
    """:func:`export_hf`'s forward on ``world_size`` tensor-parallel ranks, traced in this process."""
    _need_torch()
    import torch
    import transformers

    from analyzer.export.pipeline import hf_tracing_patches
    from analyzer.export.plan import hf_plan

    cfg = hf_config(config)
    torch.manual_seed(seed)
    try:
        model = transformers.AutoModelForCausalLM.from_config(cfg).eval()
    except ValueError as exc:
        raise InputError(f"config: {str(exc).splitlines()[0]}") from None
    for p in model.parameters():
        p.requires_grad_(False)
    g = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq_len), generator=g, dtype=torch.int64)

    def call(m, input_ids):
        return m(input_ids=input_ids, use_cache=False).logits

    own = hf_plan(model)
    merged = {**(plan or {}), **{k: v for k, v in own.items() if k not in (plan or {})}}  # plan's first
    with hf_tracing_patches():
        return export(
            model, merged, world_size, (ids,), out_dir, call=call,
            meta={"model": type(model).__name__},
        )  # fmt: skip
