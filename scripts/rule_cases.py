"""Build the golden cases of the rule files: ``tests/rules/library/<dir>.<stem>/`` for each
``rules/<dir>/<stem>.dl``, facts in, expected rows out (``analyzer/datalog/golden.py``).

A case folder holds:

* ``case.yaml`` (written by hand): ``rules``, the rule file the case exercises; ``about``, what
  the graphs hold and what the rules should derive from them; the graphs, small and written
  out: ``seq`` and ``ranks`` (a list, or ``rank`` with ``world_size`` for one text on every
  rank) in ONNX text (``header`` replaces the default ``<ir_version ...>`` line), or torch.fx
  dumps with ``format: fx`` (a ``forward`` body each, ``params`` its signature, also per rank
  as ``rank_params``); ``spec``, a ``--relations`` spec (YAML mapping); for a two-axis mesh
  ``replica`` (the replica's sequential graph) and ``axis``, the mesh axis whose check's facts
  are kept; ``pipeline``, a number of pipeline stages (the ``ranks`` are then the stage files,
  tensor-parallel rank fastest, checked as ``--pp`` does); or ``example``, a bundled
  ``examples/`` folder whose graphs are taken whole (for a rule file whose pattern needs a
  whole exported layer);
* ``program.txt``: the whole rule library (every case runs every rule file, so a change to one
  file shows in the cases whose behaviour it moves);
* ``facts/*.facts``: what a check of those graphs hands to the engine
  (``analyzer.check(...).derivation.facts``: graph facts, input relations, oracle facts), this
  script's output;
* ``expected/*.csv``: every non-empty output relation, from the engine, with ``--expected``.

Usage (from the repository root)::

    python scripts/rule_cases.py                   # rewrite facts/ of every case
    python scripts/rule_cases.py --expected        # ... and expected/ (read the diff)
    python scripts/rule_cases.py ops.MatMul ...    # these cases only

``tests/test_rule_file_cases.py`` runs the cases on every engine, checks that each case fires a
rule of its file, and that every rule file has a case.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
from pathlib import Path

import onnx
import onnx.parser
import yaml

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "rules" / "library"
HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'
PROGRAM = """# the whole rule library (scripts/rule_cases.py)
schemas/*.dl
rules/core/*.dl
rules/ops/*.dl
rules/kernels/*.dl
rules/parallel/*.dl
rules/collectives/*.dl
rules/diagnose/*.dl
"""
FX_HEADER = "import torch\nfrom torch import device\n\n\nclass GraphModule(torch.nn.Module):\n"

sys.path.insert(0, str(ROOT))


def case_name(rule_file: Path) -> str:
    """The case folder name of a rule file: ``rules/ops/MatMul.dl`` -> ``ops.MatMul``."""
    rel = rule_file.resolve().relative_to(ROOT / "rules")
    return ".".join([*rel.parent.parts, rel.stem])


def _onnx_text(cfg: dict, text: str) -> str:
    return cfg.get("header", HEADER) + "\n" + textwrap.dedent(text)


def _fx_text(params: str, body: str) -> str:
    lines = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    return f"{FX_HEADER}    def forward(self, {params}):\n{lines}\n"


def _write_graphs(cfg: dict, folder: Path) -> tuple[Path, list[Path]]:
    """Write the case's graphs into ``folder``; returns (seq path, rank paths)."""
    ranks = cfg.get("ranks") or [cfg["rank"]] * int(cfg.get("world_size", 2))
    if cfg.get("format") == "fx":
        seq = folder / "seq.py"
        seq.write_text(_fx_text(cfg["params"], cfg["seq"]))
        paths = []
        for r, body in enumerate(ranks):
            path = folder / f"rank{r}.py"
            path.write_text(_fx_text(cfg.get("rank_params", cfg["params"]), body))
            paths.append(path)
        return seq, paths
    seq = folder / "seq.onnx"
    onnx.save(onnx.parser.parse_model(_onnx_text(cfg, cfg["seq"])), seq)
    paths = []
    for r, text in enumerate(ranks):
        path = folder / f"rank{r}.onnx"
        onnx.save(onnx.parser.parse_model(_onnx_text(cfg, text)), path)
        paths.append(path)
    if "replica" in cfg:
        onnx.save(onnx.parser.parse_model(_onnx_text(cfg, cfg["replica"])), folder / "replica.onnx")
    return seq, paths


def case_facts(case: Path) -> dict[str, list[tuple]]:
    """The facts a check of ``case``'s graphs hands to the engine (only non-empty relations)."""
    from analyzer import check

    cfg = yaml.safe_load((case / "case.yaml").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="rule-case-") as tmp:
        folder = Path(tmp)
        extra = {}
        if "example" in cfg:
            source = ROOT / cfg["example"]
            files = yaml.safe_load((source / "case.yaml").read_text(encoding="utf-8"))["files"]
            seq, ranks = source / files["seq"], [source / f for f in files.get("ranks") or files["stages"]]
        else:
            seq, ranks = _write_graphs(cfg, folder)
        if "spec" in cfg:
            spec = dict(cfg["spec"])
            if "replica" in cfg:
                spec["replica_seq"] = "replica.onnx"
            (folder / "spec.yaml").write_text(yaml.safe_dump(spec))
            extra["relations"] = folder / "spec.yaml"
        if "pipeline" in cfg:
            extra["pipeline"] = int(cfg["pipeline"])
        result = check(seq, ranks, memoize=False, **extra)
        if "axis" in cfg:
            result = next(c.result for c in result.mesh.checks if c.axis == cfg["axis"] and not c.reused)
        facts = result.derivation.facts
    return {name: sorted(set(rows)) for name, rows in facts.items() if rows}


def fired_rules(case: Path) -> tuple[int, int]:
    """(rules of the case's rule file that fire on its facts, rules in that file), on the
    default engine (``analyzer.solve.coverage``)."""
    from analyzer.datalog import read_facts_dir
    from analyzer.datalog.golden import load_case_program
    from analyzer.engines import get_engine
    from analyzer.solve.coverage import coverage_of, instrument

    cfg = yaml.safe_load((case / "case.yaml").read_text(encoding="utf-8"))
    program = load_case_program(case, ROOT)
    facts = read_facts_dir(case / "facts", program.decls)
    derived = get_engine("seminaive").run(instrument(program), facts)
    target = (ROOT / cfg["rules"]).resolve()
    mine = [c for c in coverage_of(program, derived) if Path(c.file).resolve() == target]
    return sum(c.fired for c in mine), len(mine)


def build(case: Path, expected: bool) -> None:
    """Rewrite ``case``'s program.txt and facts/ (and expected/ with ``expected``)."""
    from analyzer.datalog import write_facts_dir
    from analyzer.datalog.golden import load_case_program, run_golden_case

    (case / "program.txt").write_text(PROGRAM)
    program = load_case_program(case, ROOT)
    facts = case_facts(case)
    folder = case / "facts"
    for stale in folder.glob("*.facts"):
        stale.unlink()
    write_facts_dir(folder, program.decls, facts)
    if expected:
        run_golden_case(case, "seminaive", regen=True, root=ROOT)
    fired, total = fired_rules(case)
    print(f"{case.name}: {sum(map(len, facts.values()))} facts in {len(facts)} relations; {fired}/{total} rules fire")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case folder names (default: every case)")
    parser.add_argument("--expected", action="store_true", help="also rewrite expected/ from the seminaive engine")
    args = parser.parse_args(argv)
    names = args.cases or sorted(p.parent.name for p in CASES.glob("*/case.yaml"))
    for name in names:
        case = CASES / name
        if not (case / "case.yaml").is_file():
            print(f"{case}: no case.yaml", file=sys.stderr)
            return 2
        build(case, args.expected)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
