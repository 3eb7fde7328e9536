"""All-to-all expert parallelism (rules/parallel/expert_alltoall.dl) on the DeepSpeed-MoE export
(examples/deepspeed_moe_ep2: deepspeed.moe.layer.MoE, top-1 gating, 2 expert-parallel ranks, the
slot buffers exchanged by com.microsoft::AllToAll), every auxiliary relation checked on numbers
(random inputs, the simulator's AllToAll).

The graphs are committed; producing them needs DeepSpeed (scripts/export_deepspeed_moe.py), these
tests do not.
"""

from __future__ import annotations

import numpy as np
from conftest import EXAMPLES

from analyzer import check
from analyzer.layout import Layout
from analyzer.witness.check import confirm_relations
from analyzer.witness.simulate import run_ranks

CASE = EXAMPLES / "deepspeed_moe_ep2"
BUG = EXAMPLES / "deepspeed_moe_ep2_bug_missing_combine_alltoall"


def _check(case):
    return check(case / "seq.onnx", [case / "rank0.onnx", case / "rank1.onnx"])


def _rows(result, name):
    cols = list(result.derivation.decls[name].column_names)
    return [dict(zip(cols, row)) for row in result.derivation.derived.get(name, [])]


def _sim(result, seed=0):
    inp = result.inputs
    return run_ranks(inp.canonical_seq or inp.seq, inp.canonical_ranks or inp.ranks,
                     {"hidden_states": Layout("Shard", 0)}, keep_intermediates=True, seed=seed)


def _values(sim, g):
    return sim.seq if g == "seq" else sim.ranks[int(g[1:])]


def test_verified_and_every_layout_relation_holds_on_numbers():
    result = _check(CASE)
    assert result.verdict == "verified"
    checked, refuted = confirm_relations(result.inputs, result.derivation.derived, result.derivation.decls)
    assert refuted == [] and checked > 20


def test_routing_slots_and_encode_decode_hold_on_numbers():
    """RouteMask (m = one_hot(a): no token dropped), SlotOf (slot = a*C + loc, injective, block a),
    Encoded (b[slot[t]] = x[t]), Decoded (y[t] = o[slot[t]]), in seq and on both ranks, for two seeds."""
    result = _check(CASE)
    masks, slots, enc, dec = (_rows(result, n) for n in ("RouteMask", "SlotOf", "Encoded", "Decoded"))
    assert {r["g"] for r in slots} == {"seq", "r0", "r1"}
    assert len(masks) == len(enc) == len(dec) == 3
    for seed in (0, 1):
        sim = _sim(result, seed)
        for row in masks:
            v = _values(sim, row["g"])
            a = np.asarray(v[row["a"]]).reshape(-1)
            onehot = np.eye(row["e"], dtype=np.int64)[a]
            assert np.array_equal(v[row["m"]], onehot) and np.array_equal(v[row["m0"]], onehot), row
        for row in slots:
            v = _values(sim, row["g"])
            w, a, c = np.asarray(v[row["w"]]).reshape(-1), np.asarray(v[row["a"]]).reshape(-1), row["c"]
            assert len(set(w.tolist())) == w.size and np.array_equal(w // c, a), row
        for row in enc:
            v = _values(sim, row["g"])
            w = np.asarray(v[row["w"]]).reshape(-1)
            assert np.array_equal(np.asarray(v[row["b"]])[w], np.asarray(v[row["x"]])), row
        for row in dec:
            v = _values(sim, row["g"])
            w = np.asarray(v[row["w"]]).reshape(-1)
            assert np.array_equal(np.asarray(v[row["y"]]), np.asarray(v[row["o"]])[w]), row


def test_experts_outputs_agree_on_every_used_slot():
    """BlockFn / TokenOut: the experts' output at each token's slot is the same function of the token
    in seq and on its rank (the slots differ: rank r's token t is seq token r*S/N + t)."""
    result = _check(CASE)
    outs = {r["g"]: r for r in _rows(result, "TokenOut")}
    assert set(outs) == {"seq", "r0", "r1"}
    blocks = _rows(result, "BlockFn")
    assert {(r["g"], r["e"]) for r in blocks} == {(g, e) for g in ("seq", "r0", "r1") for e in range(4)}
    slot_of = {r["g"]: r["w"] for r in _rows(result, "SlotOf")}
    sim = _sim(result)
    ws = np.asarray(sim.seq[slot_of["seq"]]).reshape(-1)
    os_ = np.asarray(sim.seq[outs["seq"]["o"]])
    per_rank = ws.size // 2
    for r in (0, 1):
        v, g = sim.ranks[r], f"r{r}"
        wr = np.asarray(v[slot_of[g]]).reshape(-1)
        got = np.asarray(v[outs[g]["o"]])[wr]
        want = os_[ws[r * per_rank:(r + 1) * per_rank]]
        assert np.max(np.abs(got - want)) < 1e-5, r


def test_combine_without_the_second_alltoall_is_flagged_at_the_decode():
    result = _check(BUG)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.scope == "moe.deepspeed_moe" and "moe-combine-alltoall" in first.hint_ids
    assert "_sparse_decode" in first.source or "sharded_moe.py" in first.source
    # no rank's decoded buffer came back through the exchange pair: no expert blocks on the ranks
    assert all(r["g"] == "seq" for r in _rows(result, "BlockFn"))
