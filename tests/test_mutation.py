"""Mutation testing of the checker (scripts/mutate.py, issue 22 item 4): bundled correct
programs changed by one small semantic mutation at a time (kinds and targets in the script's
docstring), each judged by the numeric witness's simulation; a mutant whose distributed program
no longer computes the sequential one must not be verified.

The one known class of false proofs, mutations confined to replicated weights larger than the
weights compared by value (issue 22 item 1), is tested on its own: expected to fail while the
probe below shows that gap open (strict: an unexpected pass is an error, so the marker goes when
the fix lands), and required to pass once it is closed. Runs in the default ``pytest -q``
(about 90 s on one core); ``-m "not mutation"`` leaves it out.
"""

from __future__ import annotations

import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import EXAMPLES
from onnx import helper, numpy_helper

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import mutate  # noqa: E402

pytestmark = [pytest.mark.mutation, pytest.mark.slow]  # ~3 minutes of simulated mutants

PER_KIND = 2
GAP_PROGRAMS = ("llama_dp2_sgd", "llama_tp4_kv2")  # replicated weights of 8192 elements


def _item1_open() -> bool:
    """Whether a replicated weight larger than 4096 elements still escapes the comparison by
    value (issue 22 item 1): ``y = x @ W`` with W 64x65 and rank 1 holding ``-W`` is verified."""
    from analyzer import check

    w = np.random.default_rng(0).standard_normal((64, 65)).astype(np.float32)

    def linear(weight: np.ndarray) -> onnx.ModelProto:
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
            [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 64])],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 65])],
            [numpy_helper.from_array(weight, "w")],
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])

    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / f"{k}.onnx" for k in ("seq", "r0", "r1")]
        for path, weight in zip(paths, (w, w, -w)):
            onnx.save(linear(weight), str(path))
        return check(paths[0], paths[1:]).verdict == "verified"


ITEM1_OPEN = _item1_open()


def _programs(names):
    missing = [n for n in names if not (EXAMPLES / n).is_dir()]
    if missing:
        pytest.skip(f"examples/{missing[0]} not present")
    return [mutate.load_program(n) for n in names]


@pytest.fixture(scope="module")
def outcomes():
    return mutate.run(_programs(mutate.DEFAULT_PROGRAMS), per_kind=PER_KIND, seed=0, check_invalid=False)


def test_at_least_500_mutants_over_8_programs_of_every_kind_and_target(outcomes):
    judged = [o for o in outcomes if o.status != "invalid"]
    assert len(judged) >= 500 and len({o.program for o in judged}) >= 8
    assert {o.kind for o in judged} == set(mutate.KINDS)
    targets = Counter("one-rank" if o.target.startswith("rank ") else o.target for o in judged)
    assert set(targets) == set(mutate.TARGETS) and min(targets.values()) >= 100, targets
    # the judge is not blind: most mutants change the computation, and all of those are caught
    assert sum(o.status == "flagged" for o in judged) > 0.8 * len(judged)


def test_no_mutant_that_computes_something_else_is_verified(outcomes):
    wrong = [
        (o.program, o.kind, o.target, o.site, o.status, f"{o.claimed:.3g}")
        for o in outcomes
        if o.status in ("false-proof", "verified-other") and not (ITEM1_OPEN and o.gap)
    ]
    assert wrong == []


@pytest.mark.xfail(
    ITEM1_OPEN,
    reason="issue 22 item 1: replicated weights larger than 4096 elements are not compared by value",
    strict=True,
)
def test_no_false_proof_from_large_replicated_weights():
    gap = mutate.run(_programs(GAP_PROGRAMS), per_kind=PER_KIND, seed=0, check_invalid=False, gap_only=True)
    judged = [o for o in gap if o.status != "invalid"]
    assert len(judged) >= 20 and {o.kind for o in judged} == set(mutate.WEIGHT_KINDS)
    assert [(o.program, o.kind, o.target, o.site) for o in judged if o.status != "flagged"] == []


def test_the_judge_tells_a_changed_program_from_an_unchanged_one(tmp_path):
    """The oracle itself: a negated weight differs; exchanging the operands of an Add does not."""
    (program,) = _programs(["llama_tp2"])
    first = {}
    for label, group in mutate.generate(program, random.Random(0), ("negate-weight", "swap-operands")):
        if label.endswith(" seq"):
            first[label.split()[0]] = next(m for m in group if m.kind == "negate-weight" or "add" in m.site)
    negated = mutate.judge(program, first["negate-weight"], tmp_path)
    assert negated.status == "flagged" and negated.error > 100 and negated.verdict == "discrepancy"
    swapped = mutate.judge(program, first["swap-operands"], tmp_path)
    assert swapped.status.startswith("equivalent") and swapped.error < 0.5
