"""The example corpus: every ``examples/**/case.yaml`` folder is checked against what it declares.

* ``expected: verified`` (no false alarm): the verdict is verified, every output is rebuilt
  from the ranks, and the numeric witness error is at float rounding level.
* ``expected: discrepancy`` (no miss): the check flags it, the first discrepancy sits in the
  module the bug lives in (``bug_module``: its scope, or the node that made the pending partial
  sum reaching it, is that module or inside it), its hints include the one naming the fix for
  this kind of bug (``FIX_HINT``, by the ``_bug_<kind>`` suffix of the case name), and the
  numeric witness shows a large error; when the ranks' collectives do not even pair up
  (``collective_mismatch`` in case.yaml), the witness stops at the same k-th collective as the
  exporter's simulation (and says so, the check's verdict standing) and the first discrepancy
  names that collective.
* Every relation the rules derived holds on numbers (``analyzer.witness.check.confirm_relations``).

Case folders and how they are run (``_load``):

* ``files: {seq, ranks}`` — Hugging Face exports, tensor / sequence / vocab parallel
  (``scripts/export_hf_tp.py``; more families: ``scripts/export_hf_families.py``; programs
  written by hand the way Megatron-LM and vLLM write them: ``scripts/export_tp_idioms.py``,
  whose ``bug_source`` names the file of the first discrepancy; NVIDIA Megatron-core's own
  GPTModel at TP 1 and TP 2: ``scripts/export_megatron_core.py``), expert parallel and
  tensor-parallel MoE (``scripts/export_moe.py``), with ``spec`` (relations shapes do not say)
  when given;
* ``files: {seq, ranks, world_size}`` — one XLA HLO program for every rank (JAX's SPMD
  partitioner, ``scripts/export_jax_hlo.py``);
* ``files: {seq, ranks, spec}`` — a TP x DP mesh (``scripts/export_hf_tp.py --mesh``), checked
  with its spec (``mesh.yaml``: the mesh and the replica's sequential graph);
* ``files: {seq, stages}`` — pipeline stages (``scripts/export_pipeline.py``), ``pipeline=N``;
* ``data: ...`` — GraphGuard's torch.fx dumps under ``../shared/data/entangle`` (or bundled in
  ``examples/entangle/published`` with ``bundled: true``) with a spec; no numeric witness
  (their graphs call vLLM and ATen kernels that have no ONNX reference implementation),
  skipped when the data is absent;
* ``training_step: ...`` — data- and tensor-parallel training steps (``scripts/export_train_step.py``):
  skipped here, ``tests/test_train_steps.py`` runs them with the witness (their rules take
  about two minutes, more than this whole file).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES, entangle_dumps_root, smoke_or_slow

from analyzer import check
from analyzer.facts.source import pick_frame
from analyzer.witness.check import confirm_relations

CASES = sorted(p.parent for p in EXAMPLES.rglob("case.yaml"))
IDS = [str(c.relative_to(EXAMPLES)) for c in CASES]

# the hint that names the fix, by the bug kind (the case name's suffix after "_bug_")
FIX_HINT = {
    "missing_allreduce": "missing-allreduce",
    "bias_every_rank": "bias-before-reduce",
    "shard_order": "shard-order",
    "extra_allreduce": "extra-allreduce",
    "vocab_offset": "vocab-range",
    "gather_axis": "gather-axis",
    "bs_transposed": "view-not-transpose",
    "reshape_shard": "stack-viewed",
    "collective_order": "collective-order",
    "kv_heads_misassigned": "kv-heads-misassigned",
    "wrong_group_allreduce": "wrong-group-collective",
    "expert_placement": "expert-range",
    "expert_offset": "expert-range",
    "fused_one_piece": "fused-one-piece",
    "norm_partial": "missing-allreduce",
    "rotary_offset": "rotary-offset",
    "mean_of_means": "micro-batch-mean",
    "missing_combine_alltoall": "moe-combine-alltoall",
    "expert_checkpoint_round_robin": "moe-expert-placement",
    # hand-written idioms (scripts/export_tp_idioms.py)
    "local_max": "reduce-over-shard",
    "norm_not_averaged": "scaled-not-divided",
    "mask_end": "vocab-range",
    "predicted_not_reduced": "missing-allreduce",
    "rank_offset": "vocab-range",
    "residual_every_rank": "bias-before-reduce",
    "scale_dropped": "bias-before-reduce",
    "prescale_dropped": "scaled-not-divided",
    "divided_twice": "extra-scaling",
    "avg_as_sum": "scaled-not-divided",
    "scatter_offset": "scatter-chunk",
    "transpose_dropped": "weight-not-transposed",
    # training steps (run by tests/test_train_steps.py)
    "missing_inv_world": "missing-average",
    "missing_loss_scale": "missing-loss-scale",
    "count_not_reduced": "local-normalizer",
    # sequence-sharded inputs (scripts/export_cp.py --positions input)
    "rebased_positions": "rotary-offset",
    "state_offset": "optimizer-state-layout",
    # XLA HLO from JAX (scripts/export_jax_hlo.py)
    "missing_psum": "missing-allreduce",
    "gather_viewed": "stack-viewed",
    # pipeline stage boundaries (scripts/export_pipeline.py)
    "mask_not_forwarded": "stage-input-not-sent",
    "swapped_rope": "stage-input-other-value",
}


@cache
def _load(case: Path) -> tuple[dict, Path, list[Path], dict, bool]:
    """(case.yaml, seq path, rank paths, extra check() arguments, numeric witness possible)."""
    cfg = yaml.safe_load((case / "case.yaml").read_text())
    if "training_step" in cfg:
        pytest.skip("training step: run (with the witness) by tests/test_train_steps.py")
    if "data" in cfg:
        root = entangle_dumps_root(cfg)
        if not root.is_dir():
            pytest.skip(f"{root} (GraphGuard's published graphs) is not here")
        ranks = [root / r for r in cfg["ranks"]]
        return cfg, root / cfg["seq"], ranks, {"relations": case / cfg["spec"]}, False
    files = cfg["files"]
    if "stages" in files:
        return cfg, case / files["seq"], [case / f for f in files["stages"]], {"pipeline": len(files["stages"])}, True
    # a spec for what shapes do not say: HF's packed_colwise gate/up (two sharded sections) as
    # `spec:`, a TP x DP mesh (mesh.yaml) as `files: {spec:}`
    spec = files.get("spec", cfg.get("spec"))
    extra = {"relations": case / spec} if spec else {}
    if "world_size" in files:  # one SPMD program (XLA HLO) serves every rank
        extra["world_size"] = files["world_size"]
    return cfg, case / files["seq"], [case / f for f in files["ranks"]], extra, True


@cache
def _run(case: Path):
    """The check of a case, with the numeric witness when it can run (None: it stopped)."""
    cfg, seq, ranks, extra, numeric = _load(case)
    if cfg.get("collective_mismatch"):
        # the witness stops; the check's own verdict stands, and the report says where it stopped
        result = check(seq, ranks, numeric=True, **extra)
        assert result.witness.skipped and not result.numeric, result.witness
        return result, result.witness.skipped
    return check(seq, ranks, numeric=numeric, **extra), None


@pytest.fixture(scope="module", autouse=True)
def _forget_checks():
    """The checks are kept for this file's tests, then dropped: a hundred kept results make every
    later full garbage collection of the test process take seconds."""
    yield
    _run.cache_clear()
    _load.cache_clear()


def _inside(scope: str, module: str) -> bool:
    return scope == module or scope.startswith(module + ".")


def test_every_case_folder_is_collected():
    """Each example folder with ONNX files has a case.yaml (otherwise this file would miss it)."""
    folders = {p.parent for pattern in ("*.onnx", "*.hlo") for p in EXAMPLES.rglob(pattern)}
    assert folders <= set(CASES), sorted(str(f) for f in folders - set(CASES))
    assert len(CASES) >= 20


@pytest.mark.parametrize("case", smoke_or_slow(CASES, IDS))
def test_case_verdict_location_hint_and_witness(case):
    cfg, _, _, _, numeric = _load(case)
    result, stopped = _run(case)
    v = result.verdict_
    assert result.verdict == cfg["expected"], [d.message or (d.node, d.scope) for d in v.discrepancies][:3]
    if cfg["expected"] == "verified":
        assert all(o.relation is not None for o in v.outputs), [(o.name, o.relation) for o in v.outputs]
        if numeric:
            assert max(result.numeric.values()) < 1e-3, result.numeric
        return
    first = v.discrepancies[0]
    # the site is the user's code (or none), never a framework's frame (analyzer/verdict/sources.py)
    for where in (first.source, first.origin_source):
        assert not where or pick_frame([(where.rpartition(":")[0], 1, "")])[0] is not None, where
    if cfg.get("bug_module"):
        module = cfg["bug_module"]
        assert _inside(first.scope, module) or _inside(first.origin_scope, module), (
            first.node, first.scope, first.origin_scope, module)
    if cfg.get("bug_source"):  # a hand-written part (scripts/export_tp_idioms.py) names its file
        assert first.source.startswith(cfg["bug_source"]), (first.source, cfg["bug_source"])
    elif "hf_class" in cfg.get("model", {}):
        # Hugging Face code: the model files, or the MoE expert implementations the models call
        # (transformers/integrations/moe.py: batched_mm_experts_forward)
        assert first.source.startswith(("transformers/models/", "transformers/integrations/")), first.source
    kind = case.name.partition("_bug_")[2]
    if kind in FIX_HINT:
        assert FIX_HINT[kind] in first.hint_ids, (first.hint_ids, FIX_HINT[kind])
    if stopped is not None:
        # the exporter's simulation and the witness stop at the same collective, which the
        # report names (with both ranks' calls)
        k = re.search(r"collective #(\d+)", cfg["collective_mismatch"]).group(1)
        assert f"collective #{k}:" in stopped, stopped
        assert first.kind == "collective" and f"collective #{k} " in first.message, first.message
    elif numeric:
        assert max(result.numeric.values()) > 1e-2, result.numeric


@pytest.mark.parametrize("case", smoke_or_slow(CASES, IDS))
def test_every_derived_relation_holds_on_numbers(case):
    """The simulator confirms each relation the rules derived (every Holds with its pieces)."""
    cfg, _, _, _, numeric = _load(case)
    if not numeric:
        pytest.skip("no numeric witness for this case (see the module docstring)")
    if cfg.get("collective_mismatch"):
        pytest.skip("the ranks cannot run together (their collectives do not pair): checked above")
    result, _ = _run(case)
    # a mesh check (analyzer/mesh.py) is one check per axis: confirm each one that was solved
    solved = [c.result for c in result.mesh.checks if not c.reused] if result.mesh else [result]
    for sub in solved:
        checked, refuted = confirm_relations(sub.inputs, sub.derivation.derived, sub.derivation.decls)
        assert checked > 40
        assert refuted == []


@pytest.mark.parametrize("case", smoke_or_slow(CASES, IDS))
def test_the_plain_path_gives_what_the_speed_paths_give(case):
    """``--no-memo --all-ranks`` (no layer memoization, every rank solved) derives the same
    relations and the same report as the default run with its speed paths (analyzer/speedups/)."""
    cfg, seq, ranks, extra, _ = _load(case)
    default, _ = _run(case)
    plain = check(seq, ranks, memoize=False, one_rank=False, **extra)
    assert plain.verdict == default.verdict
    assert [(o.name, o.relation) for o in plain.verdict_.outputs] == [
        (o.name, o.relation) for o in default.verdict_.outputs
    ]
    assert [(d.graph, d.node, d.hints) for d in plain.verdict_.discrepancies] == [
        (d.graph, d.node, d.hints) for d in default.verdict_.discrepancies
    ]
    if default.mesh is None and default.derivation.memo.startswith("layers"):
        return  # collapsed layers: the tables hold the rows of the layers solved, not of every layer
    for name in ("Holds", "Piece", "OutputRelation"):
        rows = [sorted(map(tuple, r.tables()[name].values)) for r in (plain, default)]
        assert rows[0] == rows[1], name
