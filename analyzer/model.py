"""The records that pass between the stages of a check.

- :class:`CheckInput`: what the importers and the input relations produce (the graphs of a
  check and how their inputs relate), read by every later stage.
- :class:`Derivation`: what solving produced (facts handed to the engine, derived relations),
  read by the verdict, the reports and the witness.
- :class:`CheckResult`: everything a check found (inputs, derivation, verdict, numbers), read
  by the reports.
- :class:`WitnessRun`: what the numeric witness found (``--numeric``): the error of every
  output, and each :class:`Contradiction` between it and a relation the rules derived.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import onnx

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.importers.pipeline import PipelineInfo
    from analyzer.inputs.infer import InputRelation, MisplacedChunk
    from analyzer.inputs.values import TransposedPiece, WeightMismatch
    from analyzer.speedups.proofs import WireProofs
    from analyzer.verdict.build import Verdict

__all__ = [
    "CheckInput",
    "CheckResult",
    "Contradiction",
    "Derivation",
    "OutputError",
    "WitnessRun",
    "graph_name",
    "tables_of",
]


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
    value_mismatches: list[WeightMismatch] = field(default_factory=list)  # weights their values refute
    transposed: list[TransposedPiece] = field(default_factory=list)  # weights the ranks store transposed
    mesh_axis: str | None = None  # a mesh check (analyzer/mesh.py): the axis the ranks form a group along
    rank_metadata: list[dict[str, str]] = field(default_factory=list)  # each rank file's metadata_props
    proofs: WireProofs | None = None  # files' string and shape checks still to run (derive starts them)
    # fused ops expanded through their ONNX function bodies (analyzer/rewrite/functions.py), and
    # the op types the driver tried (kept or not): (domain, op type)
    expand_ops: frozenset[tuple[str, str]] = frozenset()
    expand_tried: frozenset[tuple[str, str]] = frozenset()

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
            from analyzer.rewrite.canonical import canonical_forms

            canonical = canonical_forms([self.seq, *self.ranks], same, expand=self.expand_ops)
            self.__dict__["_canonical_seq"] = canonical[0]
            self.__dict__["_canonical_ranks"] = canonical[1:]
        return self.__dict__.get(attr)


def _canonical_field(attr: str) -> property:
    def get(self: CheckInput):
        return self._canonical(attr)

    def put(self: CheckInput, value) -> None:
        self.__dict__.pop("_canonical_pending", None)
        self.__dict__[attr] = value

    return property(get, put, doc="canonical form (:mod:`analyzer.rewrite.canonical`), computed when first read")


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
        timings: seconds spent in "facts", "engine" and "oracles".
        coverage: per rule, whether it fired (only when ``derive(coverage=True)``).
        memo: what layer memoization did ("off", or which layers were solved once).
    """

    facts: dict[str, list[tuple]]
    derived: dict[str, list[tuple]]
    decls: dict
    timings: dict[str, float] = field(default_factory=dict)
    coverage: list = field(default_factory=list)
    memo: str = ""
    one_rank: bool = False  # every engine run solved one representative rank (analyzer/speedups/symmetry.py)


@dataclass
class OutputError:
    """The numeric witness on one seq output (:mod:`analyzer.witness.check`).

    Attributes:
        error: max abs error of the output rebuilt from the ranks, largest over the seeds.
        scale: largest finite ``|value|`` of the seq output over the seeds.
        tolerance: the largest error float32 rounding explains at that scale
            (:func:`analyzer.witness.check.tolerance`).
        seed: the seed of the largest error.
        float64_error: when the error exceeds the tolerance, the error of the output re-run in
            float64 on that seed (:mod:`analyzer.witness.recheck`; within the tolerance: the
            excess was rounding); None when not re-run.
    """

    error: float
    scale: float
    tolerance: float
    seed: int
    float64_error: float | None = None


@dataclass
class Contradiction:
    """A relation the rules derived that the numeric witness refutes: an internal inconsistency
    (a rule, an oracle or an input relation is wrong), never a bug of the program checked.

    Attributes:
        kind: ``"output"`` (an output relation), ``"intermediate"`` (a ``Holds`` row) or
            ``"input"`` (an input relation: inferred for a weight whose stored values do not fit
            it, or declared by the spec).
        value: the seq value.
        relation: the derived relation, e.g. ``Shard(1)``.
        rank_values: the rank values it relates (rank order).
        error: max abs error of the value rebuilt from them.
        tolerance: the tolerance it exceeds.
        seed: the witness seed that shows it.
        inputs: the input relations upstream of the value (``name = layout [established]``).
        rules: the user rules (``--rules``) the relation is traced to, ``file:line`` each
            (:mod:`analyzer.solve.blame`); empty when the library's rules alone derive it.
        float64_error: the error of the same relation with the values re-run in float64
            (:mod:`analyzer.witness.recheck`), beyond the tolerance too; None when the re-run
            could not run.
    """

    kind: str
    value: str
    relation: str
    rank_values: list[str]
    error: float
    tolerance: float
    seed: int
    inputs: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    float64_error: float | None = None


@dataclass
class WitnessRun:
    """What ``--numeric`` found.

    Attributes:
        seeds: the seeds the graphs ran with.
        outputs: seq output name -> its :class:`OutputError`.
        intermediates: checks of derived intermediate relations on numbers (one per relation,
            rank alternative and seed).
        contradictions: derived relations the numbers refute (the verdict is then
            ``inconsistent``).
        skipped: why the witness could not run ("" when it ran); the verdict is left as it was.
        intermediates_skipped: why the intermediate relations could not be checked ("" when they were).
        rechecked: relations refuted in the graphs' own precision that the float64 re-run of
            their values puts within the tolerance (rounding: not contradictions;
            :mod:`analyzer.witness.recheck`), over all seeds.
    """

    seeds: list[int] = field(default_factory=list)
    outputs: dict[str, OutputError] = field(default_factory=dict)
    intermediates: int = 0
    contradictions: list[Contradiction] = field(default_factory=list)
    skipped: str = ""
    intermediates_skipped: str = ""
    rechecked: int = 0


@dataclass
class CheckResult:
    """Everything a check found.

    Attributes:
        inputs: loaded models and input relations.
        derivation: fact and derived tables as tuples, declarations, timings.
        verdict: outputs and discrepancies.
        engine: the engine name.
        seconds: wall time of the whole check (s).
        numeric: seq output name -> max abs error of the rebuilt output (``numeric=True``).
        witness: the numeric witness's findings (``numeric=True``), else None.
    """

    inputs: CheckInput
    derivation: Derivation
    verdict_: Verdict
    engine: str
    seconds: float
    numeric: dict[str, float] = field(default_factory=dict)
    witness: WitnessRun | None = None
    mesh: Any = None  # analyzer.mesh.MeshInfo of a mesh check (spec with mesh:), else None
    sources: Any = None  # analyzer.facts.source.FrameChoice the report's source lines were chosen with

    @property
    def world_size(self) -> int:
        """Number of ranks: the product of the mesh sizes for a mesh check, else ``inputs.world_size``."""
        if self.mesh is not None:
            return math.prod(self.mesh.axes.values())
        return self.inputs.world_size

    def record_witness(self, run: WitnessRun) -> None:
        """Record a numeric witness run: the output errors in ``numeric``; a contradiction makes
        the verdict ``inconsistent`` (:mod:`analyzer.witness.check`)."""
        self.witness = run
        self.numeric = {name: out.error for name, out in run.outputs.items()}
        if run.contradictions:
            self.verdict_.verdict = "inconsistent"

    @property
    def verdict(self) -> str:
        """``"verified"``, ``"discrepancy"``, ``"unproven"`` (:mod:`analyzer.verdict.triage`) or
        ``"inconsistent"`` (the numeric witness refutes a derived relation: :class:`Contradiction`)."""
        return self.verdict_.verdict

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every fact and derived relation as a DataFrame with the schema's column names."""
        return tables_of(self.derivation)


def tables_of(deriv: Derivation) -> dict[str, pd.DataFrame]:
    """Fact and derived tables of a derivation as DataFrames (columns from ``.decl`` lines)."""
    import pandas as pd

    out = {}
    for name, decl in deriv.decls.items():
        rows = deriv.derived.get(name, deriv.facts.get(name, []))
        out[name] = pd.DataFrame(rows, columns=list(decl.column_names))
    return out
