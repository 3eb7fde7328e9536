"""Datalog engines behind one interface (:class:`Engine`).

``seminaive`` (embedded: rules compiled to Python, the default), ``clingo`` (embedded, through
its Python API), ``souffle`` (the real Soufflé binary, when one is found) and ``pydatalog`` (pure
Python, for small programs) evaluate the same checked program; the golden conformance suite
(``tests/rules/``) keeps them in agreement.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from analyzer.engines.base import Engine, EngineError, EngineUnavailable, EngineWarning, UnknownEngine

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "Engine",
    "EngineError",
    "EngineUnavailable",
    "EngineWarning",
    "UnknownEngine",
    "available_engines",
    "get_engine",
]

#: The engine used when none is named.
DEFAULT_ENGINE = "seminaive"

_MODULES = {  # engine name -> (module, class), in order of preference
    "seminaive": ("analyzer.engines.seminaive_engine", "SemiNaiveEngine"),
    "clingo": ("analyzer.engines.clingo_engine", "ClingoEngine"),
    "souffle": ("analyzer.engines.souffle_engine", "SouffleEngine"),
    "pydatalog": ("analyzer.engines.pydatalog_engine", "PyDatalogEngine"),
}


class _EngineClasses(Mapping):
    """Engine classes by name; an engine's module is imported when its class is first read
    (a check with the default engine does not import the others)."""

    def __getitem__(self, name: str) -> type[Engine]:
        module, cls = _MODULES[name]
        return getattr(importlib.import_module(module), cls)

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


#: Engine classes by name, in order of preference.
ENGINES: Mapping[str, type[Engine]] = _EngineClasses()


def get_engine(name: str = DEFAULT_ENGINE) -> Engine:
    """An engine instance by name.

    Args:
        name: ``"seminaive"``, ``"clingo"``, ``"souffle"`` or ``"pydatalog"`` (case-insensitive).

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
