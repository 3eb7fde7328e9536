"""A tensor-parallel plan: module path (``fnmatch`` pattern) -> how the module is parallelized.

A style is a ``torch.distributed.tensor.parallel`` ``ParallelStyle``, or text naming one:
PyTorch's own spelling (``ColwiseParallel()``, ``RowwiseParallel(output_layouts=Replicate())``,
``SequenceParallel()``; the arguments are DTensor placements ``Replicate()``, ``Shard(d)``,
``Partial()`` and constants, read by :mod:`ast`, never evaluated), or a Hugging Face ``tp_plan``
word: ``colwise``, ``rowwise``, ``colwise_rep`` / ``colwise_gather_output`` (a column-parallel
layer whose output is all-gathered), ``embedding_rowwise`` (a vocab-parallel embedding),
``rowwise_split_input`` / ``rowwise_rep`` (a row-parallel layer whose replicated input each
rank splits itself), ``sequence_parallel``, and ``replicated_with_grad_allreduce`` (Qwen3's
per-head ``q_norm``/``k_norm``: the module stays replicated, its forward has no collective;
only its parameter gradient is all-reduced, which an inference export does not trace). The
words and what they stand for are those of ``transformers/distributed/tensor_parallel.py``
(``ALL_PARALLEL_STYLES``). A plan file is YAML: ``{model.layers.*.mlp.down_proj: RowwiseParallel()}``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from fnmatch import fnmatchcase

from analyzer.errors import InputError

__all__ = ["hf_plan", "load_plan", "resolve_plan", "style_of", "style_text"]

_STYLES = ("ColwiseParallel", "RowwiseParallel", "SequenceParallel", "PrepareModuleInput", "PrepareModuleOutput")
_PLACEMENTS = ("Replicate", "Shard", "Partial")
_HF_WORDS = {
    "colwise": "ColwiseParallel()",
    "rowwise": "RowwiseParallel()",
    "colwise_rep": "ColwiseParallel(output_layouts=Replicate())",
    "colwise_gather_output": "ColwiseParallel(output_layouts=Replicate())",
    "embedding_rowwise": "RowwiseParallel(input_layouts=Replicate())",
    "rowwise_split_input": "RowwiseParallel(input_layouts=Replicate())",
    "rowwise_rep": "RowwiseParallel(input_layouts=Replicate())",
    "sequence_parallel": "SequenceParallel()",
}
#: Hugging Face words for a module left replicated (no parallel style in the forward)
_HF_REPLICATED = ("replicated_with_grad_allreduce",)


def _value(node: ast.expr, where: str):
    from torch.distributed import tensor

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _PLACEMENTS:
        args = [_value(a, where) for a in node.args]
        return getattr(tensor, node.func.id)(*args)
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_value(e, where) for e in node.elts)
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise InputError(f"{where}: {ast.unparse(node)!r} is not a placement or a constant") from None


def style_text(entry: str) -> str | None:
    """PyTorch's spelling of a plan entry: a Hugging Face word translated
    (``"colwise_gather_output"`` -> ``"ColwiseParallel(output_layouts=Replicate())"``), any other
    text as it is; ``None`` for a word that leaves the module replicated
    (``replicated_with_grad_allreduce``)."""
    word = entry.strip()
    if word in _HF_REPLICATED:
        return None
    return _HF_WORDS.get(word, entry)


def style_of(text_or_style, where: str = "plan"):
    """The ``ParallelStyle`` a plan entry names (an instance is returned as it is); ``None`` for
    a Hugging Face word that leaves the module replicated (:func:`style_text`).

    Raises:
        InputError: not a style call nor a supported Hugging Face word (one line).
    """
    if not isinstance(text_or_style, str):
        return text_or_style
    text = style_text(text_or_style)
    if text is None:
        return None
    try:
        call = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        call = None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.func.id not in _STYLES:
        words = ", ".join([*_HF_WORDS, *_HF_REPLICATED])
        raise InputError(f"{where}: {text_or_style!r} is not a parallel style (ColwiseParallel(), ... or {words})")
    from torch.distributed.tensor import parallel

    args = [_value(a, where) for a in call.args]
    kwargs = {k.arg: _value(k.value, where) for k in call.keywords}
    try:
        return getattr(parallel, call.func.id)(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: {text}: {exc}") from None


def resolve_plan(plan: Mapping, model) -> dict:
    """``{module path: ParallelStyle}`` for every module of ``model`` a plan pattern matches
    (a module matched by several patterns takes the first; one whose entry leaves it replicated,
    :func:`style_text`, is matched and left out).

    Raises:
        InputError: a pattern matches no module, or an entry is not a style.
    """
    names = [n for n, _ in model.named_modules() if n]
    out: dict = {}
    for pattern, entry in plan.items():
        hits = [n for n in names if fnmatchcase(n, str(pattern))]
        if not hits:
            raise InputError(f"plan: {pattern!r} matches no module of the model")
        for name in hits:
            out.setdefault(name, style_of(entry, f"plan: {pattern}"))
    return {name: style for name, style in out.items() if style is not None}


def hf_plan(model) -> dict:
    """A Hugging Face model's own tensor-parallel plan (``model.tp_plan``, else the config's
    ``base_model_tp_plan`` under the base model's prefix).

    Raises:
        InputError: the model has none.
    """
    plan = dict(getattr(model, "tp_plan", None) or {})
    if not plan:
        base = getattr(model.config, "base_model_tp_plan", None) or {}
        prefix = getattr(model, "base_model_prefix", "")
        plan = {f"{prefix}.{k}" if prefix else k: v for k, v in base.items()}
    if not plan:
        raise InputError(f"{type(model).__name__} has no tensor-parallel plan: give one with --plan")
    return plan


def load_plan(path) -> dict:
    """A plan YAML file: a mapping of module patterns to styles.

    Raises:
        InputError: missing file, not YAML, not a mapping of strings.
    """
    from pathlib import Path

    import yaml

    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such plan file")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise InputError(f"{p}: not a valid YAML plan ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, Mapping) or not data or not all(isinstance(v, str) for v in data.values()):
        raise InputError(f"{p}: expected a mapping of module patterns to styles, like {{lm_head: colwise_rep}}")
    return {str(k): v for k, v in data.items()}
