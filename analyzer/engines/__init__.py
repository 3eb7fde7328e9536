"""Datalog engines behind one interface (:class:`Engine`).

``clingo`` (embedded, the default), ``souffle`` (the ``souffle`` binary, when on PATH) and
``pydatalog`` (pure Python, for small programs) evaluate the same checked program; the
golden conformance suite (``tests/rules/``) keeps them in agreement.
"""

from __future__ import annotations

from analyzer.engines.base import Engine, EngineError, EngineUnavailable, UnknownEngine
from analyzer.engines.clingo_engine import ClingoEngine
from analyzer.engines.pydatalog_engine import PyDatalogEngine
from analyzer.engines.souffle_engine import SouffleEngine

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "Engine",
    "EngineError",
    "EngineUnavailable",
    "UnknownEngine",
    "available_engines",
    "get_engine",
]

#: The engine used when none is named.
DEFAULT_ENGINE = "clingo"

#: Engine classes by name, in order of preference.
ENGINES: dict[str, type[Engine]] = {
    ClingoEngine.name: ClingoEngine,
    SouffleEngine.name: SouffleEngine,
    PyDatalogEngine.name: PyDatalogEngine,
}


def get_engine(name: str = DEFAULT_ENGINE) -> Engine:
    """An engine instance by name.

    Args:
        name: ``"clingo"``, ``"souffle"`` or ``"pydatalog"`` (case-insensitive).

    Returns:
        The engine.

    Raises:
        UnknownEngine: If no engine has that name (a ``ValueError`` and an ``EngineUnavailable``).
        EngineUnavailable: If the engine cannot run here (one-line reason).
    """
    cls = ENGINES.get(name.lower())
    if cls is None:
        raise UnknownEngine(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
    reason = cls.unavailable_reason()
    if reason:
        raise EngineUnavailable(reason)
    return cls()


def available_engines() -> list[str]:
    """Names of the engines that can run here, in order of preference.

    Returns:
        The names.
    """
    return [name for name, cls in ENGINES.items() if cls.unavailable_reason() is None]
