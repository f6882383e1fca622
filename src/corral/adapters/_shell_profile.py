"""A shell-grade adapter's configuration, read from its manifest (pure: no process, no I/O).

The manifest's own fields give the command (``launchCommand``, split like a shell would) and the
injection mode (``promptInjection``); ``presentation.shell`` adds what a terminal program needs on
top, all optional::

    "presentation": {"shell": {
        "readyPattern": "^> ?$",          // regex visible (multi-line search) when it waits for input
        "busyPattern": "esc to interrupt",// regex visible while it works
        "settleMs": 800,                  // the screen quiet this long (and ready) ends a turn
        "pasteDelayMs": 150,              // paste_then_enter: pause between the paste and Enter
        "startTimeoutS": 60,              // bound on the start screen becoming ready
        "turnTimeoutS": 600,              // bound on one turn; past it the turn ends "error"
        "cancelKeys": "\\u0003",           // typed by interrupt() (Ctrl-C)
        "cancelSettleMs": 400,            // quiet this long after the cancel keys ends the turn
        "modelArgs": ["--model", "{model}"], // argv for the ``model`` option (absent: refused)
        "dropPatterns": ["^Tokens: "],    // chrome lines (see corral.protocols.shell_screen)
        "stripPatterns": ["^● "],         // markers removed from kept lines
        "columns": 120, "rows": 40        // the window size
    }}

A value of the wrong type or out of its range, an empty ``cancelKeys`` or a regex that does not
compile is a ``ConfigError`` naming the field (refuse, never degrade).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..manifests import Manifest
from ..manifests._model import PromptInjection
from ..protocols.shell_screen import ScreenRules


@dataclass(frozen=True)
class ShellProfile:
    adapter_id: str
    argv: tuple[str, ...]
    injection: PromptInjection
    rules: ScreenRules
    settle: float = 0.8
    paste_delay: float = 0.15
    start_timeout: float = 60.0
    turn_timeout: float = 600.0
    cancel_keys: bytes = b"\x03"
    cancel_settle: float = 0.4
    model_args: tuple[str, ...] = ()
    columns: int = 120
    rows: int = 40

    def model_argv(self, model: str | None) -> list[str]:
        if not model:
            return []
        return [arg.replace("{model}", model) for arg in self.model_args]


def _get(section: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any) -> Any:
    value = section.get(key, default)
    if value is default:
        return value
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ConfigError(f"presentation.shell.{key}: expected {kind}, got {type(value).__name__}")
    return value


def _bounded(section: dict[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = float(_get(section, key, (int, float), default))
    if not low <= value <= high:
        raise ConfigError(f"presentation.shell.{key}: {value:g} is outside {low:g}..{high:g}")
    return value


def _patterns(section: dict[str, Any], key: str) -> tuple[str, ...]:
    value = section.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"presentation.shell.{key}: expected a list of regular expressions")
    for pattern in value:
        _regex(pattern, key)
    return tuple(value)


def _regex(pattern: str | None, key: str) -> str | None:
    if pattern is None:
        return None
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"presentation.shell.{key}: {pattern!r} is not a regex: {exc}") from exc
    return pattern


def shell_profile(manifest: Manifest) -> ShellProfile:
    """The shell profile of ``manifest`` (``ConfigError`` naming a broken field)."""
    section = manifest.presentation.get("shell", {})
    if not isinstance(section, dict):
        raise ConfigError("presentation.shell: expected an object")
    try:
        argv = tuple(shlex.split(manifest.launch_command))
    except ValueError as exc:
        raise ConfigError(f"launchCommand: {exc}") from exc
    if not argv:
        raise ConfigError("launchCommand: empty")
    model_args = section.get("modelArgs", [])
    if not isinstance(model_args, list) or not all(isinstance(a, str) for a in model_args):
        raise ConfigError("presentation.shell.modelArgs: expected a list of strings")
    rules = ScreenRules(
        ready_pattern=_regex(_get(section, "readyPattern", str, None), "readyPattern"),
        busy_pattern=_regex(_get(section, "busyPattern", str, None), "busyPattern"),
        drop_patterns=_patterns(section, "dropPatterns"),
        strip_patterns=_patterns(section, "stripPatterns"),
    )
    cancel_keys = _get(section, "cancelKeys", str, "\x03")
    if not cancel_keys:
        raise ConfigError("presentation.shell.cancelKeys: empty (interrupt() would type nothing)")
    return ShellProfile(
        adapter_id=manifest.id,
        argv=argv,
        injection=manifest.prompt_injection,
        rules=rules,
        settle=_bounded(section, "settleMs", 800, 50, 60_000) / 1000,
        paste_delay=_bounded(section, "pasteDelayMs", 150, 0, 10_000) / 1000,
        start_timeout=_bounded(section, "startTimeoutS", 60, 1, 3600),
        turn_timeout=_bounded(section, "turnTimeoutS", 600, 1, 86_400),
        cancel_keys=cancel_keys.encode(),
        cancel_settle=_bounded(section, "cancelSettleMs", 400, 0, 60_000) / 1000,
        model_args=tuple(model_args),
        columns=int(_bounded(section, "columns", 120, 20, 1000)),
        rows=int(_bounded(section, "rows", 40, 5, 1000)),
    )
