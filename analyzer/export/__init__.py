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

__all__ = ["export", "export_hf", "hf_config"]


def _need_torch() -> None:
    import importlib.util

    missing = [m for m in ("torch", "onnxscript") if importlib.util.find_spec(m) is None]
    if missing:
        raise InputError(f"shardlog export needs {', '.join(missing)}: pip install 'shardlog[export]'")


def _fresh_folder(out_dir: str | Path, world_size: int) -> Path:
    out = Path(out_dir)
    old = [out / "seq.onnx", *(out / f"rank{r}.onnx" for r in range(world_size))]
    there = [p for p in old if p.exists()]
    if there:
        raise InputError(f"{there[0]}: exists; export into a new folder (nothing is overwritten)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {out}: {exc.strerror or exc}") from None
    return out


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
    """A Hugging Face config from a ``PretrainedConfig``, a mapping with ``model_type``, or a
    ``config.json`` / YAML file of one (attention ``eager``, no KV cache).

    Raises:
        InputError: no ``model_type``, an unknown one, or an unreadable file.
    """
    import transformers

    if isinstance(config, (str, Path)):
        p = Path(config)
        if not p.is_file():
            raise InputError(f"{p}: no such config file (a Hugging Face config.json, or YAML with model_type)")
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


def export_hf(
    config,
    world_size: int,
    out_dir: str | Path,
    *,
    plan: Mapping | None = None,
    seq_len: int = 8,
    batch: int = 1,
    seed: int = 0,
) -> list[Path]:
    """Export a Hugging Face causal LM built from ``config`` with seeded random weights.

    Args:
        config: see :func:`hf_config`.
        world_size: number of tensor-parallel ranks.
        out_dir: a new folder.
        plan: module pattern -> style, ahead of the model's own ``tp_plan``
            (:func:`analyzer.export.plan.hf_plan`): a module a ``plan`` pattern matches takes
            that style, the model's plan covers the rest.
        seq_len, batch: the traced ``input_ids`` shape ``(batch, seq_len)``.
        seed: seed of the weights and of the example tokens.

    Returns:
        As :func:`export`.
    """
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
