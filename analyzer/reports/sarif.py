"""SARIF 2.1.0 log of a check, for CI code scanning (``--sarif PATH``).

One result per discrepancy of the verdict, earliest first, at ``level: error``, then one per
internal inconsistency the numeric witness found (``ruleId: internal-inconsistency``, located at
the sequential ONNX file, the refuted value as logical location); a witness that could not run
is a ``toolExecutionNotifications`` warning of the invocation, and a proof that rests on input
relations not checked on values a note there (``properties.conditional``, ``assumedRelations``);
an unproven step (no rule explains it, the numbers agree: :mod:`analyzer.verdict.triage`) at
``level: warning``, ``kind: review``, rule ``unproven-step``, the pattern in the message:

- ``ruleId`` is the first hint id of the discrepancy (``rules/diagnose/hints.yaml``, every
  catalog entry is a rule of ``tool.driver.rules``), or one of :data:`EXTRA_RULES` when no
  hint fired (a frontier without a hint, an output not rebuilt on the rank side, collectives
  that do not pair across ranks).
- ``locations[0]`` is the source line the report points at (the innermost frame of the
  user's code, :mod:`analyzer.verdict.sources`). A file in the ``--source-root`` folder is
  relative to it, with ``uriBaseId: SRCROOT`` (``originalUriBaseIds`` gives its absolute URI),
  so code scanning places it in the repository. Another relative path
  (``transformers/models/llama/modeling_llama.py``) stays relative, with
  ``uriBaseId: PYTHONPATH`` (it is relative to a directory on the exporting interpreter's
  import path); an absolute path becomes a ``file:`` URI. When no source is known the
  location is the ONNX file of the graph (as given on the command line, a relative path is
  relative to the working directory of the check). ``logicalLocations`` name the module scope
  (``kind: module``) and the ONNX node.
- ``relatedLocations`` (id 1) point at the node that made the pending partial sum reaching
  the frontier, where the all-reduce belongs; the message links to it.

Names and paths come from the model and are untrusted: control characters are shown as
``\\xNN`` escapes, unpaired surrogates are replaced, long strings are cut, ``[``/``]`` are
escaped in message text (SARIF embedded links) and paths are percent-encoded into valid URI
references. A verified check gives a valid log with an empty ``results`` array.
"""

from __future__ import annotations

import hashlib
import json
import ntpath
import os
import posixpath
import re
from pathlib import Path, PurePosixPath, PureWindowsPath
from urllib.parse import quote

import yaml

from analyzer.model import CheckResult
from analyzer.solve.rulebook import hints_catalog
from analyzer.verdict.build import Discrepancy

__all__ = ["to_sarif", "sarif_text", "write_sarif", "SARIF_VERSION", "SARIF_SCHEMA_URI", "EXTRA_RULES", "MAX_TEXT"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#: Longest model-derived string kept in the log (characters); longer ones are cut with "...".
MAX_TEXT = 2000
#: Rules for discrepancies no hint explains: id -> description.
EXTRA_RULES: dict[str, str] = {
    "relation-break": "the chain of relations breaks at this node: its inputs are related to the ranks' values, "
    "its output is not (no transfer rule or no rank node fits)",
    "output-not-rebuilt": "a sequential output is not rebuilt from the ranks' outputs: the break is on the rank side "
    "(a collective or a rearrangement after it)",
    "collective-mismatch": "the collectives of the ranks do not pair up by issue order (different op, group, axis or "
    "count on some rank)",
    "internal-inconsistency": "the numeric witness refutes a relation the rules derived: a transfer rule, an oracle "
    "or an input relation is wrong, so the check's result cannot be trusted (--numeric)",
    "unproven-step": "no rule explains this step, but the numeric witness shows the ranks compute its value: a rule "
    "is missing (the check is unproven, not verified); write one for the pattern in the message",
}
_KIND_RULE = {
    "frontier": "relation-break",
    "output": "output-not-rebuilt",
    "collective": "collective-mismatch",
    "unproven": "unproven-step",
    "unproven-output": "unproven-step",
}
_PYTHONPATH = "PYTHONPATH"
_SRCROOT = "SRCROOT"  # --source-root: the user's repository (GitHub code scanning's checkout root)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # C0/C1 controls, bidi overrides
#: Longest model-derived name (node, scope, op) quoted inside a message.
_NAME = 200
_WINDOWS_ABS = re.compile(r"^[A-Za-z]:[\\/]")


def _clean(text: object, limit: int = MAX_TEXT) -> str:
    """A model-derived string made safe for any JSON/SARIF consumer."""
    s = str(text).encode("utf-8", "replace").decode("utf-8")  # unpaired surrogates -> "?"
    s = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", s)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _msg(text: object, limit: int = MAX_TEXT) -> str:
    """Clean text for a SARIF message: brackets escaped so they never form embedded links."""
    s = _clean(text, limit).replace("[", "\\[").replace("]", "\\]")
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _split_source(source: str) -> tuple[str, int]:
    """``"file:line"`` -> (file, line); line is 0 when missing or unknown (``file:0``)."""
    file, sep, line = source.rpartition(":")
    if sep and line.isascii() and line.isdigit():
        return file, int(line)
    return source, 0


def _artifact(path: str, base_id: str | None = _PYTHONPATH) -> dict | None:
    """An ``artifactLocation`` for a file path (percent-encoded, relative paths kept relative
    to ``base_id``, or to the working directory of the check when it is None), normalized
    (``a/./b/../c`` is ``a/c``). A relative path that climbs above its base (``../../etc/passwd``
    from a model's stack trace) names no artifact under it: None, or, relative to the working
    directory, the absolute path it names."""
    raw = path.encode("utf-8", "replace").decode("utf-8")
    if _WINDOWS_ABS.match(raw):
        return {"uri": _quote_uri(PureWindowsPath(ntpath.normpath(raw)).as_uri())}
    if raw.startswith("/"):
        return {"uri": _quote_uri(PurePosixPath(posixpath.normpath(raw)).as_uri())}
    rel = posixpath.normpath(raw.replace("\\", "/"))
    if rel == ".." or rel.startswith("../") or rel == ".":
        if base_id is not None or rel == ".":
            return None
        return {"uri": _quote_uri(PurePosixPath(os.path.abspath(rel)).as_uri())}
    uri = quote(rel, safe="/")
    return {"uri": uri, "uriBaseId": base_id} if base_id else {"uri": uri}


def _quote_uri(uri: str) -> str:
    # as_uri() percent-encodes the path already; re-quote keeping what is valid in a URI.
    return quote(uri, safe="/:%@!$&'()*+,;=~-._")


def _physical(source: str, code: str = "", root=None) -> dict | None:
    if not source:
        return None
    file, line = _split_source(source)
    if not file:
        return None
    inside = root.in_root(file) if root is not None else None  # FrameChoice with a source root
    artifact = _artifact(inside, _SRCROOT) if inside else _artifact(file)
    if artifact is None:
        return None
    loc: dict = {"artifactLocation": artifact}
    if line:
        region: dict = {"startLine": line}
        if code:
            region["snippet"] = {"text": _clean(code)}
        loc["region"] = region
    return loc


def _hint_catalog() -> dict[str, str]:
    data = yaml.safe_load(hints_catalog().read_text(encoding="utf-8")) or {}
    return {str(k): str(v) for k, v in data.items()}


def _descriptor(rule_id: str, text: str) -> dict:
    short = text.split(":", 1)[0].strip() or text
    level = "warning" if rule_id == "unproven-step" else "error"
    return {
        "id": rule_id,
        "name": "".join(p.capitalize() for p in re.split(r"[^A-Za-z0-9]+", rule_id) if p) or "Rule",
        "shortDescription": {"text": short[:1].upper() + short[1:]},
        "fullDescription": {"text": text},
        "help": {"text": text},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": ["correctness", "tensor-parallel"], "precision": "high", "problem.severity": level},
    }


def _rule_id(d: Discrepancy) -> str:
    if d.kind.startswith("unproven"):
        return _KIND_RULE[d.kind]
    if d.hint_ids:
        return _clean(d.hint_ids[0], 200)
    return _KIND_RULE.get(d.kind, "relation-break")


def _model_file(result: CheckResult, graph: str) -> str:
    m = re.fullmatch(r"r(\d+)", graph or "")
    if m and int(m.group(1)) < len(result.inputs.rank_paths):
        return str(result.inputs.rank_paths[int(m.group(1))])
    return str(result.inputs.seq_path)


def _message(d: Discrepancy) -> str:
    if d.kind.startswith("unproven"):
        head = f"unproven step {_msg(d.node, _NAME)} ({_msg(d.op_type, _NAME) or '?'}) in {_msg(d.scope, _NAME) or '?'}"
        body = f"{head}: {_msg(d.message)}" + "".join(f"; {_msg(line)}" for line in d.pattern)
        return body if len(body) <= MAX_TEXT else body[: MAX_TEXT - 3] + "..."
    if d.kind == "collective":
        return _msg(d.message or "collectives do not pair across ranks")
    where = "frontier node" if d.graph == "seq" else f"rank graph {_msg(d.graph, _NAME)} node"
    head = f"{where} {_msg(d.node, _NAME)} ({_msg(d.op_type, _NAME) or '?'}) in {_msg(d.scope, _NAME) or '?'}"
    parts = [head]
    if d.message:
        parts.append(_msg(d.message))
    parts.extend(_msg(h) for h in d.hints)
    if not d.hints and not d.message:
        parts.append(EXTRA_RULES[_KIND_RULE.get(d.kind, "relation-break")])
    body = ": ".join(parts[:2]) + "".join(f"; {p}" for p in parts[2:])
    link = ""
    if d.origin_node:
        origin = f"{_msg(d.origin_node, _NAME)} in {_msg(d.origin_scope, _NAME) or '?'}"
        link = f". The partial sum comes from [{origin}](1): reduce it there"
    room = MAX_TEXT - len(link)
    return (body if len(body) <= room else body[: room - 3] + "...") + link


def _logical(d: Discrepancy) -> list[dict]:
    out = []
    if d.scope:
        out.append({"fullyQualifiedName": _clean(d.scope), "kind": "module"})
    if d.node:
        out.append(
            {
                "name": _clean(d.node),
                "fullyQualifiedName": _clean(f"{d.graph or 'ranks'}/{d.node}"),
                "kind": "object",
                "properties": {"opType": _clean(d.op_type), "graph": _clean(d.graph)},
            }
        )
    return out


def _fingerprint(d: Discrepancy, rule_id: str) -> str:
    key = "\x1f".join(
        [rule_id, d.kind, d.graph, d.scope, d.node, d.op_type, d.message if d.kind == "collective" else ""]
    )
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()


def _result(d: Discrepancy, result: CheckResult, rule_index: dict[str, int]) -> dict:
    rule_id = _rule_id(d)
    location: dict = {}
    root = result.sources if result.sources is not None and result.sources.root else None
    physical = _physical(d.source, d.code, root)
    if physical is None:
        model_file = _artifact(_model_file(result, d.graph), None)
        physical = {"artifactLocation": model_file} if model_file else None
    if physical is not None:
        location["physicalLocation"] = physical
    logical = _logical(d)
    if logical:
        location["logicalLocations"] = logical
    res: dict = {
        "ruleId": rule_id,
        "ruleIndex": rule_index[rule_id],
        "level": "warning" if d.kind.startswith("unproven") else "error",
        "kind": "review" if d.kind.startswith("unproven") else "fail",
        "message": {"text": _message(d)},
        "locations": [location],
        "partialFingerprints": {"shardlogDiscrepancy/v1": _fingerprint(d, rule_id)},
        "properties": {
            "discrepancyKind": _clean(d.kind),
            "graph": _clean(d.graph),
            "hintIds": [_clean(h, 200) for h in d.hint_ids],
            "outputs": [_clean(o) for o in d.outputs],
            "rankNodes": {str(r): [_clean(n) for n in names] for r, names in sorted(d.rank_nodes.items())},
        },
    }
    if d.origin_node:
        related: dict = {"id": 1, "message": {"text": f"the partial sum reaching {_msg(d.node, _NAME)} is made here"}}
        origin_physical = _physical(d.origin_source, "", root)
        if origin_physical:
            related["physicalLocation"] = origin_physical
        related["logicalLocations"] = [
            *([{"fullyQualifiedName": _clean(d.origin_scope), "kind": "module"}] if d.origin_scope else []),
            {
                "name": _clean(d.origin_node),
                "fullyQualifiedName": _clean(f"{d.graph}/{d.origin_node}"),
                "kind": "object",
            },
        ]
        res["relatedLocations"] = [related]
    return res


def _contradictions(result: CheckResult) -> list:
    return result.witness.contradictions if result.witness is not None else []


def _contradiction_result(c, result: CheckResult, rule_index: dict[str, int]) -> dict:
    from analyzer.reports.text import contradiction_text, inconsistency_hint

    rule_id = "internal-inconsistency"
    text = f"{contradiction_text(c, result.world_size)}; {inconsistency_hint(c)}"
    key = "\x1f".join([rule_id, c.kind, c.value, c.relation])
    out = {
        "ruleId": rule_id,
        "ruleIndex": rule_index[rule_id],
        "level": "error",
        "kind": "fail",
        "message": {"text": _msg(text)},
        "locations": [
            {
                "physicalLocation": {"artifactLocation": _artifact(str(result.inputs.seq_path), None)},
                "logicalLocations": [
                    {"name": _clean(c.value), "fullyQualifiedName": _clean(f"seq/{c.value}"), "kind": "variable"}
                ],
            }
        ],
        "partialFingerprints": {"shardlogDiscrepancy/v1": hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()},
        "properties": {
            "contradictionKind": _clean(c.kind),
            "relation": _clean(c.relation),
            "rankValues": [_clean(x) for x in c.rank_values],
            "error": c.error if c.error != float("inf") else "inf",
            "tolerance": c.tolerance,
            "seed": c.seed,
            "inputRelations": [_clean(x) for x in c.inputs],
            "userRules": [_clean(x) for x in c.rules],
        },
    }
    rules = [loc for loc in (_rule_location(x) for x in c.rules) if loc is not None]
    if rules:  # the user rule is where the fix goes: the primary location, the graph's value beside it
        value = out["locations"][0]
        out["locations"] = [{"physicalLocation": rules[0], "logicalLocations": value["logicalLocations"]}]
        out["relatedLocations"] = [
            *({"id": i, "physicalLocation": loc, "message": {"text": "user rule"}} for i, loc in enumerate(rules)),
            {"id": len(rules), "physicalLocation": value["physicalLocation"], "message": {"text": "the checked graph"}},
        ]
    return out


def _rule_location(source: str) -> dict | None:
    """A ``physicalLocation`` for a user rule's ``file:line`` (relative to the working directory)."""
    file, line = _split_source(source)
    artifact = _artifact(file, None) if file else None
    if artifact is None:
        return None
    return {"artifactLocation": artifact, "region": {"startLine": line}} if line else {"artifactLocation": artifact}


def _base_ids(result: CheckResult) -> dict:
    """``PYTHONPATH`` (paths as the exporter recorded them) and, with ``--source-root``,
    ``SRCROOT``: the repository the check was pointed at, as an absolute ``file:`` URI."""
    ids: dict = {
        _PYTHONPATH: {"description": {"text": "a directory on the import path (sys.path) of the exporting interpreter"}}
    }
    root = result.sources.root if result.sources is not None else None
    if root:
        uri = _quote_uri(Path(root).resolve().as_uri().rstrip("/") + "/")
        ids[_SRCROOT] = {"uri": uri, "description": {"text": "the source root given with --source-root"}}
    return ids


def _tool_version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python < 3.8
        return "0"
    try:
        return version("shardlog")
    except PackageNotFoundError:
        return "0+unknown"


def to_sarif(result: CheckResult) -> dict:
    """The SARIF 2.1.0 log of a check as a dict (one run, one result per discrepancy).

    Args:
        result: the check result.

    Returns:
        A dict that ``json.dumps`` turns into a log valid against the SARIF 2.1.0 schema.
    """
    v = result.verdict_
    rules = [_descriptor(k, text) for k, text in _hint_catalog().items()]
    rules += [_descriptor(k, text) for k, text in EXTRA_RULES.items() if k not in {r["id"] for r in rules}]
    rule_index = {r["id"]: i for i, r in enumerate(rules)}
    for d in v.discrepancies:  # hint ids of user rule folders, not in the bundled catalog
        rid = _rule_id(d)
        if rid not in rule_index:
            rule_index[rid] = len(rules)
            rules.append(_descriptor(rid, _clean(d.hints[0]) if d.hints else rid))
    results = [_result(d, result, rule_index) for d in [*v.discrepancies, *v.unproven]]
    results += [_contradiction_result(c, result, rule_index) for c in _contradictions(result)]
    invocation: dict = {
        "executionSuccessful": True,
        "properties": {
            "seq": _clean(result.inputs.seq_path),
            "ranks": [_clean(p) for p in result.inputs.rank_paths],
        },
    }
    notes = []
    skipped = result.witness.skipped if result.witness is not None else ""
    if skipped:
        notes.append({"level": "warning", "message": {"text": _msg(f"numeric witness could not run: {skipped}")}})
    if v.conditional:
        from analyzer.reports.text import given_text

        text = f"verified given {len(v.assumed)} input relations not checked on values: {given_text(v.assumed)}"
        notes.append({"level": "note", "message": {"text": _msg(text)}})
    if notes:
        invocation["toolExecutionNotifications"] = notes
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "shardlog",
                        "version": _tool_version(),
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": _base_ids(result),
                "invocations": [invocation],
                "results": results,
                "properties": {
                    "verdict": v.verdict,
                    "worldSize": result.world_size,
                    "engine": result.engine,
                    "outputs": [{"name": _clean(o.name), "relation": o.relation} for o in v.outputs],
                    "conditional": v.conditional,
                    "assumedRelations": [_clean(f"{r.seq_value} = {r.layout} [{r.established}]") for r in v.assumed],
                },
            }
        ],
    }


def write_sarif(result: CheckResult, path: str | Path) -> None:
    """Write the SARIF log of ``result`` to ``path`` (UTF-8, indented).

    Args:
        result: the check result.
        path: file to write (atomically, :func:`analyzer.reports.write.write_atomic`).
    """
    from analyzer.reports.write import write_atomic

    write_atomic(path, sarif_text(result))


def sarif_text(result: CheckResult) -> str:
    """The SARIF log of ``result`` as text (indented)."""
    return json.dumps(to_sarif(result), indent=2, ensure_ascii=False) + "\n"
