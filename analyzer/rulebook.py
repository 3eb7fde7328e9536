"""Where the rule library and the schema live, in a source checkout or an installed package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["rules_dir", "schemas_dir", "rule_files", "schema_files", "hints_catalog"]

_REPO_ROOT = Path(__file__).resolve().parent.parent


def _package_dir(package: str, fallback: str) -> Path:
    source = _REPO_ROOT / fallback
    if source.is_dir():
        return source
    try:
        return Path(str(resources.files(package)))
    except (ModuleNotFoundError, TypeError):
        return source


def rules_dir() -> Path:
    """Folder of the bundled rule library (``rules/``)."""
    return _package_dir("analyzer.rules", "rules")


def schemas_dir() -> Path:
    """Folder of the bundled schema (``schemas/``)."""
    return _package_dir("analyzer.schemas", "schemas")


def schema_files() -> list[Path]:
    """Every ``schemas/*.dl`` file, sorted by name."""
    return sorted(schemas_dir().glob("*.dl"))


def rule_files(extra_dirs: list[Path] | None = None) -> list[Path]:
    """Every bundled rule file (``rules/**/*.dl``) followed by the ``*.dl`` files of ``extra_dirs``.

    Args:
        extra_dirs: user rule folders (``--rules DIR``), searched recursively.

    Returns:
        Paths in a stable order: core, ops, collectives, diagnose, then user folders.
    """
    root = rules_dir()
    files: list[Path] = []
    for part in ("core", "ops", "collectives", "diagnose"):
        files.extend(sorted((root / part).glob("*.dl")))
    for extra in extra_dirs or []:
        files.extend(sorted(Path(extra).rglob("*.dl")))
    return files


def hints_catalog() -> Path:
    """The hint catalog (``rules/diagnose/hints.yaml``)."""
    return rules_dir() / "diagnose" / "hints.yaml"
