"""The graphs of a check loaded and paired with their input relations.

Importers (:mod:`analyzer.importers`) load the sequential graph and the ranks (or pipeline
stages, chained per rank); :mod:`analyzer.inputs.infer` works out how each input and weight
of the sequential graph lives on the ranks, from names, shapes, stored values and the spec.
The result is the :class:`~analyzer.model.CheckInput` every later stage reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from analyzer import progress
from analyzer.errors import InputError
from analyzer.importers.onnx_files import KnownGraphs, check_same_model, load_graph, load_ranks, select_outputs
from analyzer.importers.pipeline import PipelineInfo, chain_stages, split_stages
from analyzer.inputs import rank_files
from analyzer.inputs.infer import (
    Spec,
    _boundary_shapes,
    _inline_array,
    _per_model,
    apply_spec,
    infer_input_relations,
    load_spec,
)
from analyzer.inputs.values import decide_by_values
from analyzer.model import CheckInput
from analyzer.speedups.proofs import WireProofs

__all__ = ["load_inputs"]


def _rank_twins(same: Sequence[int]) -> list[int] | None:
    """Per rank, the index of the first rank whose graph is stored like its own, from a
    ``same_graph`` list (seq first, see :class:`analyzer.model.CheckInput`); None when that is empty."""
    if not same:
        return None
    return [j - 1 if j >= 1 else r for r, j in enumerate(same[1:])]


def load_inputs(
    seq_path: str | Path,
    rank_paths: Sequence[str | Path],
    spec_path: str | Path | Spec | None = None,
    *,
    pipeline: int | None = None,
    proofs: WireProofs | None = None,
    world_size: int | None = None,
    diagnose_files: bool = True,
) -> CheckInput:
    """Load the sequential and rank graphs (ONNX files or torch.fx dumps) and work out the
    input relations.

    Args:
        seq_path: the sequential graph.
        rank_paths: one graph per process, rank 0 first.
        spec_path: optional relations spec (:mod:`analyzer.inputs.infer`), or the one already loaded.
        pipeline: number of pipeline stages P (``--pp``; or ``pipeline: {stages: P}`` in the
            spec): the files are P stages of F/P tensor-parallel ranks each, tensor-parallel
            rank fastest; each rank's stages are chained by boundary tensor names
            (:mod:`analyzer.importers.pipeline`) and checked as one rank. None or 1: no pipeline.
        proofs: take the string and shape checks of whole ONNX files (:mod:`analyzer.speedups.proofs`),
            for :func:`derive` to start beside its work (``CheckInput.proofs``); the caller
            settles them before using the result. None: they run as each file loads.
        world_size: the number of ranks N (``--world-size``): one rank file then serves every
            rank (an SPMD program: an HLO file is imported for each rank, once when it does
            not read its rank); with N rank files, a check that there are N.
        diagnose_files: refuse a missing, extra, duplicated or misordered rank file, from the
            files' metadata, their rank literals, the weights' shapes and stored values
            (:mod:`analyzer.inputs.rank_files`);
            False for a subset of a mesh's ranks (:mod:`analyzer.mesh` checks their order itself).

    Raises:
        InputError: a file is missing or not ONNX (nor a torch.fx dump), no rank file is given,
            a rank file is from another model, the spec is malformed or does not fit, or the
            stages do not chain (a stage input from nowhere, a boundary tensor whose dtype or
            shape differs between stages, files that do not split into P stages, a pipeline
            degree that differs between ``pipeline`` and the spec), or a rank file is missing,
            extra, given twice or out of order (``diagnose_files``).
    """
    progress.stage("import")
    if not rank_paths:
        raise InputError("give the sequential model and at least one rank file")
    if world_size is not None:
        if len(rank_paths) == 1:
            rank_paths = list(rank_paths) * world_size
            diagnose_files = False  # one SPMD program for every rank: the same file N times
        elif len(rank_paths) != world_size:
            raise InputError(
                f"--world-size {world_size} but {len(rank_paths)} rank files were given (give 1 or {world_size})"
            )
    spec = spec_path if isinstance(spec_path, Spec) or spec_path is None else load_spec(spec_path)
    extra = {"outputs": spec.outputs, "constants": spec.constants, "groups": spec.groups} if spec else {}
    if spec is not None and spec.pipeline_stages is not None:
        if pipeline is not None and pipeline != spec.pipeline_stages:
            raise InputError(
                f"{spec.path}: spec has pipeline stages {spec.pipeline_stages} but --pp {pipeline} was given"
            )
        pipeline = spec.pipeline_stages
    known = KnownGraphs()
    try:
        seq = load_graph(seq_path, sequential=True, known=known, proofs=proofs, **extra)
        if pipeline is not None and pipeline != 1:
            inp = _load_rest(seq_path, seq, rank_paths, spec, extra, pipeline, known, None, diagnose_files)
        else:
            ranks = load_ranks(rank_paths, known, proofs, extra)
            inp = _load_rest(seq_path, seq, rank_paths, spec, extra, pipeline, known, ranks, diagnose_files)
        inp.proofs = proofs
    except Exception:
        if proofs is not None:
            proofs.settle()  # a malformed file is the error, as when each file is checked as it loads
        raise
    return inp


def _load_rest(seq_path, seq, rank_paths, spec, extra, pipeline, known: KnownGraphs, ranks, diagnose) -> CheckInput:
    """:func:`load_inputs` after the sequential graph (and, without a pipeline, the ranks) loaded."""
    info = None
    if pipeline is not None and pipeline != 1:
        stages = split_stages([str(p) for p in rank_paths], pipeline)
        if spec is not None and spec.world_size is not None:
            if spec.world_size != len(rank_paths):
                raise InputError(
                    f"{spec.path}: spec is for world size {spec.world_size} but {len(rank_paths)} rank files were given"
                )
            spec = replace(spec, world_size=None)  # the chained ranks are fewer: checked here
        per_stage = {**extra, "outputs": None}  # the spec's outputs select among the chain's outputs
        models = [[load_graph(p, sequential=False, **per_stage) for p in stage] for stage in stages]
        if diagnose:
            rank_files.check_stages(stages, [[{x.key: x.value for x in m.metadata_props} for m in ms] for ms in models])
        ranks, names = [], []
        for t in range(len(stages[0])):
            paths_t = [stage[t] for stage in stages]
            chain, boundaries = chain_stages(paths_t, [m[t] for m in models], seq, str(seq_path))
            ranks.append(select_outputs(" + ".join(paths_t), chain, extra.get("outputs")))
            names.append(" + ".join(paths_t))
            if t == 0:
                info = PipelineInfo(stages, boundaries)
        rank_paths = names
    same = known.same if len(known.same) == 1 + len(ranks) else []
    diagnose = diagnose and info is None
    if diagnose and len(known.metadata) == 1 + len(ranks):
        rank_files.check_metadata(str(seq_path), known.metadata[0], [str(p) for p in rank_paths], known.metadata[1:])
    check_same_model(str(seq_path), seq, [str(p) for p in rank_paths], ranks, same)
    rank_same = _rank_twins(same)
    if diagnose:  # which rank each file was exported for, from the constants that differ by rank
        literals = rank_files.rank_literals(ranks, lambda fn, ms: _per_model(fn, ms, rank_same))
        rank_files.check_order_by_literals([str(p) for p in rank_paths], literals, ranks)
    relations, notes = infer_input_relations(seq, ranks, rank_same)
    if diagnose and not any(rel.layout.kind == "Shard" for rel in relations) and not (spec and spec.world_size):
        named = {*spec.relations, *(spec.micro_batches or {})} if spec else set()
        shapes = _per_model(_boundary_shapes, ranks, rank_same)
        rank_files.check_world_size(_boundary_shapes(seq), shapes, False, named)
    inferred = relations
    if spec is not None:
        relations = apply_spec(relations, spec, seq, ranks)
    values = decide_by_values(seq, ranks, relations, rank_same)
    if diagnose and values.misplaced:  # rank files given in another order than their ranks: one line
        maps = rank_files.chunk_maps(seq, ranks, inferred, _inline_array, lambda fn, ms: _per_model(fn, ms, rank_same))
        rank_files.check_order_by_values([str(p) for p in rank_paths], maps, rank_same)
    notes = [note for note in notes if note.split(": ", 1)[0] not in values.decided] + values.notes
    inp = CheckInput(
        seq_path=str(seq_path),
        rank_paths=[str(p) for p in rank_paths],
        seq=seq,
        ranks=ranks,
        relations=values.relations,
        notes=notes,
        pipeline=info,
        same_graph=same,
        misplaced=values.misplaced,
        value_mismatches=values.mismatches,
        transposed=values.transposed,
        rank_metadata=known.metadata[1:] if len(known.metadata) == 1 + len(ranks) else [],
    )
    inp.defer_canonical()
    return inp
