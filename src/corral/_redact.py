"""Secrets out of text corral stores or shows: stderr tails, error messages, logs.

Two rules, applied together by :func:`redact`:

* **Known key shapes** (:data:`PATTERNS`): provider API keys (``sk-…``, ``sk-ant-…``), GitHub tokens
  (``ghp_…`` and siblings), Google API keys (``AIza…``), Slack tokens (``xox…``), AWS access key ids,
  and whatever follows ``Bearer`` in an ``Authorization``-style line.
* **Values corral handed to an agent**: every environment variable whose name ends in ``_KEY``,
  ``_TOKEN``, ``_SECRET`` (or ``_PASSWORD``) and whose value is long enough to be a secret
  (:data:`MIN_SECRET_LEN`) is replaced wherever its value appears, whatever its shape.

Redaction replaces the secret with ``[REDACTED]`` and keeps the rest of the text, so a stderr tail stays
useful. It is a pure function of its input and never raises.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import TypeVar

import msgspec

_E = TypeVar("_E", bound=msgspec.Struct)

MARK = "[REDACTED]"
MIN_SECRET_LEN = 8
"""Shorter values of ``*_KEY``-style variables (``1``, ``true``, a port) are not treated as secrets."""

SECRET_NAME = re.compile(r"(?:_|^)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)

_START = r"(?<![A-Za-z0-9_\-])"  # a key starts a word: "task-…" is not an "sk-…" key

PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(_START + r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(_START + r"sk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{16,}"),
    re.compile(_START + r"gh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(_START + r"github_pat_[A-Za-z0-9_]{20,}"),
    re.compile(_START + r"AIza[0-9A-Za-z_\-]{30,}"),
    re.compile(_START + r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    re.compile(_START + r"AKIA[0-9A-Z]{16}"),
    re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE),
)


def env_secrets(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of the secret-named variables in ``env`` (default: this process's environment)."""
    source = os.environ if env is None else env
    found = {v for k, v in source.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET_LEN}
    return sorted(found, key=len, reverse=True)  # longest first: a value containing another wins


def redact(text: str, env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> str:
    """``text`` with known key shapes, secret env values of ``env`` and ``extra`` values masked."""
    if not text:
        return text
    for value in (*env_secrets(env), *(e for e in extra if len(e) >= MIN_SECRET_LEN)):
        if value in text:
            text = text.replace(value, MARK)
    for pattern in PATTERNS:
        text = pattern.sub(MARK, text)
    return text


def redact_optional(text: str | None, env: Mapping[str, str] | None = None) -> str | None:
    return None if text is None else redact(text, env)


@functools.cache
def _has_diagnostics(cls: type) -> bool:
    """Whether events of ``cls`` carry a free-text diagnostic field (by subclass, as the checks in
    :func:`redact_event`), found once per type: most events are text deltas, and every one passes
    there."""
    from .events import Error, SessionEnded, Warning

    return issubclass(cls, SessionEnded | Error | Warning)


def redact_event(event: _E) -> _E:
    """``event`` with its free-text diagnostic fields redacted: the message and stderr tail of
    :class:`~corral.events.SessionEnded`, :class:`~corral.events.Error` and
    :class:`~corral.events.Warning`. Other events (agent text, tool output) are kept as they are."""
    if not _has_diagnostics(type(event)):
        return event
    from .events import Error, SessionEnded, Warning

    if isinstance(event, SessionEnded):
        message, tail = redact_optional(event.message), redact_optional(event.stderr_tail)
        if message != event.message or tail != event.stderr_tail:
            return msgspec.structs.replace(event, message=message, stderr_tail=tail)
    elif isinstance(event, Error | Warning):
        text = redact(event.message)
        if text != event.message:
            return msgspec.structs.replace(event, message=text)
    return event
