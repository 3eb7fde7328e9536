"""The driver: ONNX files -> facts -> rules to a fixpoint -> a :class:`CheckResult`.

Data flow (``../shared/design/architecture.md``): facts of every graph, input relations and
oracle facts are handed to a Datalog engine running ``schemas/*.dl`` + ``rules/**/*.dl``; Python
oracles may add facts from what was derived, and the program runs again until no oracle
adds anything (``max_rounds`` is a safety cap that reports itself when hit).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import onnx

from analyzer import symmetry
from analyzer.cache import cached, digest
from analyzer.coverage import COVERAGE_RELATION, coverage_of, instrument
from analyzer.engines import DEFAULT_ENGINE, get_engine
from analyzer.engines.relevance import kept_on_facts
from analyzer.errors import InputError
from analyzer.facts import FactTables, extract_graph_facts
from analyzer.facts.canonical import canonicalize
from analyzer.facts.extract import GraphKey, ModelFile, const_chunk_hashes, load_model_file, with_graph
from analyzer.facts.proofs import WireProofs
from analyzer.importers.hlo import is_hlo_path
from analyzer.memo import Collapse, boundary_is_fixpoint, collapse_layers
from analyzer.oracles import (
    const_ints_text,
    microbatch_facts,
    replica_reshape_maps,
    replica_shard_shapes,
    reshape_axis_maps,
    section_spans,
    shard_shapes,
)
from analyzer.pipeline import PipelineInfo, chain_stages, split_stages
from analyzer.relations import (
    InputRelation,
    MisplacedChunk,
    Spec,
    apply_spec,
    check_weight_values,
    infer_input_relations,
    load_spec,
)
from analyzer.rulebook import rule_files, schema_files
from analyzer.symmetry import (
    expand_rows,
    has_unprobed_rules,
    probe_relations,
    probes_agree,
    representative_facts,
    unsupported_rules,
    with_rank_probes,
)

__all__ = ["CheckInput", "Derivation", "load_inputs", "derive", "graph_name"]

DerivedOracle = Callable[[FactTables, dict[str, list[tuple]]], FactTables]


def graph_name(rank: int) -> str:
    """Name of a graph in the facts: ``"seq"`` for -1, ``"r{rank}"`` otherwise."""
    return "seq" if rank < 0 else f"r{rank}"


@dataclass
class CheckInput:
    """Loaded models (as given, and in canonical form) and their input relations.

    ``same_graph[i]`` is the index (seq first) of the first model whose graph is stored byte
    for byte like model i's (i when none), whose checks and analyses model i reuses; empty
    when not known. A rank file that differs from an earlier file only in the fields naming
    its rank (``doc_string``, ``metadata_props``) is not parsed again: its entry in ``ranks``
    is that file's model object (never change a model in place), and its own metadata is in
    ``rank_metadata``."""

    seq_path: str
    rank_paths: list[str]
    seq: onnx.ModelProto
    ranks: list[onnx.ModelProto]
    relations: list[InputRelation]
    notes: list[str]
    canonical_seq: onnx.ModelProto | None = None
    canonical_ranks: list[onnx.ModelProto] = field(default_factory=list)
    pipeline: PipelineInfo | None = None  # set when the rank files are pipeline stages (--pp)
    same_graph: list[int] = field(default_factory=list)
    misplaced: list[MisplacedChunk] = field(default_factory=list)  # weights holding another chunk
    mesh_axis: str | None = None  # a mesh check (analyzer/mesh.py): the axis the ranks form a group along
    rank_metadata: list[dict[str, str]] = field(default_factory=list)  # each rank file's metadata_props
    proofs: WireProofs | None = None  # files' string and shape checks still to run (derive starts them)

    @property
    def world_size(self) -> int:
        """Number of ranks N."""
        return len(self.ranks)

    def defer_canonical(self) -> None:
        """Compute ``canonical_seq`` and ``canonical_ranks`` when first read (a check whose
        decoder layers are memoized rewrites only the collapsed graphs)."""
        self.__dict__["_canonical_pending"] = True

    def _canonical(self, attr: str):
        if self.__dict__.pop("_canonical_pending", False):
            same = self.same_graph if len(self.same_graph) == 1 + len(self.ranks) else []
            canonical = _canonical_forms([self.seq, *self.ranks], same)
            self.__dict__["_canonical_seq"] = canonical[0]
            self.__dict__["_canonical_ranks"] = canonical[1:]
        return self.__dict__.get(attr)


def _canonical_field(attr: str) -> property:
    def get(self: CheckInput):
        return self._canonical(attr)

    def put(self: CheckInput, value) -> None:
        self.__dict__.pop("_canonical_pending", None)
        self.__dict__[attr] = value

    return property(get, put, doc="canonical form (:mod:`analyzer.facts.canonical`), computed when first read")


# set after @dataclass made __init__, which assigns them through the properties
CheckInput.canonical_seq = _canonical_field("_canonical_seq")  # type: ignore[assignment]
CheckInput.canonical_ranks = _canonical_field("_canonical_ranks")  # type: ignore[assignment]


@dataclass
class Derivation:
    """What the rules derived, with the facts they read.

    Attributes:
        facts: every fact table handed to the engine (after the last round).
        derived: every output relation of the program, as tuples.
        decls: relation name -> declaration (column names and types).
        rounds: engine runs until no oracle added a fact.
        capped: True when ``max_rounds`` stopped the loop before a fixpoint.
        timings: seconds spent in "facts", "engine" and "oracles".
        coverage: per rule, whether it fired (only when ``derive(coverage=True)``).
        memo: what layer memoization did ("off", or which layers were solved once).
    """

    facts: dict[str, list[tuple]]
    derived: dict[str, list[tuple]]
    decls: dict
    rounds: int
    capped: bool
    timings: dict[str, float] = field(default_factory=dict)
    coverage: list = field(default_factory=list)
    memo: str = ""
    one_rank: bool = False  # every engine run solved one representative rank (analyzer/symmetry.py)


def _rank_twins(same: Sequence[int]) -> list[int] | None:
    """Per rank, the index of the first rank whose graph is stored like its own, from a
    ``same_graph`` list (seq first, see :class:`CheckInput`); None when that is empty."""
    if not same:
        return None
    return [j - 1 if j >= 1 else r for r, j in enumerate(same[1:])]


def _check_same_model(
    seq_path: str,
    seq: onnx.ModelProto,
    rank_paths: Sequence[str],
    ranks: Sequence[onnx.ModelProto],
    same: Sequence[int] = (),
) -> None:
    seq_outputs = len(seq.graph.output)
    seq_names = {i.name for i in seq.graph.initializer} | {i.name for i in seq.graph.input}
    for r, (path, model) in enumerate(zip(rank_paths, ranks)):
        if len(same) == 1 + len(ranks) and same[r + 1] != r + 1:
            continue  # its graph is stored like an earlier one's, checked already
        if len(model.graph.output) != seq_outputs:
            raise InputError(
                f"{path}: rank {r} has {len(model.graph.output)} outputs but {seq_path} has {seq_outputs}: "
                "is it an export of another model?"
            )
        names = {i.name for i in model.graph.initializer} | {i.name for i in model.graph.input}
        if seq_names and not names & seq_names:
            raise InputError(
                f"{path}: rank {r} shares no input or weight name with {seq_path}: is it an export of another model?"
            )


def _select_outputs(path: str, model: onnx.ModelProto, positions: Sequence[int] | None) -> onnx.ModelProto:
    """``model`` with only the graph outputs at ``positions`` (a copy; the file is untouched)."""
    if positions is None:
        return model
    outs = list(model.graph.output)
    bad = [i for i in positions if i >= len(outs)]
    if bad:
        raise InputError(f"{path}: the spec selects output {bad[0]} but the graph has {len(outs)} outputs")
    picked = onnx.ModelProto()
    picked.CopyFrom(model)
    del picked.graph.output[:]
    picked.graph.output.extend(outs[i] for i in positions)
    return picked


@dataclass
class _KnownGraphs:
    """The graphs loaded so far: the stored bytes of each distinct ONNX graph (``keys``, of
    the graph loaded ``first``, whose model is ``models``), for each graph the index of the
    first one stored like it (``same``, see :class:`CheckInput`), and each file's own
    ``metadata_props`` (``metadata``: a model shared with an earlier file carries that
    file's)."""

    keys: list[GraphKey] = field(default_factory=list)
    first: list[int] = field(default_factory=list)
    models: list[onnx.ModelProto] = field(default_factory=list)
    same: list[int] = field(default_factory=list)
    metadata: list[dict[str, str]] = field(default_factory=list)

    def add(self, loaded: ModelFile | None, model: onnx.ModelProto | None = None, twin: int | None = None) -> None:
        """Record the next graph (None: not an ONNX file, loaded as ``model``; ``twin``: the
        index of an earlier graph it is the same as, an SPMD file imported once for all ranks)."""
        i = len(self.same)
        if twin is not None:
            self.metadata.append({})
            self.same.append(self.same[twin])
            return
        own = loaded.own or loaded.model if loaded is not None else model
        self.metadata.append({p.key: p.value for p in own.metadata_props} if own is not None else {})
        if loaded is not None and loaded.same_as is not None:
            self.same.append(self.first[loaded.same_as])
            return
        self.same.append(i)
        if loaded is not None and loaded.graph_key is not None:
            self.keys.append(loaded.graph_key)
            self.first.append(i)
            self.models.append(loaded.model)


def load_graph(
    path: str | Path,
    *,
    sequential: bool,
    outputs: Sequence[int] | None = None,
    constants: Mapping | None = None,
    groups: Mapping | None = None,
    known: _KnownGraphs | None = None,
    proofs: WireProofs | None = None,
) -> onnx.ModelProto:
    """Load one graph: an ONNX file, a torch.fx dump (``.py``) imported by :mod:`analyzer.fx`,
    or an XLA HLO file (``.hlo``, ``.pb``) imported by :mod:`analyzer.importers.hlo` (the
    sequential one as a single process: its collectives are identities). ``known``
    records it (an ONNX graph stored like a known one is not checked again); ``proofs`` takes
    its string and shape checks (:func:`analyzer.facts.load_model_file`).

    Raises:
        InputError: as :func:`analyzer.facts.load_model` and :func:`analyzer.fx.import_fx`.
    """
    if is_hlo_path(path):
        from analyzer.importers.hlo import import_hlo

        model = import_hlo(path, rank=0, world_size=1) if sequential else import_hlo(path)
        if known is not None:
            known.add(None, model)
        return _select_outputs(str(path), model, outputs)
    if str(path).endswith(".py"):
        from analyzer.fx import import_fx

        p = Path(path)
        if not p.is_file():
            raise InputError(f"{p}: no such file")
        model = import_fx(
            p, world_size=1 if sequential else None, constants=constants, outputs=outputs, group_sizes=groups
        )
        if known is not None:
            known.add(None, model)
        return model
    if known is not None:
        loaded = load_model_file(path, known.keys, known.models, proofs)
    else:
        loaded = load_model_file(path, proofs=proofs)
    if known is not None:
        known.add(loaded)
    return _select_outputs(str(path), loaded.model, outputs)


def load_inputs(
    seq_path: str | Path,
    rank_paths: Sequence[str | Path],
    spec_path: str | Path | Spec | None = None,
    *,
    pipeline: int | None = None,
    proofs: WireProofs | None = None,
    world_size: int | None = None,
) -> CheckInput:
    """Load the sequential and rank graphs (ONNX files or torch.fx dumps) and work out the
    input relations.

    Args:
        seq_path: the sequential graph.
        rank_paths: one graph per process, rank 0 first.
        spec_path: optional relations spec (:mod:`analyzer.relations`), or the one already loaded.
        pipeline: number of pipeline stages P (``--pp``; or ``pipeline: {stages: P}`` in the
            spec): the files are P stages of F/P tensor-parallel ranks each, tensor-parallel
            rank fastest; each rank's stages are chained by boundary tensor names
            (:mod:`analyzer.pipeline`) and checked as one rank. None or 1: no pipeline.
        proofs: take the string and shape checks of whole ONNX files (:mod:`analyzer.facts.proofs`),
            for :func:`derive` to start beside its work (``CheckInput.proofs``); the caller
            settles them before using the result. None: they run as each file loads.
        world_size: the number of ranks N (``--world-size``): one rank file then serves every
            rank (an SPMD program: an HLO file is imported for each rank, once when it does
            not read its rank); with N rank files, a check that there are N.

    Raises:
        InputError: a file is missing or not ONNX (nor a torch.fx dump), no rank file is given,
            a rank file is from another model, the spec is malformed or does not fit, or the
            stages do not chain (a stage input from nowhere, a boundary tensor whose dtype or
            shape differs between stages, files that do not split into P stages, a pipeline
            degree that differs between ``pipeline`` and the spec).
    """
    if not rank_paths:
        raise InputError("give the sequential model and at least one rank file")
    if world_size is not None:
        if len(rank_paths) == 1:
            rank_paths = list(rank_paths) * world_size
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
    known = _KnownGraphs()
    try:
        seq = load_graph(seq_path, sequential=True, known=known, proofs=proofs, **extra)
        if pipeline is not None and pipeline != 1:
            inp = _load_rest(seq_path, seq, rank_paths, spec, extra, pipeline, known, None)
        else:
            ranks = _load_ranks(rank_paths, known, proofs, extra)
            inp = _load_rest(seq_path, seq, rank_paths, spec, extra, pipeline, known, ranks)
        inp.proofs = proofs
    except Exception:
        if proofs is not None:
            proofs.settle()  # a malformed file is the error, as when each file is checked as it loads
        raise
    return inp


def _load_ranks(rank_paths, known: _KnownGraphs, proofs, extra) -> list[onnx.ModelProto]:
    """The rank graphs; an HLO file is parsed once and imported for each rank r of N (once for
    all ranks when the program does not read its rank)."""
    from analyzer.importers.hlo import hlo_to_onnx, load_module, reads_rank

    n = len(rank_paths)
    ranks: list[onnx.ModelProto] = []
    hlo: dict[str, tuple] = {}  # path -> (module, its shared model and first index, or None)
    for r, p in enumerate(rank_paths):
        if not is_hlo_path(p):
            ranks.append(load_graph(p, sequential=False, known=known, proofs=proofs, **extra))
            continue
        if str(p) not in hlo:
            module = load_module(p)
            hlo[str(p)] = (module, None)
        module, shared = hlo[str(p)]
        if shared is not None:
            ranks.append(shared[0])
            known.add(None, twin=shared[1])
            continue
        model = _select_outputs(str(p), hlo_to_onnx(module, rank=r, world_size=n), extra.get("outputs"))
        known.add(None, model)
        if not reads_rank(module):
            hlo[str(p)] = (module, (model, len(known.same) - 1))
        ranks.append(model)
    return ranks


def _load_rest(seq_path, seq, rank_paths, spec, extra, pipeline, known: _KnownGraphs, ranks) -> CheckInput:
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
        ranks, names = [], []
        for t in range(len(stages[0])):
            paths_t = [stage[t] for stage in stages]
            chain, boundaries = chain_stages(paths_t, [m[t] for m in models], seq, str(seq_path))
            ranks.append(_select_outputs(" + ".join(paths_t), chain, extra.get("outputs")))
            names.append(" + ".join(paths_t))
            if t == 0:
                info = PipelineInfo(stages, boundaries)
        rank_paths = names
    same = known.same if len(known.same) == 1 + len(ranks) else []
    _check_same_model(str(seq_path), seq, [str(p) for p in rank_paths], ranks, same)
    rank_same = _rank_twins(same)
    relations, notes = infer_input_relations(seq, ranks, rank_same)
    relations, misplaced, refuted = check_weight_values(seq, ranks, relations, rank_same)
    notes += refuted
    if spec is not None:
        relations = apply_spec(relations, spec, seq, ranks)
        misplaced = [m for m in misplaced if m.seq_value not in spec.relations]
    inp = CheckInput(
        str(seq_path), [str(p) for p in rank_paths], seq, ranks, relations, notes, None, [], info, same, misplaced
    )
    if len(known.metadata) == 1 + len(ranks):
        inp.rank_metadata = known.metadata[1:]
    inp.defer_canonical()
    return inp


def _canonical_forms(models: Sequence[onnx.ModelProto], same: Sequence[int]) -> list[onnx.ModelProto]:
    """:func:`canonicalize` each model; a model whose graph is stored like an earlier one's
    reuses that one's rewrite: the model itself when the rewrite changed nothing, else a copy
    with the rewritten graph."""
    out: list[onnx.ModelProto] = []
    unchanged: dict[int, bool] = {}
    for i, model in enumerate(models):
        j = same[i] if same else i
        if j == i:
            out.append(canonicalize(model))
            continue
        if model is models[j]:  # the same model object (rank files differing only in metadata)
            out.append(out[j])
            continue
        if j not in unchanged:
            unchanged[j] = out[j].graph == models[j].graph
        out.append(model if unchanged[j] else with_graph(model, out[j].graph))
    return out


def _input_facts(inp: CheckInput, seq_values: set[str] | None = None) -> FactTables:
    """World size, graph ranks and the input relations of the seq values in ``seq_values``
    (all when None: a collapsed graph no longer reads the weights of removed layers)."""
    facts = FactTables()
    n = inp.world_size
    facts.add("WorldSize", n=n)
    facts.add("LastRank", r=n - 1)
    facts.add("GraphRank", g="seq", rank=-1)
    if inp.mesh_axis is not None:
        facts.add("CheckAxis", x=inp.mesh_axis)
    for r in range(n):
        facts.add("GraphRank", g=graph_name(r), rank=r)
        facts.add("RankNumber", n=r)
        if r + 1 < n:
            facts.add("NextRank", r=r, next=r + 1)
    for rel in inp.relations:
        if seq_values is not None and rel.seq_value not in seq_values:
            continue
        lay = rel.layout
        axis = lay.axis if lay.axis is not None else -1
        param = lay.param
        for r, d in enumerate(rel.rank_values):
            facts.add("InputPiece", s=rel.seq_value, r=r, d=d, kind=lay.kind, axis=axis, param=param)
    for m in inp.misplaced:
        if seq_values is None or m.seq_value in seq_values:
            facts.add(
                "MisplacedChunk", s=m.seq_value, r=m.rank, d=m.rank_value, axis=m.axis, chunk=m.chunk, chunks=m.chunks
            )
    return facts


def derive(
    inp: CheckInput,
    *,
    engine: str = DEFAULT_ENGINE,
    extra_rules: Sequence[str | Path] = (),
    derived_oracles: Sequence[DerivedOracle] = (),
    max_rounds: int = 8,
    coverage: bool = False,
    memoize: bool = True,
    one_rank: bool = True,
) -> Derivation:
    """Run the rule library over the facts of ``inp`` to a fixpoint.

    Args:
        inp: loaded models and input relations.
        engine: ``"seminaive"`` (default), ``"clingo"``, ``"souffle"`` or ``"pydatalog"``.
        extra_rules: user rule folders added to the library (``--rules DIR``).
        derived_oracles: Python oracles reading derived relations and returning new facts.
        max_rounds: safety cap on engine runs.
        coverage: also record which rules fired (:mod:`analyzer.coverage`).
        memoize: collapse runs of identical decoder layers (:mod:`analyzer.memo`); the
            whole graph is checked when the collapsed run's boundary is not a fixpoint.
        one_rank: solve rank 0 alone when the ranks are alike (:mod:`analyzer.symmetry`).

    Returns:
        The :class:`Derivation`.

    Raises:
        InputError: a user rule file does not parse.
        analyzer.engines.EngineUnavailable: the engine cannot run here.
    """
    for folder in extra_rules:
        if not Path(folder).is_dir():
            raise InputError(f"{folder}: no such rules folder")
    if inp.proofs is not None and not memoize:
        inp.proofs.start()
    try:
        program = _load_program_cached([*schema_files(), *rule_files([Path(p) for p in extra_rules])])
    except ValueError as exc:  # DatalogError
        raise InputError(f"rules: {exc}") from None
    runner = get_engine(engine)
    note = "off"
    if memoize:
        t0 = time.perf_counter()
        relations = {r.seq_value: r.layout for r in inp.relations}
        collapse = collapse_layers(inp.seq, inp.ranks, relations, _same(inp), proofs=inp.proofs)
        if collapse is not None:
            collapse = _canonical_collapse(collapse, _same(inp))
            if collapse is None:
                note = "a boundary value of the collapsed layers is rewritten away: whole graph checked"
        else:
            note = "no run of identical layers"
        t_memo = time.perf_counter() - t0
        if collapse is not None:
            deriv = _run(
                inp, collapse.seq, collapse.ranks, program, runner, derived_oracles, max_rounds, coverage, one_rank
            )
            deriv.timings["memo"] = t_memo
            holds, pieces = _relation_index(deriv)
            if boundary_is_fixpoint(collapse, holds, pieces):
                spans = ", ".join(f"{r.first}..{r.last}" for r in collapse.runs)
                deriv.memo = f"layers {spans} solved once each ({collapse.removed} of {collapse.layers} layers reused)"
                return deriv
            note = "boundary relations of the collapsed layers are not a fixpoint: whole graph checked"
    t0 = time.perf_counter()
    seq = inp.canonical_seq or inp.seq
    ranks = inp.canonical_ranks or inp.ranks
    t_canonical = time.perf_counter() - t0
    deriv = _run(inp, seq, ranks, program, runner, derived_oracles, max_rounds, coverage, one_rank)
    deriv.timings["canonical"] = t_canonical
    deriv.memo = note
    return deriv


def _canonical_collapse(collapse: Collapse, same: Sequence[int] | None) -> Collapse | None:
    """The collapse with its graphs in canonical form, or None when the rewrite removed a value
    the boundary test reads (it would find no relation on either side and pass vacuously).

    Layers are fingerprinted and collapsed as exported, and only what is left is rewritten:
    the rewrite keeps each graph's semantics, so the induction over a run is unchanged."""
    canonical = _canonical_forms([collapse.seq, *collapse.ranks], same or [])
    defined_in: dict[int, set[str]] = {}  # by model object: rank models may be one object
    for run in collapse.runs:
        for model, pairs in zip(canonical, run.boundary):
            defined = defined_in.get(id(model))
            if defined is None:
                defined = defined_in[id(model)] = _defined_values(model)
            if any(w not in defined or u not in defined for w, u in pairs):
                return None
    return replace(collapse, seq=canonical[0], ranks=canonical[1:])


def _defined_values(model: onnx.ModelProto) -> set[str]:
    g = model.graph
    out = {o for n in g.node for o in n.output}
    out.update(i.name for i in g.input)
    out.update(i.name for i in g.initializer)
    return out


def _same(inp: CheckInput) -> list[int] | None:
    """``inp.same_graph`` when it is known."""
    return inp.same_graph if len(inp.same_graph) == 1 + inp.world_size else None


# part of the cache key: change it when what is pickled changes
_CACHE_FORMAT = b"program + engine preparations, rules stored apart, 10"
# the default engine's compiled rules and the rule shapes (pickled with the program) are made by
# these modules (not imported here)
_TRANSLATOR_SOURCES = tuple(
    Path(__file__).parent / m
    for m in (
        "engines/seminaive_engine.py",
        "engines/seminaive_codegen.py",
        "engines/clingo_engine.py",
        "dl/normalize.py",
        "engines/relevance.py",
    )
)
_PROGRAMS: dict[str, object] = {}  # programs loaded in this process, by the digest of their files


class _StoredRules(Sequence):
    """A cached program's rules, unpickled when first read: a check whose engine finds the
    program's translation on it (clingo, :meth:`~analyzer.engines.base.Engine.prepare`) reads
    only their number (unpickling the rules' syntax trees took 0.025 s of each process)."""

    def __init__(self, blob: bytes, count: int) -> None:
        self._blob: bytes | None = blob
        self._count = count
        self._rules: list | None = None

    def _loaded(self) -> list:
        if self._rules is None:
            import pickle

            self._rules = pickle.loads(self._blob)
            self._blob = None
        return self._rules

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index):
        return self._loaded()[index]

    def __iter__(self):
        return iter(self._loaded())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (list, Sequence)) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def _load_program_cached(paths: Sequence[Path]):
    """``load_program`` with a pickle cache (:mod:`analyzer.cache`) keyed by the files' paths and
    contents (parsing and checking the library takes about a second; the cache makes it
    milliseconds); any problem with it falls back to parsing. Within one process the same files
    give the same (unchanged) program object, so what an engine derives from a program (clingo's
    translation) is reused."""
    import os

    parts = [_CACHE_FORMAT, Path(symmetry.__file__).read_bytes()]  # its rank probes are rules of the program
    parts += [source.read_bytes() for source in _TRANSLATOR_SOURCES]
    for p in paths:  # where the rules are is part of the program (rule locations), as written: a
        # symlinked copy is another entry, and abspath saves resolve()'s syscalls (1.5 ms here)
        parts += [os.path.abspath(p).encode(), Path(p).read_bytes()]
    key = digest(parts)
    if key not in _PROGRAMS:  # else the same files as a check before in this process
        _PROGRAMS[key] = cached("program", key, lambda: _parsed_program(paths), _rules_apart)
        _CACHE_KEYS[id(_PROGRAMS[key])] = key
    return _PROGRAMS[key]


_CACHE_KEYS: dict[int, str] = {}  # id of a program in _PROGRAMS -> its cache key


def _instrumented(program):
    """``instrument(program)`` (a ``--coverage`` run), prepared for the default engine and cached
    beside ``program`` when that came from the program cache (compiling its ~1,100 rules for the
    default engine takes ~0.6 s)."""
    key = _CACHE_KEYS.get(id(program))
    if key is None or _PROGRAMS.get(key) is not program:
        return instrument(program)
    if key + "-coverage" not in _PROGRAMS:
        made = cached("program-coverage", key, lambda: _prepared(instrument(program)), _rules_apart)
        _PROGRAMS[key + "-coverage"] = made
    return _PROGRAMS[key + "-coverage"]


def _prepared(program):
    from analyzer.engines import ENGINES

    ENGINES[DEFAULT_ENGINE].prepare(program)
    return program


def _parsed_program(paths: Sequence[Path]):
    from analyzer.dl import load_program

    program = load_program(paths)
    with_rank_probes(program)  # before the translation: the probes are rules of the program
    return _prepared(program)  # the compiled rules, pickled with the program


def _rules_apart(program):
    """A shallow copy of ``program`` to pickle, its rules as one blob unpickled when first read."""
    import copy
    import pickle

    stored = copy.copy(program)
    stored.rules = _StoredRules(pickle.dumps(program.rules, pickle.HIGHEST_PROTOCOL), len(program.rules))
    return stored


def _relation_index(deriv: Derivation) -> tuple[dict, dict]:
    holds: dict[str, set] = {}
    for s, k, a, p in deriv.derived.get("Holds", []):
        holds.setdefault(s, set()).add((k, a, p))
    cols = list(deriv.decls["Piece"].column_names)
    pieces: dict[tuple, set] = {}
    for row in deriv.derived.get("Piece", []):
        x = dict(zip(cols, row))
        pieces.setdefault((x["s"], x["r"], (x["kind"], x["axis"], x["param"])), set()).add(x["d"])
    return holds, pieces


@dataclass
class _Copies:
    """Graph facts that are relabelled copies of another graph's: for each source graph the
    graphs copying it, each graph's row ranges per relation in the fact tables, and each
    source graph's own facts."""

    targets: dict[str, list[str]] = field(default_factory=dict)
    ranges: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    tables: dict[str, FactTables] = field(default_factory=dict)

    def add(self, name: str, graph: FactTables, facts: FactTables) -> None:
        """Record the row ranges of graph ``name``'s facts ``graph``, about to be appended to ``facts``."""
        self.ranges[name] = {
            rel: (len(facts.rows(rel)), len(facts.rows(rel)) + len(graph.rows(rel))) for rel in graph.relations()
        }

    def engine_facts(self, tuples: dict[str, list[tuple]], decls: Mapping) -> tuple[dict, list]:
        """``tuples`` without the rows of the source and copied graphs' facts, and those as
        :class:`~analyzer.engines.clingo_engine.GraphCopies` (one per source)."""
        from analyzer.engines.clingo_engine import GraphCopies

        spans: dict[str, list[tuple[int, int]]] = {}
        for src, names in self.targets.items():
            for name in (src, *names):
                for rel, span in self.ranges[name].items():
                    spans.setdefault(rel, []).append(span)
        out = dict(tuples)
        for rel, cut in spans.items():
            rows, kept, at = out[rel], [], 0
            for start, end in sorted(cut):
                kept.extend(rows[at:start])
                at = end
            kept.extend(rows[at:])
            out[rel] = kept
        copies = [GraphCopies((src, *names), self.tables[src].tuples(decls)) for src, names in self.targets.items()]
        return out, copies


def _graph_facts(models: Sequence[onnx.ModelProto], same: Sequence[int] | None) -> tuple[FactTables, _Copies]:
    """The facts of each graph (seq first); a graph stored like an earlier one (``same``, see
    :class:`CheckInput`), in a model with the same IR version, opsets and functions (what shape
    inference reads besides the graph), gets a relabelled copy of that one's facts (recorded
    in the :class:`_Copies`)."""
    facts = FactTables()
    done: list[FactTables] = []
    copies = _Copies()
    for i, model in enumerate(models):
        name = graph_name(i - 1)
        j = i if same is None else same[i]
        if j != i and (model is models[j] or _inference_context(model) == _inference_context(models[j])):
            done.append(done[j].with_graph(name))
            copies.targets.setdefault(graph_name(j - 1), []).append(name)
            copies.tables[graph_name(j - 1)] = done[j]
        else:
            done.append(extract_graph_facts(model, name))
        copies.add(name, done[-1], facts)
        facts.extend(done[-1])
    return facts, copies


def _inference_context(model: onnx.ModelProto) -> tuple:
    return model.ir_version, list(model.opset_import), list(model.functions)


def _run(inp, seq, ranks, program, runner, derived_oracles, max_rounds, coverage, one_rank=True) -> Derivation:
    t0 = time.perf_counter()
    facts, copies = _graph_facts([seq, *ranks], _same(inp))
    g = seq.graph
    read = {v for n in g.node for v in n.input} | {v for n in g.node for v in n.output} | {o.name for o in g.output}
    facts.extend(_input_facts(inp, read))
    facts.extend(const_chunk_hashes(seq, inp.world_size))
    t_facts = time.perf_counter() - t0

    t1 = time.perf_counter()
    facts.extend(shard_shapes(facts, inp.world_size))
    facts.extend(reshape_axis_maps(facts, inp.world_size))
    facts.extend(const_ints_text(facts))
    facts.extend(section_spans(facts, inp.world_size))
    facts.extend(replica_shard_shapes(facts, inp.world_size))
    facts.extend(replica_reshape_maps(facts, inp.world_size))
    facts.extend(microbatch_facts(facts, inp.world_size))
    t_oracles = time.perf_counter() - t1
    run_program = _instrumented(program) if coverage else program

    t_engine = 0.0
    one_rank_runs = 0
    rounds = 0
    capped = False
    while True:
        rounds += 1
        tuples = facts.tuples(program.decls)
        t2 = time.perf_counter()
        derived = None
        if one_rank and not coverage:
            derived = _solve_one_rank(program, run_program, runner, tuples, copies, inp.world_size)
        if derived is not None:
            one_rank_runs += 1
        elif copies.targets and getattr(runner, "graph_copies", False):
            given, copied = copies.engine_facts(tuples, program.decls)
            derived = runner.run(run_program, given, copies=copied)
        else:
            derived = runner.run(run_program, tuples)
        t_engine += time.perf_counter() - t2
        t3 = time.perf_counter()
        new = FactTables()
        for oracle in derived_oracles:
            new.extend(oracle(facts, derived))
        t_oracles += time.perf_counter() - t3
        fresh = _only_new(new, facts, program.decls) if new.relations() else new
        if not fresh.relations():
            break
        if rounds >= max_rounds:
            capped = True
            break
        facts.extend(fresh)
    fired = coverage_of(program, derived) if coverage else []
    derived.pop(COVERAGE_RELATION, None)
    for name in probe_relations(program):
        derived.pop(name, None)
    return Derivation(
        coverage=fired,
        facts=tuples,
        derived=derived,
        decls=program.decls,
        rounds=rounds,
        capped=capped,
        timings={"facts": t_facts, "oracles": t_oracles, "engine": t_engine},
        one_rank=one_rank_runs == rounds,
    )


def _one_rank_world(program, tuples: dict[str, list[tuple]], copies: _Copies, world_size: int):
    """The facts of the one-rank world (:mod:`analyzer.symmetry`): the other facts and rank 0's
    graph facts as a :class:`~analyzer.engines.clingo_engine.GraphCopies` of ``"r0"`` alone;
    None when the ranks' graphs or facts differ, or a rule the full facts keep may tell ranks
    apart."""
    if list(copies.targets) != ["r0"]:
        return None
    given, copied = copies.engine_facts(tuples, program.decls)
    world = representative_facts(given, program.decls, world_size, copies.targets)
    if world is None or (
        has_unprobed_rules(program) and unsupported_rules(program, kept_on_facts(program, given, copied))
    ):
        return None
    from analyzer.engines.clingo_engine import GraphCopies

    return world, GraphCopies(("r0",), copied[0].rows)


def _solve_one_rank(program, run_program, runner, tuples, copies: _Copies, world_size: int) -> dict | None:
    """Every output relation of the full world, solved in the one-rank world
    (:mod:`analyzer.symmetry`); None when that world cannot stand in for the full one."""
    world = _one_rank_world(program, tuples, copies, world_size)
    if world is None:
        return None
    given, source = world
    if getattr(runner, "graph_copies", False):
        derived = runner.run(run_program, given, copies=[source])
    else:
        derived = runner.run(run_program, _merged(given, source.rows))
    if not probes_agree(derived, program, world_size):
        return None  # a rule that tells ranks apart derives other rows on another rank
    for name in probe_relations(program):
        derived.pop(name, None)
    return expand_rows(derived, program.decls, world_size)


def _merged(given: dict[str, list[tuple]], graph_rows: Mapping[str, list[tuple]]) -> dict[str, list[tuple]]:
    out = dict(given)
    for name, rows in graph_rows.items():
        out[name] = [*out.get(name, ()), *rows]
    return out


def _only_new(new: FactTables, old: FactTables, decls: dict) -> FactTables:
    out = FactTables()
    old_t = old.tuples(decls)
    for rel, rows in new.tuples(decls).items():
        seen = set(old_t.get(rel, []))
        for row, raw in zip(rows, new.rows(rel)):
            if row not in seen:
                seen.add(row)
                out.add(rel, **raw)
    return out
