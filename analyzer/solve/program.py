"""The rule program of a check: ``schemas/*.dl`` + ``rules/**/*.dl`` (+ user rule folders),
parsed and checked once and kept in the on-disk cache (:mod:`analyzer.cache`) keyed by the
files' paths and contents, with what the default engine compiles from it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from analyzer.cache import cached, digest
from analyzer.engines import DEFAULT_ENGINE
from analyzer.solve.coverage import instrument
from analyzer.speedups import symmetry
from analyzer.speedups.symmetry import with_rank_probes

__all__ = ["instrumented", "load_program_cached"]


# part of the cache key: change it when what is pickled changes
_CACHE_FORMAT = b"program + engine preparations, rules stored apart, 10"
# the default engine's compiled rules and the rule shapes (pickled with the program) are made by
# these modules (not imported here)
_TRANSLATOR_SOURCES = tuple(
    Path(__file__).parent.parent / m
    for m in (
        "engines/seminaive_engine.py",
        "engines/seminaive_codegen.py",
        "engines/clingo_engine.py",
        "datalog/normalize.py",
        "speedups/relevance.py",
    )
)
_PROGRAMS: dict[str, object] = {}  # programs loaded in this process, by the digest of their files


class _StoredRules(Sequence):
    """A cached program's rules, unpickled when first read: a check whose engine finds the
    program's translation on it (clingo, :meth:`~analyzer.engines.base.Engine.prepare`) reads
    only their number (unpickling the rules' syntax trees took 0.025 s of each process)."""

    def __init__(self, blob: bytes, count: int) -> None:
        self._blob: bytes | None = blob
        self._count = count
        self._rules: list | None = None

    def _loaded(self) -> list:
        if self._rules is None:
            import pickle

            self._rules = pickle.loads(self._blob)
            self._blob = None
        return self._rules

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index):
        return self._loaded()[index]

    def __iter__(self):
        return iter(self._loaded())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (list, Sequence)) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def load_program_cached(paths: Sequence[Path]):
    """``load_program`` with a pickle cache (:mod:`analyzer.cache`) keyed by the files' paths and
    contents (parsing and checking the library takes about a second; the cache makes it
    milliseconds); any problem with it falls back to parsing. Within one process the same files
    give the same (unchanged) program object, so what an engine derives from a program (clingo's
    translation) is reused."""
    import os

    from analyzer.inputs.files import read_bytes

    parts = [_CACHE_FORMAT, Path(symmetry.__file__).read_bytes()]  # its rank probes are rules of the program
    parts += [source.read_bytes() for source in _TRANSLATOR_SOURCES]
    for p in paths:  # where the rules are is part of the program (rule locations), as written: a
        # symlinked copy is another entry, and abspath saves resolve()'s syscalls (1.5 ms here)
        parts += [os.path.abspath(p).encode(), read_bytes(p, "Datalog file", limit="rules")]
    key = digest(parts)
    if key not in _PROGRAMS:  # else the same files as a check before in this process
        _PROGRAMS[key] = cached("program", key, lambda: _parsed_program(paths), _rules_apart)
        _CACHE_KEYS[id(_PROGRAMS[key])] = key
    return _PROGRAMS[key]


_CACHE_KEYS: dict[int, str] = {}  # id of a program in _PROGRAMS -> its cache key


def instrumented(program):
    """``instrument(program)`` (a ``--coverage`` run), prepared for the default engine and cached
    beside ``program`` when that came from the program cache (compiling its ~1,100 rules for the
    default engine takes ~0.6 s)."""
    key = _CACHE_KEYS.get(id(program))
    if key is None or _PROGRAMS.get(key) is not program:
        return instrument(program)
    if key + "-coverage" not in _PROGRAMS:
        made = cached("program-coverage", key, lambda: _prepared(instrument(program)), _rules_apart)
        _PROGRAMS[key + "-coverage"] = made
    return _PROGRAMS[key + "-coverage"]


def _prepared(program):
    from analyzer.engines import ENGINES

    ENGINES[DEFAULT_ENGINE].prepare(program)
    return program


def _parsed_program(paths: Sequence[Path]):
    from analyzer.datalog import load_program

    program = load_program(paths)
    with_rank_probes(program)  # before the translation: the probes are rules of the program
    return _prepared(program)  # the compiled rules, pickled with the program


def _rules_apart(program):
    """A shallow copy of ``program`` to pickle, its rules as one blob unpickled when first read."""
    import copy
    import pickle

    stored = copy.copy(program)
    stored.rules = _StoredRules(pickle.dumps(program.rules, pickle.HIGHEST_PROTOCOL), len(program.rules))
    return stored
