"""Per-request usage and cost records (JSONL in the corral home), and secret redaction for logs.

One line per model request, appended when the request ends (at-most-once: a crash mid-request
loses that line). Fields: ``ts``, ``id``, ``client_wire``, ``target_wire``, ``provider``,
``profile``, ``model``, ``stream``, ``status``, ``outcome``, token counts, ``cost_usd``,
``latency_ms``, ``credential`` and ``failovers`` (each ``{credential, status, retry_after}``).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from ._config import Prices
from ._ir import Usage
from ._sse import encode

log = logging.getLogger("corral.proxy")
_SECRET_KEYS = re.compile(
    r"^(.*authorization|.*api[-_]?key|token|.*[-_]token|.*secret.*|.*password|signature|.*cookie)$",
    re.I,
)


def redact(value: Any, depth: int = 0) -> Any:
    """``value`` with every secret-looking field replaced by ``"[redacted]"``."""
    if depth > 8:
        return "…"
    if isinstance(value, dict):
        return {
            k: "[redacted]"
            if isinstance(k, str) and _SECRET_KEYS.search(k)
            else redact(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(v, depth + 1) for v in value]
    return value


def log_event(event: str, level: int = logging.INFO, **fields: Any) -> None:
    """One structured log line: ``{"event": ..., ...}`` with secrets redacted."""
    if log.isEnabledFor(level):
        log.log(level, json.dumps({"event": event, **redact(fields)}, default=str))


def cost(usage: Usage, prices: Prices | None) -> float | None:
    if prices is None:
        return None
    fresh = max(usage.input_tokens - usage.cache_read_tokens, 0)
    total = (
        fresh * prices.input_per_mtok
        + usage.cache_read_tokens * prices.cache_read_per_mtok
        + usage.output_tokens * prices.output_per_mtok
    )
    return round(total / 1_000_000, 8)


class UsageLog:
    """Appends each record with one ``write`` on an ``O_APPEND`` descriptor (no buffer to flush,
    whole lines even with several writers)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._fd: int | None = None

    def record(self, entry: dict[str, Any]) -> None:
        entry = {"ts": round(time.time(), 3), **entry}
        log_event("proxy.usage", logging.DEBUG, **entry)
        if self.path is None:
            return
        line = encode(entry) + b"\n"
        with self._lock:
            try:
                if self._fd is None:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
                    self._fd = os.open(self.path, flags, 0o600)
                os.write(self._fd, line)
            except OSError as exc:
                log.warning("proxy: cannot write the usage log %s: %s", self.path, exc)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def read_usage(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text("utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out
