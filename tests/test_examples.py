"""The bundled examples: correct exports are verified, bug variants flagged in the changed
module, and the numeric witness agrees with each verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES

from analyzer import check

CASES = sorted(p for p in EXAMPLES.glob("*") if (p / "case.yaml").is_file())
# the hint that names the fix, by the bug kind in the case name
FIX_HINT = {
    "missing_allreduce": "missing-allreduce",
    "bias_every_rank": "bias-before-reduce",
    "shard_order": "shard-order",
}


def _case(path: Path) -> tuple[dict, Path, list[Path]]:
    cfg = yaml.safe_load((path / "case.yaml").read_text())
    ranks = [path / f"rank{r}.onnx" for r in range(cfg["world_size"])]
    return cfg, path / "seq.onnx", ranks


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_example_verdict(case):
    cfg, seq, ranks = _case(case)
    result = check(seq, ranks, numeric=True)
    assert result.verdict == cfg["expected"]
    errors = result.numeric
    if cfg["expected"] == "verified":
        assert all(o.relation is not None for o in result.verdict_.outputs)
        assert max(errors.values()) < 1e-3, errors
    else:
        assert max(errors.values()) > 1e-2, errors
        first = result.verdict_.discrepancies[0]
        # the frontier, or the node that made the pending Partial reaching it
        assert cfg["bug_module"] in (first.scope, first.origin_scope), (first.node, first.scope, first.origin_scope)
        assert first.source.startswith("transformers/models/"), first.source
        kind = next(k for k in FIX_HINT if case.name.endswith(k))
        assert FIX_HINT[kind] in first.hint_ids, first.hint_ids


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_every_derived_relation_holds_on_numbers(case):
    """The simulator confirms each relation the rules derived (every Holds with its pieces)."""
    from analyzer.witness import confirm_relations

    _, seq, ranks = _case(case)
    result = check(seq, ranks)
    checked, refuted = confirm_relations(result.inputs, result.derivation.derived, result.derivation.decls)
    assert checked > 50
    assert refuted == []
