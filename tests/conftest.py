"""Shared test helpers: paths, small ONNX graphs written in ONNX text syntax."""

from __future__ import annotations

import os
from pathlib import Path

import onnx
import onnx.parser
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def _shared_data() -> Path:
    """``../shared/data`` beside the checkout; else these machines' shared folder (a clone made
    elsewhere: CI's, a worktree); ``SHARDLOG_SHARED_DATA`` names it explicitly."""
    if os.environ.get("SHARDLOG_SHARED_DATA"):
        return Path(os.environ["SHARDLOG_SHARED_DATA"])
    beside = ROOT.parent / "shared" / "data"
    machine = Path("/work/shared/data")  # a clone elsewhere on these machines (CI's, a worktree)
    return beside if beside.is_dir() or not machine.is_dir() else machine


SHARED_DATA = _shared_data()
# GraphGuard's published torch.fx dumps: some bundled (examples/entangle/published, PROVENANCE.md
# there), the rest only in ../shared/data/entangle (not in CI)
ENTANGLE_BUNDLED = EXAMPLES / "entangle" / "published"
ENTANGLE_SHARED = SHARED_DATA / "entangle"


# Soufflé 2.5 as built for these machines (../shared/tools/souffle/README.md). CI's clone has no
# ../shared beside it (see examples/entangle/published/PROVENANCE.md), so the machines' shared
# folder is tried too. The engine reads SHARDLOG_SOUFFLE; a value set outside the tests wins.
SOUFFLE_BUILDS = (
    ROOT.parent / "shared" / "tools" / "souffle" / "souffle",
    Path("/work/shared/tools/souffle/souffle"),
)
SOUFFLE = next((p for p in SOUFFLE_BUILDS if p.is_file() and os.access(p, os.X_OK)), None)
if SOUFFLE is not None and not os.environ.get("SHARDLOG_SOUFFLE"):
    os.environ["SHARDLOG_SOUFFLE"] = str(SOUFFLE)


def entangle_dumps_root(cfg: dict) -> Path:
    """The folder an examples/entangle case.yaml's ``seq``/``ranks`` paths are relative to:
    the bundled dumps with ``bundled: true``, otherwise ``../shared/data/entangle``."""
    return ENTANGLE_BUNDLED if cfg.get("bundled") else ENTANGLE_SHARED


def check_args(folder: Path) -> tuple[Path, list[Path], dict] | None:
    """``(seq, ranks, check() keyword arguments)`` of an ``examples/<case>/`` or
    ``examples/entangle/<case>/`` folder (its ``case.yaml``); None for a GraphGuard case whose
    dumps are not here."""
    cfg = yaml.safe_load((folder / "case.yaml").read_text(encoding="utf-8"))
    if folder.parent.name == "entangle":
        root = entangle_dumps_root(cfg)
        if not root.is_dir():
            return None
        return root / cfg["seq"], [root / r for r in cfg["ranks"]], {"relations": folder / cfg["spec"]}
    if (folder / "stage0.onnx").is_file():
        stages = sorted(folder.glob("stage*.onnx"), key=lambda p: int(p.stem[5:]))
        return folder / "seq.onnx", stages, {"pipeline": len(stages)}
    files = cfg["files"]
    # a mesh case's spec gives the mesh (docs/mesh.md); a case-level `spec` gives relations
    spec = files.get("spec", cfg.get("spec"))
    return folder / files["seq"], [folder / r for r in files["ranks"]], ({"relations": folder / spec} if spec else {})


def example_kind(folder: Path) -> str:
    """``"pipeline"`` (stage files), ``"training"`` (a whole training step), ``"mesh"`` (a TP x DP
    mesh checked with its ``mesh.yaml``, tests/test_mesh.py), ``"hlo"`` (one XLA HLO program for
    every rank, tests/test_hlo_import.py) or ``"forward"`` (ONNX exports of a forward pass)."""
    if (folder / "seq.hlo").is_file():
        return "hlo"
    if (folder / "stage0.onnx").is_file():
        return "pipeline"
    if (folder / "mesh.yaml").is_file():
        return "mesh"
    if "training_step:" in (folder / "case.yaml").read_text(encoding="utf-8"):
        return "training"
    return "forward"


def example_cases(kind: str) -> list[Path]:
    """The examples/<case>/ folders of one kind (see :func:`example_kind`)."""
    if not EXAMPLES.is_dir():
        return []
    return sorted(p.parent for p in EXAMPLES.glob("*/case.yaml") if example_kind(p.parent) == kind)


# The default run (`pytest -q`, under three minutes on 2 cores) checks these examples wherever a
# test repeats one check over every example (the corpus, memoization on/off, the plain path): a
# correct or a bug case, or both, of each kind of program (tensor, sequence, vocab and expert
# parallel, a hand-written idiom, megatron-core, a pipeline, a mesh, XLA HLO, a training step,
# GraphGuard's graphs). The other examples run under the `slow` marker, which CI runs too.
SMOKE_EXAMPLES = frozenset({
    "llama_tp2", "llama_tp2_bug_missing_allreduce",  # column/row-parallel
    "llama_tp2_sp_bug_collective_order",  # sequence parallel
    "qwen2_tp2_vocab_bug_vocab_offset",  # vocab parallel
    "mixtral_ep2", "mixtral_ep2_bug_expert_placement",  # expert parallel
    "qwen3_tp2_vocab_ce",  # a hand-written idiom (Megatron-LM's vocab-parallel cross-entropy)
    "megatron_gpt_tp2",  # megatron-core's own layers
    "llama_pp2_bug_swapped_rope",  # pipeline stages
    "llama_tp2_dp2_bug_wrong_group_allreduce",  # a TP x DP mesh
    "jax_llama_block_tp2_bug_missing_psum",  # XLA HLO
    "llama_dp2_sgd", "llama_dp2_sgd_bug_missing_grad_allreduce",  # a training step
    "entangle/bug_missing_layernorm_allreduce",  # GraphGuard's graphs
})


def smoke_or_slow(cases, ids=None) -> list:
    """``pytest.param`` of each case, marked ``slow`` unless its id is in :data:`SMOKE_EXAMPLES`.

    Args:
        cases: the parameter values (example folders or names).
        ids: their test ids (default: ``str`` of each case); an id matches by its path relative to
            ``examples/`` or by its last part.
    """
    ids = [str(c) for c in cases] if ids is None else list(ids)
    params = []
    for case, case_id in zip(cases, ids, strict=True):
        tail = case_id.rsplit("/", 1)[-1]
        smoke = case_id in SMOKE_EXAMPLES or tail in SMOKE_EXAMPLES
        params.append(pytest.param(case, id=case_id, marks=() if smoke else pytest.mark.slow))
    return params


def model_from_text(text: str) -> onnx.ModelProto:
    """Parse an ONNX text model and check it."""
    model = onnx.parser.parse_model(text)
    onnx.checker.check_model(model)
    return model


def check_text_graphs(write_models, seq: str, ranks: list[str], *, infer_shapes: bool = False, **kwargs):
    """Write the sequential graph and the rank graphs (ONNX text; the seq graph is checked, the
    ranks only parsed: contrib ops), ``check()`` them with the numeric witness, and confirm
    every derived relation on numbers (none may be refuted).

    Args:
        write_models: the :func:`write_models` fixture.
        infer_shapes: run ONNX shape inference on the ranks (intermediates the rules read).
        kwargs: more ``check()`` arguments (``relations``, ``numeric``).

    Returns:
        ``(result, relations confirmed, seq path, rank paths)``.
    """
    from analyzer import check
    from analyzer.witness.check import confirm_relations

    models = {"seq": model_from_text(seq)}
    for r, text in enumerate(ranks):
        model = onnx.parser.parse_model(text)
        models[f"rank{r}"] = onnx.shape_inference.infer_shapes(model) if infer_shapes else model
    paths = write_models(models)
    rank_paths = [paths[f"rank{r}"] for r in range(len(ranks))]
    result = check(paths["seq"], rank_paths, **{"numeric": True, **kwargs})
    checked, refuted = confirm_relations(result.inputs, result.derivation.derived, result.derivation.decls)
    assert refuted == [], refuted
    return result, checked, paths["seq"], rank_paths


@pytest.fixture
def write_models(tmp_path):
    """Write {name: ModelProto} into tmp_path and return {name: path}."""

    def _write(models: dict[str, onnx.ModelProto]) -> dict[str, Path]:
        paths = {}
        for name, model in models.items():
            path = tmp_path / f"{name}.onnx"
            onnx.save(model, str(path))
            paths[name] = path
        return paths

    return _write


@pytest.fixture
def fork_possible():
    """Skip a test of the forked speed paths when this process may not fork: the product
    refuses to fork while other threads run (a fork copies only the calling thread;
    ``analyzer.speedups.beside.can_fork``), and an earlier test in the same process (an export,
    which imports torch and starts its thread pools) can leave threads behind."""
    import threading

    from analyzer.speedups.beside import can_fork

    if not can_fork():
        others = sorted({t.name for t in threading.enumerate() if t is not threading.current_thread()})
        pytest.skip(f"this test process may not fork (other threads alive: {', '.join(others) or 'none'}; "
                    "not Linux?): the forked path is refused by design")


def edited_copy(source: Path, out: Path, pattern: str, replacement: str) -> Path:
    """A copy of the text file ``source`` at ``out`` with the one line ``pattern`` matches edited
    (the one-line bugs made in published HLO files)."""
    import re

    text = source.read_text()
    new, count = re.subn(pattern, replacement, text)
    assert count == 1, f"the edit must change exactly one line of {source}"
    out.write_text(new)
    return out
