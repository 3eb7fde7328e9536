"""Layer memoization for graphs without module scopes (torch.fx dumps): layers from repetition
(analyzer/speedups/repeats.py), weights named by position (analyzer/speedups/memo.py). The repeat finder on
hand-made signature sequences; GraphGuard's GPT dumps collapsed with the same results as with
memoization off; mutated dumps (a rank reading another layer's weights, a bug in one layer);
a wrong phase falls back to the whole graph."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from conftest import entangle_dumps_root

import analyzer.speedups.memo as memo
from analyzer import check
from analyzer.inputs.infer import load_spec
from analyzer.inputs.load import load_inputs
from analyzer.reports.text import to_json
from analyzer.speedups import repeats
from analyzer.speedups.memo import collapse_layers
from analyzer.speedups.repeats import choose_anchor, find_repeat, layer_numbers

ROOT = Path(__file__).resolve().parents[1]
ENTANGLE = ROOT / "examples" / "entangle"
CASES = sorted(p.parent.name for p in ENTANGLE.glob("*/case.yaml"))
BUNDLED_GPT = ENTANGLE / "published" / "gpt"
GPT_SPEC = ENTANGLE / "gpt_tp2_layer1" / "spec.yaml"

# a layer of 10 distinct signatures; "n" and "m" recur inside it
LAYER = list("abcdnefgnhm") + ["m"]


# --- the repeat finder on hand-made sequences --------------------------------------------


def test_layers_between_a_prefix_and_a_suffix_are_found_whole():
    sigs = list("PQRS") + LAYER * 5 + list("XYZ")
    r = find_repeat(sigs)
    assert (r.start, r.period) == (4, len(LAYER))
    assert _cut(sigs, r, choose_anchor(r, [])) == [LAYER] * 5


def test_the_shorter_period_wins_a_tie():
    r = find_repeat(LAYER * 4)
    assert r.period == len(LAYER) and r.end - r.start == 4 * len(LAYER)


def test_no_repeat():
    assert find_repeat(list("abcdefghijklmnopqrstuvwxyz")) is None
    assert find_repeat(list("abcdefgh") * 1 + list("abcdefgX")) is None  # one period only
    assert find_repeat(list("abc") * 10) is None  # period below MIN_PERIOD


def test_rank_layers_are_cut_where_the_sequential_graph_cuts_them():
    # the rank's layers hold an extra collective "C"; its prefix ends with the layer's last
    # signature "m" (the stretch starts a node early, at another rotation)
    seq = list("PQ") + LAYER * 3 + list("Z")
    rank_layer = LAYER[:5] + ["C"] + LAYER[5:]
    rank = list("Pm") + rank_layer * 3 + list("Z")
    rs, rr = find_repeat(seq), find_repeat(rank)
    assert rr.start == 1 and rr.period == len(rank_layer)  # rotated by one
    anchor = choose_anchor(rs, [rr])
    assert _cut(seq, rs, anchor) == [LAYER] * 3
    assert _cut(rank, rr, anchor) == [rank_layer] * 3


def _cut(sigs, repeat, anchor):
    numbers = layer_numbers(sigs, repeat, anchor)
    out: dict[int, list] = {}
    for i, k in sorted(numbers.items()):
        out.setdefault(k, []).append(sigs[i])
    return [out[k] for k in sorted(out)]


def test_no_anchor_when_a_graph_has_no_repeat_or_no_common_signature():
    r = find_repeat(LAYER * 3)
    assert choose_anchor(r, [None]) is None
    assert choose_anchor(None, [r]) is None
    other = find_repeat([s.upper() for s in LAYER] * 3)
    assert choose_anchor(r, [other]) is None


def test_runs_need_equal_weight_base_shifts_in_every_graph():
    prints = {0: "L", 1: "L", 2: "L"}
    seq = memo._Side([0, 1, 2], prints, set(), set(), {0: {"w_": 1}, 1: {"w_": 5}, 2: {"w_": 9}}, set())
    same = memo._Side([0, 1, 2], prints, set(), set(), {0: {"w_": 1}, 1: {"w_": 5}, 2: {"w_": 9}}, set())
    swapped = memo._Side([0, 1, 2], prints, set(), set(), {0: {"w_": 1}, 1: {"w_": 9}, 2: {"w_": 5}}, set())
    assert memo._runs([seq, same]) == [(0, 2)]
    assert memo._runs([seq, swapped]) == []


def test_a_middle_layer_read_beyond_the_next_one_ends_the_run():
    prints = {k: "L" for k in range(5)}
    side = memo._Side([0, 1, 2, 3, 4], prints, set(), {2}, {}, set())
    assert memo._runs([side]) == [(3, 4), (0, 2)]


# --- GraphGuard's GPT dumps --------------------------------------------------------------


def _case(name: str):
    spec = yaml.safe_load((ENTANGLE / name / "case.yaml").read_text())
    root = entangle_dumps_root(spec)
    if not root.is_dir() or not (root / spec["seq"]).is_file():
        pytest.skip(f"{root} (GraphGuard's published graphs) is not here")
    return root / spec["seq"], [root / r for r in spec["ranks"]], ENTANGLE / name / spec["spec"]


def _summary(result) -> dict:
    """The JSON report but its times."""
    report = to_json(result)
    del report["seconds"], report["timings"]
    return report


@pytest.mark.parametrize(("case", "layers"), [("gpt_tp2_layer2", 2), ("gpt_tp2_layer4", 4)])
def test_gpt_layers_are_collapsed_with_the_same_result(case, layers):
    seq, ranks, spec = _case(case)
    on = check(seq, ranks, relations=spec)
    off = check(seq, ranks, relations=spec, memoize=False)
    assert on.derivation.memo == f"layers 0..{layers - 1} solved once each ({layers - 1} of {layers} layers reused)"
    assert on.verdict == off.verdict == "verified"
    assert _summary(on) == _summary(off)
    inp = load_inputs(seq, ranks, load_spec(spec))
    collapse = collapse_layers(inp.seq, inp.ranks, {r.seq_value: r.layout for r in inp.relations})
    def values(model):
        return {v for n in model.graph.node for v in n.output} | {i.name for i in model.graph.input}

    kept, kept_rank = values(collapse.seq), [values(m) for m in collapse.ranks]
    assert len(collapse.seq.graph.node) < len(inp.seq.graph.node)

    def on_kept(row, name):  # Piece rows: (seq value, rank, rank value, ...)
        return row[0] in kept and (name != "Piece" or row[2] in kept_rank[row[1]])

    for name in ("Holds", "Piece", "OutputRelation"):
        rows_on = {r for r in on.derivation.derived[name] if on_kept(r, name)}
        rows_off = {r for r in off.derivation.derived[name] if on_kept(r, name)}
        assert rows_on == rows_off, name
    assert len({r for r in on.derivation.derived["Holds"] if r[0] in kept}) > 50


@pytest.mark.parametrize("case", [c for c in CASES if not c.startswith("gpt_tp2_layer")])
@pytest.mark.slow
def test_other_entangle_cases_keep_their_verdict_and_report(case):
    seq, ranks, spec = _case(case)
    on = check(seq, ranks, relations=spec)
    off = check(seq, ranks, relations=spec, memoize=False)
    assert on.verdict == off.verdict
    assert _summary(on) == _summary(off)
    first_on, first_off = on.verdict_.discrepancies[:1], off.verdict_.discrepancies[:1]
    assert [(d.node, d.source) for d in first_on] == [(d.node, d.source) for d in first_off]


def _flagged(result) -> list[tuple]:
    return [
        (d.kind, d.node, d.source, d.origin_node, d.origin_source, d.hint_ids) for d in result.verdict_.discrepancies
    ]


def _swap_primals(text: str, mapping: dict[int, int]) -> str:
    """The dump with ``primals_N`` renamed by ``mapping`` everywhere but in the signature."""
    def rename(m: re.Match) -> str:
        return f"primals_{mapping.get(int(m.group(1)), int(m.group(1)))}"

    return "".join(
        line if line.lstrip().startswith("def forward(") else re.sub(r"\bprimals_(\d+)\b", rename, line)
        for line in text.splitlines(keepends=True)
    )


def _gpt4():
    seq = BUNDLED_GPT / "paral1_layer4" / "fw.g0.r0.py"
    ranks = [BUNDLED_GPT / "paral2_layer4" / f"fw.g0.r{r}.py" for r in range(2)]
    return seq, ranks


def test_a_rank_reading_the_next_layers_weights_is_not_collapsed_away(tmp_path):
    # layer 1 reads primals_14..25 and layer 2 primals_26..37 (same shapes, same relations):
    # rank 0 swaps them. Each layer's fingerprint is unchanged (weights keyed by offset); the
    # base shifts (12, 12, 12 in the seq graph, 24, -12, 24 in rank 0) are not.
    seq, ranks = _gpt4()
    layer1, layer2 = range(14, 26), range(26, 38)
    mapping = {**dict(zip(layer1, layer2)), **dict(zip(layer2, layer1))}
    bad = tmp_path / "fw.g0.r0.py"
    bad.write_text(_swap_primals(ranks[0].read_text(), mapping))
    on = check(seq, [bad, ranks[1]], relations=GPT_SPEC)
    off = check(seq, [bad, ranks[1]], relations=GPT_SPEC, memoize=False)
    assert off.verdict == on.verdict == "discrepancy"
    assert on.derivation.memo == "no run of identical layers"
    assert _summary(on) == _summary(off)


@pytest.mark.parametrize("swap", [(14, 15), (20, 21)])
def test_two_weights_of_one_layer_swapped_on_one_rank_of_two_layers(tmp_path, swap):
    seq, ranks, spec = _case("gpt_tp2_layer2")
    a, b = swap  # layer 1's two layer norms' weight and bias (f32[768] each)
    assert f'primals_{a}: "f32[768]"' in ranks[0].read_text() and f'primals_{b}: "f32[768]"' in ranks[0].read_text()
    bad = tmp_path / "fw.g0.r0.py"
    bad.write_text(_swap_primals(ranks[0].read_text(), {a: b, b: a}))
    on = check(seq, [bad, ranks[1]], relations=spec)
    assert on.verdict == "discrepancy"
    assert not on.derivation.memo.startswith("layers")


def test_a_bug_in_one_layer_keeps_it_out_of_the_collapse(tmp_path):
    # every rank's layer 2 passes its input layer norm the bias as weight and the weight as bias
    seq, ranks = _gpt4()
    bad = []
    for r, path in enumerate(ranks):
        text = path.read_text()
        old = "fused_layer_norm_affine_fwd.default(add_12, primals_26, primals_27"
        assert text.count(old) == 1
        bad.append(tmp_path / f"fw.g0.r{r}.py")
        bad[-1].write_text(text.replace(old, "fused_layer_norm_affine_fwd.default(add_12, primals_27, primals_26"))
    on = check(seq, bad, relations=GPT_SPEC)
    off = check(seq, bad, relations=GPT_SPEC, memoize=False)
    assert on.verdict == off.verdict == "discrepancy"
    assert on.derivation.memo.startswith("layers 0..1 solved once")
    # the same nodes flagged, at the same lines (layer 2 reads layer 0's output in the collapse)
    assert _flagged(on) == _flagged(off)
    assert on.verdict_.discrepancies[0].node == "fused_layer_norm_affine_fwd_4"


@pytest.mark.parametrize("shift", [1, 3, 20])
@pytest.mark.slow
def test_a_rank_cut_at_another_phase_falls_back_to_the_whole_graph(monkeypatch, shift):
    seq, ranks = _gpt4()
    calls = []

    def shifted(sigs, repeat, anchor):  # the seq graph is numbered first, then the rank graph
        calls.append(1)
        numbers = repeats.layer_numbers(sigs, repeat, anchor)
        return numbers if len(calls) == 1 else {i + shift: k for i, k in numbers.items()}

    monkeypatch.setattr(memo, "layer_numbers", shifted)
    result = check(seq, ranks, relations=GPT_SPEC)
    assert len(calls) == 3  # seq, rank 0, rank 1 (the two rank files differ)
    assert result.verdict == "verified"
    assert result.derivation.memo.endswith("whole graph checked")


def test_the_rank_graph_collapsed_in_a_child_gives_the_same_collapse(monkeypatch, fork_possible):
    # the forked path needs one distinct rank graph: rank 0's model for both ranks
    import sys

    seq, ranks = _gpt4()
    inp = load_inputs(seq, ranks, load_spec(GPT_SPEC))
    relations = {r.seq_value: r.layout for r in inp.relations}
    models = [inp.ranks[0], inp.ranks[0]]
    serial = collapse_layers(inp.seq, models, relations, same=[0, 1, 1])
    monkeypatch.setattr(memo, "BESIDE_MIN_NODES", 0)
    received = []
    real = memo._receive
    monkeypatch.setattr(memo, "_receive", lambda fd: received.append(fd) or real(fd))
    beside = collapse_layers(inp.seq, models, relations, same=[0, 1, 1])
    if sys.platform.startswith("linux"):
        assert len(received) == 3, "the rank graph was not collapsed in a child"
    assert [(r.first, r.last, r.boundary) for r in beside.runs] == [(r.first, r.last, r.boundary) for r in serial.runs]
    assert [(r.first, r.last) for r in serial.runs] == [(0, 3)]
    for a, b in zip([beside.seq, *beside.ranks], [serial.seq, *serial.ranks]):
        assert a.graph.SerializeToString() == b.graph.SerializeToString()
