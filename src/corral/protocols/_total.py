"""What makes every parser a total function of the agent's output.

Each parser entry point that takes something the agent wrote is wrapped in :func:`total`:

* an exception inside the parser (a field of an unexpected type, ``RecursionError``…) becomes one
  ``Error`` event with code ``parse_error`` that keeps the payload (repaired), and is logged; the
  session goes on;
* every event it returns passes :func:`corral.events._text.storable`, so the store and
  ``corral run`` can always encode it.

Text and reasoning deltas go through a :class:`~corral.events._text.SurrogateJoiner` inside the
parsers, so an emoji split across two deltas comes out whole.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from ..events import Error, Event
from ..events._fields import _CHECKS
from ..events._text import scrub, storable

P = ParamSpec("P")
S = TypeVar("S")

log = logging.getLogger("corral.protocols")


def total(
    method: Callable[Concatenate[S, P], list[Event]],
) -> Callable[Concatenate[S, P], list[Event]]:
    """Wrap a parser entry point: no exception escapes, every event is storable."""
    where = method.__qualname__
    checks = _CHECKS

    def entry(self: S, /, *args: P.args, **kwargs: P.kwargs) -> list[Event]:
        try:
            events = method(self, *args, **kwargs)
        except Exception as exc:  # the agent's output must never end the session
            return [parse_error(where, exc, args)]
        for event in events:
            check = checks.get(type(event))
            if check is None or not check(event):
                return [storable(e) for e in events]
        return events

    names = _positional(method)
    wrapper: Any = entry if names is None else _fixed(method, where, names)
    wrapper.__name__ = method.__name__
    wrapper.__qualname__ = method.__qualname__
    wrapper.__doc__ = method.__doc__
    wrapper.__wrapped__ = method
    return cast(Callable[Concatenate[S, P], list[Event]], wrapper)


_FIXED = """
def entry(self, {args}):
    try:
        _events = _method(self, {args})
    except Exception as _exc:  # the agent's output must never end the session
        return [_parse_error(_where, _exc, ({args}{comma}))]
    for _event in _events:
        _check = _checks.get(type(_event))
        if _check is None or not _check(_event):
            return [_storable(_e) for _e in _events]
    return _events
"""


def _fixed(method: Callable[..., Any], where: str, names: list[str]) -> Callable[..., Any]:
    """The wrapper for an entry point with only required positional arguments, made without
    ``*args`` and ``**kwargs`` (it runs for every line an agent writes)."""
    namespace: dict[str, Any] = {
        "_method": method,
        "_where": where,
        "_checks": _CHECKS,
        "_parse_error": parse_error,
        "_storable": storable,
    }
    args = ", ".join(names)
    exec(_FIXED.format(args=args, comma="," if len(names) == 1 else ""), namespace)
    fixed: Callable[..., Any] = namespace["entry"]
    return fixed


def _positional(method: Callable[..., Any]) -> list[str] | None:
    """The names of ``method``'s arguments after ``self`` when all are required and positional."""
    params = list(inspect.signature(method).parameters.values())[1:]
    if all(
        p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        and p.default is inspect.Parameter.empty
        and not p.name.startswith("_")
        for p in params
    ):
        return [p.name for p in params]
    return None


def parse_error(where: str, exc: BaseException, payload: object) -> Event:
    """The event a parser bug on one line becomes (logged with the payload's shape)."""
    log.warning("%s could not parse agent output: %r", where, exc)
    log.debug("the traceback", exc_info=exc)
    message = f"corral could not parse a message from the agent ({type(exc).__name__}: {exc})"
    if isinstance(payload, tuple) and len(payload) == 1:
        payload = payload[0]
    return Error(message=message[:500], code="parse_error", raw=scrub(payload))


def mapping(value: object) -> dict[str, Any]:
    """``value`` if the agent sent an object there, else an empty one (never ``None``, a list…)."""
    return value if type(value) is dict else {}


def hashable(value: object) -> bool:
    """Whether ``value`` can be a key (JSON ids and names the agent sends may be lists or objects)."""
    return value is None or type(value) in (str, int, float, bool)


def sequence(value: object) -> list[Any]:
    """``value`` if the agent sent an array there, else an empty one."""
    return value if type(value) is list else []


def text_or_none(value: object) -> str | None:
    """``value`` if it is a string, else ``None`` (for lookups in tables of known names)."""
    return value if type(value) is str else None
