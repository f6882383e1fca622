"""The shape of a wire, and the index of recorded fixtures: what the drift report compares.

A wire's *signature* is the set of message kinds it carried, one string per kind and direction:
``out method:session/update/agent_message_chunk``, ``in type:control_request/initialize``,
``out response:result[agentInfo,authMethods,…]``. Counts, order, ids and text are left out, so two
runs of one CLI version give the same signature while a release that adds, drops or reshapes a
message gives another. Entries are transcript entries (``corral.testing._transcript``).

The fixture index is every ``<scenario>.meta.json`` under a fixture root
(``tests/fixtures/transcripts/<target>/<version>/``), with the command that re-records it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_ID_SEGMENT = re.compile(r"^(?=.*\d)[A-Za-z0-9_-]{8,}$")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and len(value) <= 80 else None


def _dig(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _keys(value: Any) -> str:
    return ",".join(sorted(str(k) for k in value)) if isinstance(value, dict) else ""


def _path(path: str) -> str:
    """An HTTP path with its id-like segments replaced (``/session/ses_3fa…/message``)."""
    bare = path.split("?", 1)[0]
    return "/".join(":id" if _ID_SEGMENT.match(s) else s for s in bare.split("/"))


def message_kind(line: Any) -> str:
    """The kind of one JSON line: its method, type or response shape (never ids or text)."""
    if not isinstance(line, dict):
        return f"json:{type(line).__name__}"
    method = _str(line.get("method"))
    if method is not None and isinstance(line.get("path"), str):  # an HTTP exchange (OpenCode)
        status = line.get("status")
        outcome = "error" if "error" in line else str(status)
        return f"http:{method} {_path(line['path'])} {outcome}"
    if method is not None:
        sub = (
            _str(_dig(line, "params", "update", "sessionUpdate"))
            or _str(_dig(line, "params", "item", "type"))
            or _str(_dig(line, "params", "msg", "type"))
        )
        return f"method:{method}" + (f"/{sub}" if sub else "")
    if "result" in line or ("error" in line and "id" in line):
        part = "result" if "result" in line else "error"
        return f"response:{part}[{_keys(line.get(part))}]"
    kind = _str(line.get("type"))
    if kind is not None:
        sub = (
            _str(line.get("subtype"))
            or _str(_dig(line, "request", "subtype"))
            or _str(_dig(line, "response", "subtype"))
            or _str(_dig(line, "event", "type"))
        )
        return f"type:{kind}" + (f"/{sub}" if sub else "")
    return f"keys:{_keys(line)}"


def signature(entries: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The set of ``"<dir> <kind>"`` strings of a transcript's entries."""
    kinds: set[str] = set()
    for e in entries:
        direction = str(e.get("dir"))
        if direction == "exit":
            kinds.add("exit")
        elif "line" in e:
            kinds.add(f"{direction} {message_kind(e['line'])}")
        else:
            kinds.add(f"{direction} text")
    return frozenset(kinds)


def read_entries(path: Path) -> list[dict[str, Any]]:
    """A ``.jsonl`` transcript's entries (unreadable lines are skipped)."""
    out: list[dict[str, Any]] = []
    try:
        text = path.read_text("utf-8")
    except OSError:
        return out
    for raw in text.splitlines():
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


@dataclass(frozen=True, kw_only=True)
class Fixture:
    """One recorded fixture, from its ``.meta.json``."""

    path: str
    """The ``.jsonl`` (or ``store/`` directory) relative to the fixture root's parent."""
    target: str
    """The conformance target it was recorded through (``codex-exec`` for ``exec-*``)."""
    cli: str
    version: str
    scenario: str
    command: str


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def fixture_index(root: Path) -> list[Fixture]:
    """Every fixture under ``root`` (``<target>/<version>/<scenario>.meta.json``), sorted."""
    out: list[Fixture] = []
    for meta_path in sorted(root.glob("*/*/*.meta.json")):
        try:
            meta = json.loads(meta_path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(meta, dict):
            continue
        target, version = meta_path.parent.parent.name, meta_path.parent.name
        stem = meta_path.name[: -len(".meta.json")]
        scenario = stem
        if stem.startswith("exec-"):
            target, scenario = f"{target}-exec", stem[len("exec-") :]
        data = meta_path.parent / (stem if stem == "store" else f"{stem}.jsonl")
        command = meta.get("command")
        adapter = meta.get("adapter") or target
        out.append(
            Fixture(
                path=_shown(data),
                target=target,
                cli=str(meta.get("cli") or target),
                version=version,
                scenario=scenario,
                command=command
                if isinstance(command, str)
                else f"corral record {adapter} {scenario}",
            )
        )
    return out
