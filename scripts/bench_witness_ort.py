#!/usr/bin/env python
"""Time the numeric witness on onnx.reference and on onnxruntime (analyzer/witness/segments.py).

Cases: the largest bundled witness cases (a 2-layer training step, 6 decoder layers, tp4), and
tensor-parallel MLP blocks (column- then row-parallel, an all-reduce per block, 2 ranks, a
batch of 64 rows) of growing hidden size, written here. Each runtime is forced with
``$SHARDLOG_WITNESS_RUNTIME``; the best of ``--repeat`` runs is printed as a Markdown table
(docs/benchmarks.md, "Numeric witness on onnxruntime").

    python scripts/bench_witness_ort.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer import check  # noqa: E402
from analyzer.witness import segments  # noqa: E402
from analyzer.witness.check import run_witness  # noqa: E402

BUNDLED = ["examples/llama_tp2_adamw_full_state", "tests/data/llama6_tp2", "examples/llama_tp4"]


def mlp(rank: int | None, hidden: int, blocks: int, n: int = 2, rows: int = 64) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    nodes, weights, x = [], [], "x"
    for b in range(blocks):
        w1 = rng.standard_normal((hidden, 4 * hidden)).astype(np.float32) * 0.02
        w2 = rng.standard_normal((4 * hidden, hidden)).astype(np.float32) * 0.02
        if rank is not None:
            w1, w2 = np.split(w1, n, axis=1)[rank], np.split(w2, n, axis=0)[rank]
        weights += [numpy_helper.from_array(w1, f"w1_{b}"), numpy_helper.from_array(w2, f"w2_{b}")]
        nodes += [
            helper.make_node("MatMul", [x, f"w1_{b}"], [f"h{b}"]),
            helper.make_node("Relu", [f"h{b}"], [f"r{b}"]),
            helper.make_node("MatMul", [f"r{b}", f"w2_{b}"], [f"z{b}"]),
            helper.make_node("AllReduce", [f"z{b}"], [f"s{b}"], domain="com.microsoft", group_size=n, reduction="sum")
            if rank is not None
            else helper.make_node("Identity", [f"z{b}"], [f"s{b}"]),
            helper.make_node("Add", [x, f"s{b}"], [f"x{b}"]),
        ]
        x = f"x{b}"
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [rows, hidden])],
        [helper.make_tensor_value_info(x, onnx.TensorProto.FLOAT, [rows, hidden])],
        weights,
    )
    ops = [helper.make_opsetid("", 18)] + ([helper.make_opsetid("com.microsoft", 1)] if rank is not None else [])
    return helper.make_model(graph, opset_imports=ops)


def timed(result, runtime: str, repeat: int) -> tuple[float, float]:
    os.environ["SHARDLOG_WITNESS_RUNTIME"] = runtime
    best, err = float("inf"), 0.0
    for _ in range(repeat):
        t0 = time.perf_counter()
        run = run_witness(result.inputs, result.verdict_, seed=0, seeds=1, intermediates=False)
        errors = {name: out.error for name, out in run.outputs.items()}
        best = min(best, time.perf_counter() - t0)
        err = max(errors.values())
    return best, err


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("| case | weights (elements) | onnx.reference | onnxruntime | speed-up | max error ref / ORT |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        for folder in BUNDLED:
            d = ROOT / folder
            ranks = sorted(d.glob("rank*.onnx"), key=lambda p: int(p.stem[4:]))
            cases.append((folder, d / "seq.onnx", ranks))
        for hidden, blocks in ((256, 4), (1024, 4), (2048, 4)):
            d = Path(tmp) / f"mlp{hidden}"
            d.mkdir()
            onnx.save(mlp(None, hidden, blocks), d / "seq.onnx")
            ranks = []
            for r in range(2):
                onnx.save(mlp(r, hidden, blocks), d / f"rank{r}.onnx")
                ranks.append(d / f"rank{r}.onnx")
            cases.append((f"TP MLP, hidden {hidden}, {blocks} blocks", d / "seq.onnx", ranks))
        for label, seq, ranks in cases:
            result = check(seq, ranks)
            size = sum(int(np.prod(i.dims)) for i in result.inputs.ranks[0].graph.initializer)
            t_ref, e_ref = timed(result, "reference", args.repeat)
            t_ort, e_ort = timed(result, "onnxruntime", args.repeat)
            auto = "ORT" if segments.worth_it(result.inputs.ranks[0]) else "reference"
            print(
                f"| {label} (auto: {auto}) | {size:,} | {t_ref:.2f} s | {t_ort:.2f} s | {t_ref / t_ort:.2f}x "
                f"| {e_ref:.2g} / {e_ort:.2g} |"
            )


if __name__ == "__main__":
    main()
