"""YAML files a user gives (relation specs), read with bounded work.

PyYAML's C loader (``yaml.CSafeLoader``, libyaml; the pure-Python one when libyaml is
missing) builds the data, after one pass over the parser's events has checked, before
anything is built, that

- the document nests at most :data:`MAX_DEPTH` collections deep (the C composer recurses on
  the C stack);
- the document is at most :data:`MAX_NODES` nodes with every alias expanded (a "billion
  laughs" file of a few hundred bytes expands to 10**9 nodes), and no alias refers to a
  collection that holds it (a recursive structure).

Building errors (a YAML integer over Python's 4,300 digits, a bad timestamp) and YAML
syntax errors are one line naming the file.
"""

from __future__ import annotations

import os

from analyzer.errors import InputError, escape
from analyzer.inputs.files import read_text

__all__ = ["MAX_DEPTH", "MAX_NODES", "load_yaml_file", "load_yaml_text"]

#: Deepest nesting of collections in a user's YAML file.
MAX_DEPTH = 64
#: Most nodes (scalars and collections) of a user's YAML file, with aliases expanded.
MAX_NODES = 250_000


def _loader():
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return escape(text, 160) if text else type(exc).__name__


def _check_events(text: str, where: str) -> None:
    """The depth and expanded-size checks of the module docstring, on the parser's events."""
    import yaml

    sizes: dict[str, int] = {}
    open_anchors: set[str] = set()
    stack: list[list] = [[None, 0]]  # per open collection: [anchor, nodes so far]
    for event in yaml.parse(text, Loader=_loader()):
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in open_anchors:
                raise InputError(
                    f"{where}: not a valid YAML spec (alias *{escape(event.anchor, 40)} inside its own anchor)"
                )
            stack[-1][1] += sizes.get(event.anchor, 1)
        elif isinstance(event, yaml.ScalarEvent):
            stack[-1][1] += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(stack) > MAX_DEPTH:
                raise InputError(f"{where}: not a valid YAML spec (nested too deeply)")
            stack.append([event.anchor, 1])
            if event.anchor is not None:
                open_anchors.add(event.anchor)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            anchor, count = stack.pop()
            if anchor is not None:
                sizes[anchor] = count
                open_anchors.discard(anchor)
            stack[-1][1] += count
        else:
            continue
        if sum(frame[1] for frame in stack) > MAX_NODES:
            raise InputError(f"{where}: not a valid YAML spec (over {MAX_NODES:,} nodes with its aliases expanded)")


def load_yaml_text(text: str, where: str):
    """The data of one YAML document (see the module docstring).

    Args:
        text: the document.
        where: the file name (escaped) for messages.

    Raises:
        InputError: ``where: not a valid YAML spec (<why>)``.
    """
    import yaml

    try:
        _check_events(text, where)
        return yaml.load(text, Loader=_loader())  # noqa: S506 - a safe loader
    except InputError:
        raise
    except yaml.YAMLError as exc:
        why = _first_line(exc)
        if "maximum nesting depth" in why:  # libyaml's own cap (1,000 levels)
            why = "nested too deeply"
        raise InputError(f"{where}: not a valid YAML spec ({why})") from None
    except ValueError as exc:  # int() of over 4,300 digits, a bad timestamp or base64 value
        why = _first_line(exc)
        if "digits" in why:
            why = "an integer of over 4,300 digits"
        raise InputError(f"{where}: not a valid YAML spec ({why})") from None
    except (RecursionError, MemoryError, OverflowError) as exc:
        raise InputError(
            f"{where}: not a valid YAML spec ({type(exc).__name__}: too large or nested too deeply)"
        ) from None


def load_yaml_file(path: str | os.PathLike, what: str = "spec file"):
    """:func:`load_yaml_text` of a user-named file (read by :func:`analyzer.inputs.files.read_text`,
    at most ``LIMITS["spec"]`` bytes)."""
    text = read_text(path, what, limit="spec")
    return load_yaml_text(text, escape(os.fsdecode(path), 200))
