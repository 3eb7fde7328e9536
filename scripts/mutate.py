"""Mutation testing of the checker: change correct programs, judge each change by numbers.

A bundled correct program (``examples/<case>/``: the sequential graph and its rank graphs,
verified) is changed by one small semantic mutation at a time, each mutant is checked with
:func:`analyzer.check` (in-process, without ``--numeric``) and judged by the numeric witness's
simulation (:func:`analyzer.witness.simulate.run_ranks`, on the mutant's input relations):

- ``differs``: some output of the mutant's rank graphs, rebuilt with the relation the original
  check found for it, differs from the mutant's sequential output beyond the witness tolerance
  (:func:`analyzer.witness.check.tolerance`): the distributed program no longer computes what
  the sequential one does.
- A mutant that differs must not be ``verified``; if it is, the relations the check claims for
  the outputs are measured too: numbers that refute them make a **false proof**; numbers that
  confirm them (a dropped all-reduce turning ``logits`` into a ``Partial(sum)`` the check
  reports as such) make a proof of another, true, statement (``verified-other``).
- A mutant that does not differ is *equivalent* (``Add`` operands swapped, a norm's ``eps``
  changed below the tolerance); the checker may still flag it (a completeness gap, counted).
- A mutant the simulation cannot run (shapes that no longer fit) is ``invalid`` and not counted.

Kinds (:data:`KINDS`): ``swap-operands`` (inputs 0 and 1 of Sub, Div, MatMul, Pow, Concat,
Add, Mul; the branches of Where), ``add-sub`` (Add and Sub exchanged), ``drop-collective`` (an
AllReduce made an Identity), ``double-collective`` (an AllReduce applied twice), ``axis`` (the
``axis`` attribute moved by one), ``permutation`` (two entries of a Transpose's ``perm``
exchanged), ``constant`` (a float scalar constant ``c`` made ``1.5 c + 0.25``), ``swap-weights``
(two float initializers of one shape exchanged), ``negate-weight``, ``permute-rows`` (a weight's
rows reversed). Targets (:data:`TARGETS`): the sequential graph (``seq``), every rank the same
way (``ranks``), one rank (``one-rank``).

A false proof whose mutation touches only weights that are replicated and larger than the
sizes compared by value (issue 22 item 1: ``analyzer/inputs/infer.py`` compares small constants
and shard chunks only) is classed ``large-replicated-weight`` (:func:`known_gap`).

Usage: ``python scripts/mutate.py [--programs llama_tp2,...] [--per-kind 2] [--seed 0]
[--gap-programs llama_dp2_sgd,llama_tp4_kv2] [--out docs/soundness.md] [--no-write]`` writes the
``## Last run`` section of docs/soundness.md; exit code 1 when a false proof outside the known
gap was found.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

__all__ = [
    "DEFAULT_PROGRAMS",
    "KINDS",
    "TARGETS",
    "Mutant",
    "Outcome",
    "Program",
    "generate",
    "judge",
    "known_gap",
    "load_program",
    "run",
    "summary_markdown",
]

#: small correct programs, checked in well under a second each
DEFAULT_PROGRAMS = (
    "deepspeed_moe_ep2",
    "llama_tp2",
    "qwen2_tp2",
    "mistral_tp2",
    "llama_cp2",
    "qwen2_tp2_vocab",
    "llama_tp4",
    "gemma2_tp2",
    "llama_tp2_sp",
    "mixtral_ep2",
    "llama_tp4_kv2",
)
KINDS = (
    "swap-operands",
    "add-sub",
    "drop-collective",
    "double-collective",
    "axis",
    "permutation",
    "constant",
    "swap-weights",
    "negate-weight",
    "permute-rows",
)
TARGETS = ("seq", "ranks", "one-rank")
WEIGHT_KINDS = ("swap-weights", "negate-weight", "permute-rows")
_SWAP_OPS = {"Sub", "Div", "MatMul", "Pow", "Concat", "Add", "Mul", "Where"}
_FLOAT = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE, onnx.TensorProto.BFLOAT16}
_SMALL_CONSTANT = 4096  # elements: analyzer/inputs/infer.py compares replicated weights up to this size by value


@dataclass
class Program:
    """A verified bundled program, loaded once.

    Attributes:
        name: the examples/ folder.
        seq_path, rank_paths: its files.
        seq, ranks: the models.
        layouts: per output position, the layout the check found.
        relations: seq value -> layout text of its input relations.
        fed, aliases: what :func:`analyzer.witness.check._fed_inputs` gives for it.
    """

    name: str
    seq_path: Path
    rank_paths: list[Path]
    seq: onnx.ModelProto
    ranks: list[onnx.ModelProto]
    layouts: list
    relations: dict[str, str]
    fed: dict = field(default_factory=dict)  # layouts of the fed inputs (the witness's input relations)
    aliases: dict = field(default_factory=dict)


@dataclass
class Mutant:
    """One mutation of a program: the changed models (None where a file is unchanged)."""

    program: str
    kind: str
    target: str
    site: str
    seq: onnx.ModelProto | None
    ranks: list[onnx.ModelProto | None]
    weights: tuple[str, ...] = ()  # the initializers a weight mutation changed


@dataclass
class Outcome:
    """How the checker and the numbers saw a mutant.

    ``status``: ``flagged`` (differs, not verified), ``false-proof`` (differs, verified, the claimed
    relations refuted), ``verified-other`` (differs, verified with relations the numbers confirm),
    ``equivalent-flagged`` / ``equivalent-verified`` (does not differ), ``invalid``.
    """

    program: str
    kind: str
    target: str
    site: str
    status: str
    verdict: str = ""
    error: float = 0.0  # largest output error / tolerance under the original relations
    claimed: float = 0.0  # the same under the relations the mutant's check claims
    gap: str = ""  # known_gap() of a false proof
    note: str = ""
    extra: dict = field(default_factory=dict)


def load_program(name: str, examples: Path = ROOT / "examples") -> Program:
    """Load ``examples/<name>`` and check it (it must be verified).

    Raises:
        ValueError: the program is not verified.
    """
    from analyzer import check

    folder = examples / name
    rank_paths = sorted(folder.glob("rank*.onnx"), key=lambda p: int(p.stem[4:]))
    seq_path = folder / "seq.onnx"
    from analyzer.witness.check import _fed_inputs

    result = check(seq_path, rank_paths)
    if result.verdict != "verified":
        raise ValueError(f"{name}: the original program is {result.verdict}, not verified")
    fed, aliases = _fed_inputs(result.inputs)
    return Program(
        name,
        seq_path,
        rank_paths,
        result.inputs.seq,
        result.inputs.ranks,
        [o.layout for o in result.verdict_.outputs],
        {r.seq_value: str(r.layout) for r in result.inputs.relations},
        fed,
        aliases,
    )


# --- mutation sites and operators ----------------------------------------------------------------


def _float_weights(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    return [t for t in model.graph.initializer if t.data_type in _FLOAT and math.prod(t.dims) > 1]


def _sites(model: onnx.ModelProto, kind: str) -> list:
    """Where ``kind`` can apply in ``model``: node indices, initializer names or name pairs."""
    nodes = list(enumerate(model.graph.node))
    if kind == "swap-operands":
        return [
            i for i, n in nodes
            if n.op_type in _SWAP_OPS and n.domain in ("", "ai.onnx")
            and len(n.input) >= (3 if n.op_type == "Where" else 2)
            and (n.input[1] != n.input[2] if n.op_type == "Where" else n.input[0] != n.input[1])
        ]
    if kind == "add-sub":
        return [i for i, n in nodes if n.op_type in ("Add", "Sub") and n.domain in ("", "ai.onnx")]
    if kind in ("drop-collective", "double-collective"):
        return [i for i, n in nodes if n.op_type == "AllReduce"]
    if kind == "axis":
        return [i for i, n in nodes if any(a.name == "axis" and a.type == onnx.AttributeProto.INT for a in n.attribute)]
    if kind == "permutation":
        return [i for i, n in nodes if n.op_type == "Transpose" and any(len(a.ints) > 1 for a in n.attribute)]
    if kind == "constant":
        scalars = [t.name for t in model.graph.initializer if t.data_type in _FLOAT and math.prod(t.dims) == 1]
        scalars += [
            n.output[0] for n in model.graph.node
            if n.op_type == "Constant" and any(a.name == "value" and a.t.data_type in _FLOAT
                                               and math.prod(a.t.dims) == 1 for a in n.attribute)
        ]
        return scalars
    if kind == "swap-weights":
        by_shape: dict[tuple, list[str]] = {}
        for t in _float_weights(model):
            by_shape.setdefault((t.data_type, tuple(t.dims)), []).append(t.name)
        return [(a, b) for names in by_shape.values() for a, b in zip(names, names[1:])]
    if kind == "negate-weight":
        return [t.name for t in _float_weights(model)]
    if kind == "permute-rows":
        return [t.name for t in _float_weights(model) if t.dims[0] > 1]
    raise ValueError(kind)


def _find_node(model: onnx.ModelProto, like: onnx.NodeProto, index: int) -> int | None:
    """The index of the node of ``model`` that is ``like`` (same name, else same index and op)."""
    if like.name:
        for i, n in enumerate(model.graph.node):
            if n.name == like.name and n.op_type == like.op_type:
                return i
        return None
    nodes = model.graph.node
    return index if index < len(nodes) and nodes[index].op_type == like.op_type else None


def _set_array(model: onnx.ModelProto, name: str, fn: Callable[[np.ndarray], np.ndarray]) -> bool:
    for t in model.graph.initializer:
        if t.name == name:
            arr = numpy_helper.to_array(t)
            t.CopyFrom(numpy_helper.from_array(fn(arr).astype(arr.dtype), name))
            return True
    for n in model.graph.node:
        if n.op_type == "Constant" and n.output[0] == name:
            for a in n.attribute:
                if a.name == "value":
                    arr = numpy_helper.to_array(a.t)
                    a.t.CopyFrom(numpy_helper.from_array(fn(arr).astype(arr.dtype), a.t.name))
                    return True
    return False


def _apply(model: onnx.ModelProto, kind: str, site, like: onnx.NodeProto | None) -> bool:
    """Apply one mutation to ``model`` in place; False when it does not apply there."""
    if kind in WEIGHT_KINDS or kind == "constant":
        if kind == "swap-weights":
            a, b = site
            arrays = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer if t.name in (a, b)}
            if set(arrays) != {a, b} or arrays[a].shape != arrays[b].shape or np.array_equal(arrays[a], arrays[b]):
                return False
            return _set_array(model, a, lambda _: arrays[b]) and _set_array(model, b, lambda _: arrays[a])
        fn = {
            "negate-weight": lambda x: -x,
            "permute-rows": lambda x: np.flip(x, axis=0),
            "constant": lambda x: x * 1.5 + 0.25,
        }[kind]
        return _set_array(model, site, fn)
    i = _find_node(model, like, site)
    if i is None:
        return False
    node = model.graph.node[i]
    if kind == "swap-operands":
        a, b = (1, 2) if node.op_type == "Where" else (0, 1)
        node.input[a], node.input[b] = node.input[b], node.input[a]
    elif kind == "add-sub":
        node.op_type = "Sub" if node.op_type == "Add" else "Add"
    elif kind == "drop-collective":
        out = helper.make_node("Identity", [node.input[0]], list(node.output), name=node.name)
        model.graph.node[i].CopyFrom(out)
    elif kind == "double-collective":
        first = node.output[0] + "__mutant_once"
        again = onnx.NodeProto()
        again.CopyFrom(node)
        again.name = (node.name or "allreduce") + "__mutant_again"
        again.input[0] = first
        node.output[0] = first
        model.graph.node.insert(i + 1, again)
    elif kind == "axis":
        attr = next(a for a in node.attribute if a.name == "axis")
        attr.i = attr.i - 1 if attr.i != 0 else 1
    elif kind == "permutation":
        attr = next(a for a in node.attribute if a.name == "perm")
        perm = list(attr.ints)
        j = (site * 7) % (len(perm) - 1)  # a pair that depends on the site, same on every rank
        perm[j], perm[j + 1] = perm[j + 1], perm[j]
        del attr.ints[:]
        attr.ints.extend(perm)
    return True


def generate(
    program: Program, rng: random.Random, kinds: Sequence[str] = KINDS
) -> Iterator[tuple[str, Iterator[Mutant]]]:
    """Per kind and target, ``(group label, the mutants at its sites in an order drawn with rng)``;
    the mutants are made as they are read."""
    n = len(program.ranks)
    for kind in kinds:
        for target in TARGETS:
            base = program.seq if target == "seq" else program.ranks[0]
            sites = _sites(base, kind)
            rng.shuffle(sites)
            one = rng.randrange(n)
            yield f"{kind} {target}", _mutants(program, kind, target, base, sites, one)


def gap_mutants(program: Program, rng: random.Random) -> Iterator[tuple[str, Iterator[Mutant]]]:
    """As :func:`generate`, for the weight kinds at the weights of :func:`known_gap` only:
    replicated and larger than the values compared by value (issue 22 item 1)."""
    sizes = {t.name: math.prod(t.dims) for t in program.seq.graph.initializer}

    def large(name: str) -> bool:
        return program.relations.get(name) == "Replicate" and sizes.get(name, 0) > _SMALL_CONSTANT

    n = len(program.ranks)
    for kind in WEIGHT_KINDS:
        for target in TARGETS:
            base = program.seq if target == "seq" else program.ranks[0]
            sites = [x for x in _sites(base, kind) if all(large(w) for w in (x if isinstance(x, tuple) else (x,)))]
            rng.shuffle(sites)
            yield f"{kind} {target}", _mutants(program, kind, target, base, sites, rng.randrange(n))


def _mutants(
    program: Program, kind: str, target: str, base: onnx.ModelProto, sites: list, one: int
) -> Iterator[Mutant]:
    n = len(program.ranks)
    which = [0] if target == "seq" else (list(range(1, n + 1)) if target == "ranks" else [one + 1])
    for site in sites:
        like = base.graph.node[site] if isinstance(site, int) else None
        models: list[onnx.ModelProto | None] = [None] * (n + 1)
        ok = True
        for k in which:
            model = onnx.ModelProto()
            model.CopyFrom(program.seq if k == 0 else program.ranks[k - 1])
            ok = ok and _apply(model, kind, site, like)
            models[k] = model
        if not ok:
            continue
        if isinstance(site, int):
            label = base.graph.node[site].name or f"node #{site}"
        else:
            label = " <-> ".join(site) if isinstance(site, tuple) else site
        where = f"rank {one}" if target == "one-rank" else target
        weights = tuple(site) if isinstance(site, tuple) else ((site,) if kind in WEIGHT_KINDS else ())
        yield Mutant(program.name, kind, where, label, models[0], models[1:], weights)


def known_gap(program: Program, mutant: Mutant) -> str:
    """``large-replicated-weight`` when the mutation changed only weights the sequential graph
    and the ranks hold replicated and that are larger than the values compared by value (issue
    22 item 1), else ""."""
    if not mutant.weights:
        return ""
    sizes = {t.name: math.prod(t.dims) for t in program.seq.graph.initializer}
    for w in mutant.weights:
        if program.relations.get(w) != "Replicate" or sizes.get(w, 0) <= _SMALL_CONSTANT:
            return ""
    return "large-replicated-weight"


# --- judging -------------------------------------------------------------------------------------


def _write(mutant: Mutant, program: Program, folder: Path) -> tuple[Path, list[Path]]:
    seq = program.seq_path
    if mutant.seq is not None:
        seq = folder / "seq.onnx"
        onnx.save(mutant.seq, str(seq))
    ranks = []
    for r, model in enumerate(mutant.ranks):
        if model is None:
            ranks.append(program.rank_paths[r])
        else:
            ranks.append(folder / f"rank{r}.onnx")
            onnx.save(model, str(ranks[-1]))
    return seq, ranks


def judge(
    program: Program, mutant: Mutant, folder: Path, seeds: Sequence[int] = (0,), check_invalid: bool = True
) -> Outcome:
    """Judge a mutant by numbers, then check it (module docstring). The mutation changes no graph
    input, so the program's own input relations feed the simulation. A mutant the simulation
    cannot run is ``invalid``; it is checked only with ``check_invalid`` (its verdict is kept)."""
    from analyzer import check
    from analyzer.errors import InputError
    from analyzer.witness.check import _scale, tolerance, witness_failure
    from analyzer.witness.layouts import relation_error
    from analyzer.witness.simulate import run_ranks

    out = Outcome(mutant.program, mutant.kind, mutant.target, mutant.site, "invalid")
    seq = mutant.seq or program.seq
    ranks = [m or program.ranks[r] for r, m in enumerate(mutant.ranks)]
    names = [(seq.graph.output[i].name, [m.graph.output[i].name for m in ranks]) for i in range(len(program.layouts))]
    sims, worst = [], 0.0
    try:
        for s in seeds:
            sim = run_ranks(seq, ranks, program.fed, seed=s, aliases=program.aliases, keep_intermediates=True)
            sims.append(sim)
            for layout, (name, pieces) in zip(program.layouts, names):
                tol = tolerance(_scale(sim.seq[name]))
                worst = max(worst, relation_error(layout, sim.seq[name], sim.pieces(pieces)) / tol)
    except Exception as exc:  # noqa: BLE001 - sorted by witness_failure, others re-raised
        reason = witness_failure(exc)
        if reason is None:
            raise
        out.note = reason
        sims = []
    if not sims and not check_invalid:
        return out
    seq_path, rank_paths = _write(mutant, program, folder)
    try:
        result = check(seq_path, rank_paths)
        out.verdict = result.verdict
    except InputError as exc:
        result, out.verdict = None, "input-error"
        out.note = out.note or str(exc)
    if not sims:
        return out
    claimed = 0.0
    if result is not None and result.verdict == "verified":
        for sim in sims:
            for o in result.verdict_.outputs:
                tol = tolerance(_scale(sim.seq[o.name]))
                present = all(v in sim.ranks[r] for r, v in enumerate(o.rank_values))
                err = relation_error(o.layout, sim.seq[o.name], sim.pieces(o.rank_values)) if present else float("inf")
                claimed = max(claimed, err / tol)
    out.error, out.claimed = worst, claimed
    differs = not worst <= 1.0
    verified = out.verdict == "verified"
    if not differs:
        out.status = "equivalent-verified" if verified else "equivalent-flagged"
    elif not verified:
        out.status = "flagged"
    elif not claimed <= 1.0:
        out.status = "false-proof"
        out.gap = known_gap(program, mutant)
    else:
        out.status = "verified-other"
    return out


def run(
    programs: Sequence[Program],
    *,
    per_kind: int = 2,
    seed: int = 0,
    kinds: Sequence[str] = KINDS,
    seeds: Sequence[int] = (0,),
    tries: int = 3,
    check_invalid: bool = True,
    gap_only: bool = False,
    progress: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Judge the mutants of every program: per kind and target, sites in an order drawn with
    ``random.Random(seed)`` until ``per_kind`` mutants could be judged (at most ``tries *
    per_kind`` tried; the invalid ones are returned too). ``gap_only``: the mutants of
    :func:`gap_mutants` instead."""
    rng = random.Random(seed)
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="shardlog-mutants-") as tmp:
        for program in programs:
            groups = gap_mutants(program, rng) if gap_only else generate(program, rng, kinds)
            for _, group in groups:
                valid = tried = 0
                for mutant in group:
                    if valid >= per_kind or tried >= tries * per_kind:
                        break
                    outcome = judge(program, mutant, Path(tmp), seeds, check_invalid)
                    tried += 1
                    valid += outcome.status != "invalid"
                    outcomes.append(outcome)
                    if progress is not None:
                        progress(outcome)
    return outcomes


# --- report --------------------------------------------------------------------------------------


def summary_markdown(outcomes: Sequence[Outcome], seconds: float, programs: Sequence[str], per_kind: int,
                     seed: int, gap: Sequence[Outcome] = (), gap_programs: Sequence[str] = (),
                     cpu: float | None = None) -> str:
    """The ``## Last run`` section of docs/soundness.md (``gap``: the outcomes of the
    :func:`gap_mutants` run over ``gap_programs``; ``seconds`` wall, ``cpu`` CPU time)."""
    valid = [o for o in outcomes if o.status != "invalid"]
    differ = [o for o in valid if o.status in ("flagged", "false-proof", "verified-other")]
    false = [o for o in valid if o.status == "false-proof"]
    known = [o for o in false if o.gap]
    equiv = [o for o in valid if o.status.startswith("equivalent")]
    invalid = [o for o in outcomes if o.status == "invalid"]
    lines = [
        "## Last run",
        "",
        f"`python scripts/mutate.py --per-kind {per_kind} --seed {seed}` over {len(programs)} programs "
        f"({', '.join(programs)}): {len(outcomes)} mutants, {len(invalid)} invalid (the simulation cannot "
        f"run them: shapes that no longer fit, collectives that no longer pair; {_invalid_verdicts(invalid)}), "
        f"{len(valid)} judged, in {seconds:.0f} s" + (f" ({cpu:.0f} s of CPU, one process)." if cpu else "."),
        "",
        "| | mutants |",
        "|---|---|",
        f"| judged | {len(valid)} |",
        f"| differ from the sequential program | {len(differ)} |",
        f"| flagged (differ, not verified) | {sum(o.status == 'flagged' for o in valid)} |",
        f"| false proofs (differ, verified, the claimed relations refuted) | {len(false)} |",
        f"| of which large replicated weights (issue 22 item 1) | {len(known)} |",
        f"| verified with another relation the numbers confirm | {sum(o.status == 'verified-other' for o in valid)} |",
        f"| equivalent (within the tolerance) | {len(equiv)} |",
        f"| equivalent mutants flagged | {sum(o.status == 'equivalent-flagged' for o in valid)} |",
        "",
        "Per kind (judged / differ / flagged / false proofs / equivalent flagged):",
        "",
        "| kind | seq | every rank | one rank |",
        "|---|---|---|---|",
    ]
    for kind in KINDS:
        cells = []
        for target in TARGETS:
            mine = [o for o in valid if o.kind == kind and (o.target == target or (
                target == "one-rank" and o.target.startswith("rank ")))]
            if not mine:
                cells.append("-")
                continue
            c = Counter(o.status for o in mine)
            d = c["flagged"] + c["false-proof"] + c["verified-other"]
            cells.append(f"{len(mine)} / {d} / {c['flagged']} / {c['false-proof']} / {c['equivalent-flagged']}")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    if gap_programs:
        judged = [o for o in gap if o.status != "invalid"]
        c = Counter(o.status for o in judged)
        lines += [
            "",
            f"The known gap (issue 22 item 1), its mutants alone (`--gap-programs {','.join(gap_programs)}`: "
            "the weight kinds at replicated weights of more than 4096 elements, every target): "
            f"{len(judged)} judged, {c['false-proof']} false proofs, {c['flagged']} flagged.",
        ]
    if false:
        lines += ["", "False proofs:", ""]
        lines += [f"- {o.program}: {o.kind} on {o.target} at `{o.site}` (error {o.claimed:.3g} x tolerance)"
                  + (f", {o.gap}" if o.gap else "") for o in false]
    return "\n".join(lines) + "\n"


def _invalid_verdicts(invalid: Sequence[Outcome]) -> str:
    checked = [o for o in invalid if o.verdict]
    if not checked:
        return "not checked"
    c = Counter(o.verdict for o in checked)
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items()))


def write_section(path: Path, section: str) -> None:
    """Replace the ``## Last run`` section of ``path`` (up to the next ``## ``) by ``section``."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Soundness\n"
    head, sep, rest = text.partition("## Last run")
    tail = ""
    if sep:
        nxt = rest.find("\n## ")
        tail = rest[nxt + 1:] if nxt >= 0 else ""
    path.write_text(head.rstrip("\n") + "\n\n" + section + ("\n" + tail if tail else ""), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", default=",".join(DEFAULT_PROGRAMS), help="examples/ folders, comma-separated")
    parser.add_argument("--per-kind", type=int, default=2, help="mutants per kind and target in each program")
    parser.add_argument("--seed", type=int, default=0, help="seed of the site draws")
    parser.add_argument("--seeds", type=int, default=1, help="witness seeds per mutant")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "soundness.md")
    parser.add_argument("--no-write", action="store_true", help="print the summary, do not write --out")
    parser.add_argument("--gap-programs", default="llama_dp2_sgd,llama_tp4_kv2",
                        help="programs for the known-gap run (issue 22 item 1); empty: none")
    parser.add_argument("--no-check-invalid", action="store_true",
                        help="do not check the mutants the simulation cannot run (faster)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every mutant's outcome")
    args = parser.parse_args(argv)
    names = [p for p in args.programs.split(",") if p]
    start, cpu = time.perf_counter(), time.process_time()
    programs = [load_program(p) for p in names]

    def show(o: Outcome) -> None:
        if args.verbose or o.status == "false-proof":
            print(f"{o.status:20} {o.program} {o.kind} {o.target} {o.site} ({o.error:.3g}, {o.claimed:.3g}) {o.note}",
                  flush=True)

    outcomes = run(programs, per_kind=args.per_kind, seed=args.seed, seeds=range(args.seeds),
                   check_invalid=not args.no_check_invalid, progress=show)
    gap_names = [p for p in args.gap_programs.split(",") if p]
    gap = run([load_program(p) for p in gap_names], per_kind=args.per_kind, seed=args.seed, seeds=range(args.seeds),
              check_invalid=False, gap_only=True) if gap_names else []
    section = summary_markdown(outcomes, time.perf_counter() - start, names, args.per_kind, args.seed, gap,
                               gap_names, time.process_time() - cpu)
    print(section)
    if not args.no_write:
        write_section(args.out, section)
    unknown = [o for o in outcomes if o.status in ("false-proof", "verified-other") and not o.gap]
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main())
