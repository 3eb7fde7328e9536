"""The graph around each discrepancy as small ONNX files to open in Netron (``--extract DIR``).

For a discrepancy at node n, ``discrepancy<i>_seq.onnx`` holds n and the nodes up to
:data:`DEPTH` steps upstream of it in the sequential graph, and ``discrepancy<i>_rank<r>.onnx``
the same around each rank node paired with n (or, for a rank-side discrepancy, around that
rank's node): the values entering the region are the extracted graph's inputs, n's outputs its
outputs (``onnx.utils.Extractor``, what ``onnx.utils.extract_model`` runs). Weights the region
reads stay initializers. Nodes keep their names, so a node of the report is found by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import onnx

from analyzer.errors import InputError

__all__ = ["DEPTH", "extract_around", "write_extracts"]

#: Producer steps upstream of the discrepancy's node kept in each extracted graph.
DEPTH = 2


def extract_around(model: onnx.ModelProto, names: Sequence[str], depth: int = DEPTH) -> onnx.ModelProto | None:
    """The subgraph of ``model`` ending at the nodes named ``names``, ``depth`` producer steps deep.

    Args:
        model: the graph the nodes belong to (not changed).
        names: node names; those not in the graph are left out.
        depth: producer steps kept upstream (0: the nodes alone).

    Returns:
        A model whose outputs are the named nodes' outputs and whose inputs are the values
        entering the region; None when no name is a node of ``model``.
    """
    g = model.graph
    by_name = {n.name: n for n in g.node if n.name}
    producer = {o: n for n in g.node for o in n.output if o}
    start = [by_name[x] for x in names if x in by_name]
    if not start:
        return None
    region = {id(n): n for n in start}
    frontier = list(start)
    for _ in range(depth):
        frontier = [producer[v] for n in frontier for v in n.input if v in producer and id(producer[v]) not in region]
        region.update((id(n), n) for n in frontier)
    made = {o for n in region.values() for o in n.output}
    weights = {i.name for i in g.initializer}
    entering = (v for n in region.values() for v in n.input if v and v not in made and v not in weights)
    inputs = list(dict.fromkeys(entering))
    outputs = list(dict.fromkeys(o for n in start for o in n.output if o))
    extractor = onnx.utils.Extractor(model)
    for name in (*inputs, *outputs):  # a value without recorded type (after a contrib op): untyped
        extractor.value_infos.setdefault(name, onnx.helper.make_empty_tensor_value_info(name))
    return extractor.extract_model(inputs, outputs)


def write_extracts(result, out_dir: str | Path, discrepancies: Sequence) -> list[Path]:
    """Write the extracted graphs of ``discrepancies`` (numbered from 1, as the report shows
    them) into ``out_dir`` (created).

    Returns:
        The files written.

    Raises:
        InputError: ``out_dir`` holds extracted graphs already, or cannot be written.
    """
    out = Path(out_dir)
    old = sorted(out.glob("discrepancy*.onnx")) if out.is_dir() else []
    if old:
        raise InputError(f"{out}: already holds extracted graphs ({old[0].name}, ...); give a new folder")
    inp = result.inputs
    written: list[Path] = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for i, d in enumerate(discrepancies, 1):
            if not d.node:
                continue
            graphs: list[tuple[str, onnx.ModelProto, list[str]]] = []
            if d.graph == "seq":
                graphs.append(("seq", inp.seq, [d.node]))
                graphs += [(f"rank{r}", inp.ranks[r], names) for r, names in sorted(d.rank_nodes.items())]
            elif d.graph.startswith("r") and d.graph[1:].isdigit():
                graphs.append((f"rank{d.graph[1:]}", inp.ranks[int(d.graph[1:])], [d.node]))
            for label, model, names in graphs:
                sub = extract_around(model, names)
                if sub is not None:
                    path = out / f"discrepancy{i}_{label}.onnx"
                    onnx.save(sub, path)
                    written.append(path)
    except OSError as exc:
        raise InputError(f"cannot write {exc.filename or out}: {exc.strerror or exc}") from None
    return written
