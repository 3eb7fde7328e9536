"""Where the rule library and the schema live, in a source checkout or an installed package."""

from __future__ import annotations

from pathlib import Path

from analyzer.inputs.files import list_files

__all__ = ["rules_dir", "schemas_dir", "rule_files", "schema_files", "hints_catalog"]

_PACKAGE = Path(__file__).resolve().parent.parent  # analyzer/


def _data_dir(name: str) -> Path:
    # Installed: setup.cfg maps rules/ and schemas/ into the package (analyzer/rules).
    # Source checkout: they sit beside the package.
    installed = _PACKAGE / name
    return installed if installed.is_dir() else _PACKAGE.parent / name


def rules_dir() -> Path:
    """Folder of the bundled rule library (``rules/``)."""
    return _data_dir("rules")


def schemas_dir() -> Path:
    """Folder of the bundled schema (``schemas/``)."""
    return _data_dir("schemas")


def schema_files() -> list[Path]:
    """Every ``schemas/*.dl`` file, sorted by name."""
    return sorted(schemas_dir().glob("*.dl"))


def rule_files(extra_dirs: list[Path] | None = None) -> list[Path]:
    """Every bundled rule file (``rules/**/*.dl``) followed by the ``*.dl`` files of ``extra_dirs``.

    Args:
        extra_dirs: user rule folders (``--rules DIR``), searched recursively.

    Returns:
        Paths in a stable order: core, ops, kernels, parallel, collectives, diagnose, then user
        folders.

    Raises:
        InputError: a user folder cannot be listed, or holds a ``*.dl`` entry that is not a
            regular file (:func:`analyzer.inputs.files.list_files`).
    """
    root = rules_dir()
    files: list[Path] = []
    for part in ("core", "ops", "kernels", "parallel", "collectives", "diagnose"):
        files.extend(sorted((root / part).glob("*.dl")))
    for extra in extra_dirs or []:
        files.extend(list_files(extra, ".dl", "rules folder"))
    return files


def hints_catalog() -> Path:
    """The hint catalog (``rules/diagnose/hints.yaml``)."""
    return rules_dir() / "diagnose" / "hints.yaml"
