"""The spec file's JSON Schema (``schemas/spec.schema.json``), the published form of the spec
format: editors complete and check a spec from it (``# yaml-language-server: $schema=...``),
and every spec is validated against it when loaded (:func:`analyzer.inputs.infer.load_spec`).

Importing ``jsonschema`` costs about half a second (its metaschemas and ``referencing``), as much as
a whole check of a small model, so a spec that passed is remembered in the program cache
(:mod:`analyzer.cache`) by a digest of its parsed data and of the schema: the same spec, checked
again, is not validated again. Only the digest is kept (the entry's name; it holds ``True``), never the spec.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path

from analyzer.errors import InputError

__all__ = ["spec_schema", "validate_spec"]


@functools.cache
def spec_schema() -> dict:
    """The JSON Schema of a spec file, from the bundled ``schemas/`` folder."""
    from analyzer.solve.rulebook import schemas_dir

    return json.loads((schemas_dir() / "spec.schema.json").read_text(encoding="utf-8"))


def _json_keys(data: object) -> object:
    """YAML data with every mapping key a string (YAML allows ``1: replicate``; JSON does not)."""
    if isinstance(data, Mapping):
        return {str(k): _json_keys(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_json_keys(v) for v in data]
    return data


def validate_spec(path: str | Path, data: object) -> None:
    """Validate parsed spec data against :func:`spec_schema` (skipped when data with the same
    digest passed before: module docstring).

    Raises:
        InputError: ``path: where: what`` for the error jsonschema ranks most relevant.
    """
    from analyzer.cache import cached, digest

    doc = _json_keys(data)
    try:
        key = digest([json.dumps(spec_schema(), sort_keys=True).encode(), json.dumps(doc, sort_keys=True).encode()])
    except (TypeError, ValueError):  # a value JSON cannot spell (a date, a set): validate every time
        key = None
    if key is None:
        _validate(path, doc)
    else:
        cached("spec-valid", key, lambda: _validate(path, doc))  # raises, and stores nothing, when invalid


def _validate(path: str | Path, doc: object) -> bool:
    import jsonschema

    validator = jsonschema.Draft202012Validator(spec_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is None:
        return True
    where = ".".join(str(x) for x in error.absolute_path) or "top level"
    raise InputError(f"{path}: {where}: {' '.join(error.message.split())} (schemas/spec.schema.json)")
