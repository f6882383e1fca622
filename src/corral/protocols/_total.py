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

import logging
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

from ..events import Error, Event
from ..events._fields import fields_ok
from ..events._text import scrub, storable

P = ParamSpec("P")
S = TypeVar("S")

log = logging.getLogger("corral.protocols")


def total(
    method: Callable[Concatenate[S, P], list[Event]],
) -> Callable[Concatenate[S, P], list[Event]]:
    """Wrap a parser entry point: no exception escapes, every event is storable."""

    def entry(self: S, /, *args: P.args, **kwargs: P.kwargs) -> list[Event]:
        try:
            events = method(self, *args, **kwargs)
        except Exception as exc:  # the agent's output must never end the session
            return [parse_error(method.__qualname__, exc, args)]
        for event in events:
            if not fields_ok(event):
                return [storable(e) for e in events]
        return events

    entry.__name__ = method.__name__
    entry.__qualname__ = method.__qualname__
    entry.__doc__ = method.__doc__
    entry.__wrapped__ = method  # type: ignore[attr-defined]
    return entry


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
