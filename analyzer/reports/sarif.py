"""SARIF 2.1.0 log of a check, for CI code scanning (``--sarif PATH``).

One result per discrepancy of the verdict, earliest first, at ``level: error``, then one per
unproven step (no rule explains it, the numbers agree: :mod:`analyzer.verdict.triage`) at
``level: warning``, ``kind: review``, rule ``unproven-step``, the pattern in the message:

- ``ruleId`` is the first hint id of the discrepancy (``rules/diagnose/hints.yaml``, every
  catalog entry is a rule of ``tool.driver.rules``), or one of :data:`EXTRA_RULES` when no
  hint fired (a frontier without a hint, an output not rebuilt on the rank side, collectives
  that do not pair across ranks).
- ``locations[0]`` is the source file and line the exporter recorded for the node. A relative
  path (``transformers/models/llama/modeling_llama.py``) stays relative, with
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
import re
from pathlib import Path, PurePosixPath, PureWindowsPath
from urllib.parse import quote

import yaml

from analyzer.model import CheckResult
from analyzer.solve.rulebook import hints_catalog
from analyzer.verdict.build import Discrepancy

__all__ = ["to_sarif", "write_sarif", "SARIF_VERSION", "SARIF_SCHEMA_URI", "EXTRA_RULES", "MAX_TEXT"]

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


def _artifact(path: str, base_id: str | None = _PYTHONPATH) -> dict:
    """An ``artifactLocation`` for a file path (percent-encoded, relative paths kept relative
    to ``base_id``, or to the working directory of the check when it is None)."""
    raw = path.encode("utf-8", "replace").decode("utf-8")
    if _WINDOWS_ABS.match(raw):
        return {"uri": _quote_uri(PureWindowsPath(raw).as_uri())}
    if raw.startswith("/"):
        return {"uri": _quote_uri(PurePosixPath(raw).as_uri())}
    rel = raw.replace("\\", "/")
    uri = quote(rel, safe="/")
    return {"uri": uri, "uriBaseId": base_id} if base_id else {"uri": uri}


def _quote_uri(uri: str) -> str:
    # as_uri() percent-encodes the path already; re-quote keeping what is valid in a URI.
    return quote(uri, safe="/:%@!$&'()*+,;=~-._")


def _physical(source: str, code: str = "") -> dict | None:
    if not source:
        return None
    file, line = _split_source(source)
    if not file:
        return None
    loc: dict = {"artifactLocation": _artifact(file)}
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
    physical = _physical(d.source, d.code) or {"artifactLocation": _artifact(_model_file(result, d.graph), None)}
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
        origin_physical = _physical(d.origin_source)
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
                "originalUriBaseIds": {
                    _PYTHONPATH: {
                        "description": {
                            "text": "a directory on the import path (sys.path) of the exporting interpreter"
                        }
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "properties": {
                            "seq": _clean(result.inputs.seq_path),
                            "ranks": [_clean(p) for p in result.inputs.rank_paths],
                        },
                    }
                ],
                "results": results,
                "properties": {
                    "verdict": v.verdict,
                    "worldSize": result.world_size,
                    "engine": result.engine,
                    "outputs": [{"name": _clean(o.name), "relation": o.relation} for o in v.outputs],
                },
            }
        ],
    }


def write_sarif(result: CheckResult, path: str | Path) -> None:
    """Write the SARIF log of ``result`` to ``path`` (UTF-8, indented).

    Args:
        result: the check result.
        path: file to write.
    """
    text = json.dumps(to_sarif(result), indent=2, ensure_ascii=False)
    Path(path).write_text(text + "\n", encoding="utf-8")
