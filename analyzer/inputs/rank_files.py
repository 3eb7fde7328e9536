"""Rank files given wrong: a missing, extra, duplicated or misordered file, said in one line.

The rank order is the order of the files on the command line (a shell glob ``rank*.onnx``
sorts ``rank10`` before ``rank2``). A wrong list otherwise shows up as a dozen discrepancies
(every sharded weight refuted, nothing pairs), so it is diagnosed before the check, from
what the files themselves say:

- metadata: the exporters (``scripts/export_hf_tp.py``) write ``shardlog.rank`` (-1 for the
  sequential export), ``shardlog.world_size`` and, for pipeline stages, ``shardlog.stage`` into
  each file's ``metadata_props``; :func:`check_metadata`.
- shapes: without metadata, a world size the weights' shapes say (an axis divided by W on
  every rank) that no layout of the given rank count fits; :func:`check_world_size`.
- rank literals: the constants the graphs hold that differ per rank only by the rank index
  (a vocab-range start ``r*k`` and end ``(r+1)*k``, a slice offset, a position range
  ``r*k + arange(k)``, an expert id, a folded ``partition-id``): which rank each file was
  exported for, with no metadata and no stored weight; :func:`rank_literals`,
  :func:`check_order_by_literals`.
- values: where the sequential graph and the ranks store the weights, which chunk of each
  sharded weight each file holds; :func:`check_order_by_values`.

Each raises :class:`~analyzer.errors.InputError`; none runs the check itself.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import onnx

from analyzer.errors import InputError

__all__ = [
    "check_metadata",
    "check_order_by_literals",
    "check_order_by_values",
    "check_stages",
    "check_world_size",
    "chunk_maps",
    "rank_literals",
]

_LISTED = 8  # rank files named in full in a message; more are elided
_LITERAL_SIZE = 64  # constants larger than this are data, not rank literals
_COUNTER = re.compile(r"_\d+$")  # the exporter's node counter, which differs between ranks


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _files(count: int) -> str:
    return "1 rank file was" if count == 1 else f"{count} rank files were"


def check_stages(stages: Sequence[Sequence[str]], metas: Sequence[Sequence[Mapping[str, str]]]) -> None:
    """Refuse pipeline stage files whose metadata ``shardlog.stage`` is another stage than
    their position gives them (file f is stage ``f // (F/P)``, :mod:`analyzer.importers.pipeline`).

    Raises:
        InputError: naming the file, its stage and the stage it was given as.
    """
    for s, (paths, ms) in enumerate(zip(stages, metas)):
        for path, meta in zip(paths, ms):
            stage = _int(meta.get("shardlog.stage"))
            if stage is not None and stage != s:
                raise InputError(
                    f"{path}: is pipeline stage {stage} (metadata shardlog.stage), given as stage {s}: "
                    "give the files stage by stage, tensor-parallel rank fastest"
                )


def _natural_key(path: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path)]


def _in_order(paths: Sequence[str], order: Sequence[int]) -> str:
    """``give them in rank order: a b c``, and why a glob may have got it wrong."""
    ordered = [paths[j] for j in order]
    shown = " ".join(ordered[:_LISTED]) + (" ..." if len(ordered) > _LISTED else "")
    why = ""
    if list(paths) == sorted(paths) and ordered == sorted(paths, key=_natural_key):
        why = " (a shell glob sorts rank10 before rank2)"
    return f"give them in rank order: {shown}{why}"


def check_metadata(
    seq_path: str, seq_meta: Mapping[str, str], rank_paths: Sequence[str], rank_metas: Sequence[Mapping[str, str]]
) -> None:
    """Refuse rank files whose ``shardlog.*`` metadata says they are not ranks 0..F-1 in order.

    Args:
        seq_path: the sequential file; ``seq_meta`` its metadata.
        rank_paths: the rank files in the order given; ``rank_metas`` their metadata.

    Raises:
        InputError: the sequential file is a rank's export; a rank file is the sequential
            export or a pipeline stage (without ``--pp``); the files come from different world
            sizes; two files are the same rank; a rank of the world is missing or extra; the
            files are out of order.
    """
    seq_rank = _int(seq_meta.get("shardlog.rank"))
    if seq_rank is not None and seq_rank >= 0:
        raise InputError(
            f"{seq_path}: is the file of rank {seq_rank} (metadata shardlog.rank), given as the sequential model"
        )
    given: list[int] = []
    for j, (path, meta) in enumerate(zip(rank_paths, rank_metas)):
        rank = _int(meta.get("shardlog.rank"))
        if rank is None:
            return  # no metadata (or not on every file): nothing to go by
        if rank < 0:
            stage = meta.get("shardlog.stage")
            if stage is not None:
                raise InputError(f"{path}: is pipeline stage {stage}, given as rank {j}: give --pp P for stage files")
            raise InputError(f"{path}: is a sequential export (metadata shardlog.rank = -1), given as rank {j}")
        given.append(rank)
    sizes = {p: _int(m.get("shardlog.world_size")) for p, m in zip(rank_paths, rank_metas)}
    if len(set(sizes.values())) > 1:
        shown = ", ".join(f"{p}: {w}" for p, w in list(sizes.items())[:_LISTED])
        raise InputError(
            f"the rank files come from runs of different world sizes (metadata shardlog.world_size: {shown})"
        )
    world = next(iter(sizes.values()))
    seen: dict[int, int] = {}
    for j, (path, rank) in enumerate(zip(rank_paths, given)):
        if rank in seen:
            first = rank_paths[seen[rank]]
            if Path(first).resolve() == Path(path).resolve():
                raise InputError(f"{path} is given twice, as rank {seen[rank]} and rank {j} (it is rank {rank})")
            raise InputError(f"{first} and {path} are both the file of rank {rank} (metadata shardlog.rank)")
        seen[rank] = j
    f = len(rank_paths)
    if world is not None and set(given) != set(range(world)):
        missing = sorted(set(range(world)) - set(given))
        extra = sorted(r for r in given if r >= world)
        if extra:
            raise InputError(
                f"{rank_paths[seen[extra[0]]]}: is the file of rank {extra[0]}, but the files say the world size is "
                f"{world} (metadata shardlog.world_size)"
            )
        which = ", ".join(map(str, missing[:_LISTED])) + (" ..." if len(missing) > _LISTED else "")
        files = "the file of rank" if len(missing) == 1 else "the files of ranks"
        raise InputError(
            f"{files} {which} {'is' if len(missing) == 1 else 'are'} missing: "
            f"{_files(f)} given for a world size of {world} (metadata shardlog.world_size)"
        )
    if given != list(range(f)):
        if sorted(given) != list(range(f)):
            raise InputError(f"the rank files are ranks {sorted(given)} (metadata shardlog.rank), not 0..{f - 1}")
        j = next(j for j, r in enumerate(given) if r != j)
        raise InputError(
            f"the rank files are out of order: {rank_paths[j]} is the file of rank {given[j]} (metadata "
            f"shardlog.rank), given as rank {j}; {_in_order(rank_paths, sorted(range(f), key=given.__getitem__))}"
        )


def check_world_size(
    seq_shapes: Mapping[str, tuple],
    rank_shapes: Sequence[Mapping[str, tuple]],
    has_shard: bool,
    ignore: Collection[str] = (),
) -> None:
    """Refuse a rank count the weights' shapes contradict: no input or weight fits ``Shard``
    over the F given ranks (``has_shard`` false), and the ones cut along one axis into equal
    chunks say a world size W != F (the largest chunk count: kv heads replicated over ranks
    are cut into fewer).

    Args:
        seq_shapes: shapes of the sequential graph's inputs and initializers.
        rank_shapes: the same, per rank.
        has_shard: whether any input relation was inferred as a ``Shard`` over the F ranks.
        ignore: values the spec gives a relation (micro-batches cut inputs finer than ranks).

    Raises:
        InputError: naming W, F and one weight that shows W.
    """
    f = len(rank_shapes)
    if has_shard or f == 0:
        return
    best: tuple[int, str, tuple, tuple] | None = None
    for name, shape in seq_shapes.items():
        if name in ignore:
            continue
        got = [s.get(name) for s in rank_shapes]
        if any(g is None or g != got[0] or len(g) != len(shape) for g in got):
            continue
        diff = [i for i, (a, b) in enumerate(zip(shape, got[0])) if a != b]
        if len(diff) != 1:
            continue
        a, b = shape[diff[0]], got[0][diff[0]]
        if not (isinstance(a, int) and isinstance(b, int) and b > 0 and a % b == 0 and a // b >= 2):
            continue
        if best is None or a // b > best[0]:
            best = (a // b, name, shape, got[0])
    if best is None or best[0] == f:
        return
    world, name, shape, got = best
    if f < world:
        what = "a rank file is missing" if world - f == 1 else f"{world - f} rank files are missing"
    else:
        what = "an extra rank file was given" if f - world == 1 else f"{f - world} extra rank files were given"
    raise InputError(
        f"{_files(f)} given, but the weights' shapes say the world size is {world} "
        f"({name}: {list(shape)} on the sequential graph, {list(got)} on every rank): {what}"
    )


def check_order_by_values(
    rank_paths: Sequence[str],
    chunk_maps: Mapping[str, Sequence[int]],
    same: Sequence[int] | None,
) -> None:
    """Refuse files whose stored weights say they are another rank's.

    Args:
        rank_paths: the rank files in the order given.
        chunk_maps: for each sharded weight (plain ``Shard`` over the F ranks) whose data the
            sequential graph and every rank store, the chunk each file holds (-1: none).
        same: per rank the index of the first rank stored byte for byte like it (None: unknown).

    Raises:
        InputError: when two or more such weights all say the same thing: the files hold a
            permutation of the chunks (out of order), or a file holds the chunks of a file
            given earlier and is stored like it (given twice).
    """
    maps = {tuple(m) for m in chunk_maps.values()}
    if len(chunk_maps) < 2 or len(maps) != 1:
        return
    held = next(iter(maps))
    f = len(rank_paths)
    if -1 in held or list(held) == list(range(f)):
        return
    if sorted(held) == list(range(f)):
        j = next(j for j, c in enumerate(held) if c != j)
        raise InputError(
            f"the rank files are out of order: {rank_paths[j]} holds rank {held[j]}'s chunk of every sharded weight "
            f"({len(chunk_maps)} checked by value), given as rank {j}; "
            f"{_in_order(rank_paths, sorted(range(f), key=held.__getitem__))}"
        )
    for j, c in enumerate(held):
        if c != j and held[c] == c and _same_file(rank_paths, same, c, j):
            raise InputError(
                f"{rank_paths[j]} is given as rank {c} and rank {j}: it holds rank {c}'s chunk of every sharded "
                f"weight ({len(chunk_maps)} checked by value), so the file of rank {j} is missing"
            )


def _same_file(paths: Sequence[str], same: Sequence[int] | None, a: int, b: int) -> bool:
    if Path(paths[a]).resolve() == Path(paths[b]).resolve():
        return True
    return same is not None and len(same) == len(paths) and same[b] == same[a]


def chunk_maps(
    seq: onnx.ModelProto, ranks: Sequence[onnx.ModelProto], relations: Sequence, arrays, per_model
) -> dict[str, list[int]]:
    """For each inferred plain ``Shard`` (one chunk per rank) of a weight stored inline in the
    sequential graph and every rank: the index of the chunk each rank's array equals (-1: none).

    Args:
        relations: the inferred input relations.
        arrays: ``arrays(model, names) -> {name: ndarray}`` of inline initializers.
        per_model: ``per_model(fn, ranks) -> [fn(rank) ...]`` (reads a shared graph once).
    """
    import numpy as np

    n = len(ranks)
    plain = {
        r.seq_value: r.layout.axis
        for r in relations
        if r.source == "inferred"
        and r.layout.kind == "Shard"
        and r.layout.param == ""
        and len(set(r.rank_values)) == 1
        and r.rank_values[0] == r.seq_value
    }
    full = arrays(seq, set(plain))
    mine = per_model(lambda m: arrays(m, set(full)), ranks)
    out: dict[str, list[int]] = {}
    for name, axis in plain.items():
        if name not in full or any(name not in m for m in mine):
            continue
        chunks = np.split(full[name], n, axis=axis)
        out[name] = [
            next(
                (
                    c
                    for c, chunk in enumerate(chunks)
                    if chunk.shape == m[name].shape and np.array_equal(chunk, m[name])
                ),
                -1,
            )
            for m in mine
        ]
    return out


def _literals_of(model: onnx.ModelProto) -> dict[tuple[str, int, int], tuple[tuple, tuple, str]]:
    """The small integer-valued constants each named node reads: ``(node name, input index)``
    -> ``(shape, flat values, node name)``. Constants are inline initializers and ``Constant`` outputs
    (``value``, ``value_int``, ``value_ints``); float constants count when every element is
    a whole number (a position range cast to float). A node is keyed by its name without the
    exporter's counter (``node_Equal_324`` -> ``node_Equal``) and its place among the nodes so
    named: ranks whose graphs differ by a node elsewhere (rank 0 folds away ``x - 0``) still
    pair. Nodes without a name, or whose name is not unique, are left out."""
    import numpy as np
    from onnx import numpy_helper

    consts: dict[str, np.ndarray] = {}
    for init in model.graph.initializer:
        if init.data_location != onnx.TensorProto.EXTERNAL and _small(init.dims):
            try:
                consts[init.name] = numpy_helper.to_array(init)
            except (ValueError, TypeError):
                continue
    names: dict[str, int] = {}
    for node in model.graph.node:
        names[node.name] = names.get(node.name, 0) + 1
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and len(node.attribute) == 1:
            attr = node.attribute[0]  # the constant's own value, not an op's semantics
            if attr.name == "value" and _small(attr.t.dims):
                try:
                    consts[node.output[0]] = numpy_helper.to_array(attr.t)
                except (ValueError, TypeError):
                    continue
            elif attr.name in ("value_int", "value_ints"):
                consts[node.output[0]] = np.asarray(onnx.helper.get_attribute_value(attr), dtype=np.int64)
    lits: dict[str, tuple[tuple, tuple]] = {}
    for name, a in consts.items():  # each constant once, however many nodes read it
        if a.dtype.kind not in "iuf" or a.size == 0:
            continue
        if a.dtype.kind == "f":
            a = a.astype(np.float64)  # float16's range ends at 65504: 2**53 would overflow in its type
        if a.dtype.kind == "f" and not (np.all(np.isfinite(a)) and np.all(np.abs(a) <= 2**53)):
            continue
        if a.dtype.kind == "f" and not np.all(a == np.round(a)):
            continue
        lits[name] = (tuple(a.shape), tuple(int(v) for v in a.reshape(-1)))
    out = {}
    seen: dict[str, int] = {}
    for node in model.graph.node:
        # a name that is not UTF-8 text reads as bytes: the file's proofs report it, not this
        if not node.name or not isinstance(node.name, str) or names[node.name] != 1:
            continue
        stem = _COUNTER.sub("", node.name)
        nth = seen[stem] = seen.get(stem, -1) + 1
        for i, name in enumerate(node.input):
            lit = lits.get(name)
            if lit is not None:
                out[(stem, nth, i)] = (*lit, node.name)
    return out


def _small(dims) -> bool:
    size = 1
    for d in dims:
        size *= d
    return 0 < size <= _LITERAL_SIZE


def rank_literals(ranks: Sequence[onnx.ModelProto], per_model=None) -> dict[tuple[str, int, int], list[int]]:
    """The rank literals of the rank graphs: for each constant read at the same node and input
    on every rank whose value on file j is ``base + o_j`` (one whole-number shift for every
    element), with the shifts ``o_j / k`` (``k`` their greatest common divisor, ``o`` counted
    from the smallest) distinct: the rank index each file's constant says, per site.

    Args:
        ranks: the rank graphs in the order given (F of them, F >= 2).
        per_model: ``per_model(fn, ranks) -> [fn(rank) ...]`` (reads a shared graph once);
            None: each graph is read.

    Returns:
        ``{(node name stem, its place, input index): [rank of file 0, ..., rank of file F-1]}``; a site whose
        constant is the same on every file, differs by more than a shift, or groups files
        (``r // 2``: replicated kv heads) is left out.
    """
    import math

    if len(ranks) < 2:
        return {}
    per = per_model(_literals_of, ranks) if per_model is not None else [_literals_of(m) for m in ranks]
    out: dict[tuple[str, int], list[int]] = {}
    for site, (shape, first, _) in per[0].items():
        got = [p.get(site) for p in per]
        if any(g is None or g[0] != shape for g in got):
            continue
        shifts = []
        for _, values, _ in got:
            d = {v - f for v, f in zip(values, first)}
            if len(d) != 1:
                break
            shifts.append(d.pop())
        else:
            low = min(shifts)
            o = [s - low for s in shifts]
            k = math.gcd(*o)
            if k == 0:
                continue
            idx = [x // k for x in o]
            if len(set(idx)) == len(idx):
                out[site] = idx
    return out


def check_order_by_literals(
    rank_paths: Sequence[str], literals: Mapping[tuple[str, int, int], Sequence[int]], ranks: Sequence[onnx.ModelProto]
) -> None:
    """Refuse files whose rank literals (:func:`rank_literals`) say they are other ranks than
    their position: out of order, or a rank inside the range missing.

    Rank literals are taken to grow with the rank (``r*k`` with ``k > 0``: slice and vocab
    starts, position ranges, expert ids); only two or more sites that all say the same thing
    count (one odd constant cannot tell a misordered file from a bug in one rank's code).

    Args:
        rank_paths: the rank files in the order given.
        literals: :func:`rank_literals` of their graphs.
        ranks: the graphs, to show one literal in the message.

    Raises:
        InputError: the files are a permutation of ranks 0..F-1 in another order, naming the
            first file given as another rank and the order to give them in; or they are
            distinct ranks with a gap (ranks 0, 1, 3: the file of rank 2 is missing).
    """
    said = {tuple(v) for v in literals.values()}
    f = len(rank_paths)
    if len(literals) < 2 or len(said) != 1:
        return
    held = list(next(iter(said)))
    if held == list(range(f)):
        return
    site = min(literals)
    shown, node = _literal_shown(ranks, site, held)
    evidence = f"({len(literals)} rank-dependent constants agree; e.g. input {site[2]} of {node}: {shown})"
    if sorted(held) == list(range(f)):
        j = next(j for j, r in enumerate(held) if r != j)
        raise InputError(
            f"the rank files are out of order: {rank_paths[j]} holds rank {held[j]}'s rank literals, given as rank "
            f"{j} {evidence}; {_in_order(rank_paths, sorted(range(f), key=held.__getitem__))}"
        )
    if held == sorted(held):
        missing = sorted(set(range(max(held) + 1)) - set(held))
        which = ", ".join(map(str, missing[:_LISTED])) + (" ..." if len(missing) > _LISTED else "")
        files = "the file of rank" if len(missing) == 1 else "the files of ranks"
        raise InputError(
            f"{files} {which} {'is' if len(missing) == 1 else 'are'} missing: the rank literals of the "
            f"{f} files given say ranks {', '.join(map(str, held))} {evidence}"
        )


def _literal_shown(ranks: Sequence[onnx.ModelProto], site: tuple, held: Sequence[int]) -> tuple[str, str]:
    """``0 on rank 0, 32 on rank 1`` for one site, files taken in the rank order they say,
    and the node's name (on the last of them shown)."""
    order = sorted(range(len(held)), key=held.__getitem__)[:4]
    parts = []
    for j in order:
        _, values, node = _literals_of(ranks[j])[site]
        v = values[0] if len(values) == 1 else f"[{values[0]}, ...]"
        parts.append(f"{v} on rank {held[j]}")
    return ", ".join(parts) + (" ..." if len(held) > 4 else ""), node
