"""Qwen Code's session store: one JSON-lines chat per session, grouped by project.

Where: ``~/.qwen/projects/<cwd>/chats/<session id>.jsonl`` (0.15.10), the project directory
being the cwd with every character but ASCII letters and digits turned into ``-`` (as Claude
Code does). Each line is a record with ``uuid``/``parentUuid``, ``sessionId``, ``cwd`` and a
``type``: ``user`` and ``assistant`` (a Gemini-style ``message`` with ``parts``: ``text``,
``thought``, ``functionCall``), ``tool_result`` (``functionResponse`` parts plus
``toolCallResult.status``) and ``system`` bookkeeping (telemetry, attribution snapshots).
``--continue`` appends to the same file, so the lineage head of a directory is its newest chat.
There is no turn-end record: an assistant record without a function call ends the turn.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..events import (
    Event,
    ReasoningComplete,
    TextComplete,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolResult,
    TurnCompleted,
)
from ..protocols._claude_tools import tool_cmd, tool_file, tool_kind, tool_title
from . import _store_common as common
from ._handoff import ExternalSession
from ._store_common import FileStat
from ._store_tail import JsonlTail, StoreParser

AGENT = "qwen"
HEAD_BUDGET = 64 * 1024
_SANITIZE = re.compile(r"[^A-Za-z0-9]")


def qwen_dir(env: Mapping[str, str] | None = None) -> Path:
    return common.home(env) / ".qwen"


def store_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    return [qwen_dir(env) / "projects"]


def project_chats(cwd: str, env: Mapping[str, str] | None = None) -> Path:
    return qwen_dir(env) / "projects" / _SANITIZE.sub("-", cwd) / "chats"


def _accept(name: str) -> bool:
    return name.endswith(".jsonl")


def files(env: Mapping[str, str] | None = None, since: float | None = None) -> Iterator[FileStat]:
    for stat in common.walk(store_roots(env)[0], accept=_accept, since=since, max_depth=2):
        if os.path.basename(os.path.dirname(stat.path)) == "chats":
            yield stat


def _parts(record: dict[str, Any]) -> list[Any]:
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return parts if isinstance(parts, list) else []


def _user_text(record: dict[str, Any]) -> str | None:
    if record.get("type") != "user":
        return None
    text = "".join(
        p["text"]
        for p in _parts(record)
        if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
    )
    return text if text.strip() else None


def header(stat: FileStat) -> ExternalSession | None:
    sid = os.path.basename(stat.path).removesuffix(".jsonl")
    cwd: str | None = None
    title: str | None = None
    for record in common.records(common.head_lines(stat.path, HEAD_BUDGET)):
        if record.get("sessionId") not in (None, sid):
            continue
        cwd = cwd or common.as_str(record.get("cwd"))
        title = title or common.one_line(_user_text(record))
        if cwd and title:
            break
    return common.entry(AGENT, stat, sid, cwd, title, missing="no cwd in the chat's first lines")


def scan(
    env: Mapping[str, str] | None = None, since: float | None = None
) -> Iterator[ExternalSession]:
    return common.headers(files(env, since), header)


def latest_sid_for_cwd(cwd: str, env: Mapping[str, str] | None = None) -> str | None:
    chats = common.walk(project_chats(cwd, env), accept=_accept, max_depth=0)
    for stat in common.newest_first(chats):
        entry = header(stat)
        if entry is not None and common.same_dir(entry.cwd, cwd):
            return entry.sid
    return None


def transcript_path(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> Path | None:
    """``sid``'s chat when its header records ``cwd`` (never another directory's)."""
    if not common.safe_sid(sid):
        return None
    path = project_chats(cwd, env) / f"{sid}.jsonl"
    stat = common.stat_of(path)
    entry = header(stat) if stat is not None else None
    return path if entry is not None and common.same_dir(entry.cwd, cwd) else None


def records_of(path: Path) -> Iterator[dict[str, Any]]:
    return common.jsonl_records(path)


def _response_text(response: object) -> str:
    if isinstance(response, dict):
        for key in ("output", "error", "content"):
            value = response.get(key)
            if isinstance(value, str):
                return value
    return ""


class Parser(StoreParser):
    """Qwen Code chat records → corral events."""

    def __init__(self) -> None:
        self._tools: dict[str, str] = {}

    def _feed(self, record: Any) -> list[Event]:
        if not isinstance(record, dict):
            return []
        kind = record.get("type")
        if kind == "user":
            text = _user_text(record)
            return [common.prompt_event(text)] if text else []
        if kind == "assistant":
            return self._assistant(record)
        if kind == "tool_result":
            return self._results(record)
        return []

    def _assistant(self, record: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        calls = 0
        for part in _parts(record):
            if not isinstance(part, dict):
                continue
            text = part.get("text")
            if isinstance(text, str) and text:
                out.append(
                    ReasoningComplete(text=text) if part.get("thought") else TextComplete(text=text)
                )
            call = part.get("functionCall")
            if isinstance(call, dict):
                call_id, name = common.as_str(call.get("id")), common.as_str(call.get("name"))
                if call_id is None or name is None:
                    continue
                calls += 1
                self._tools[call_id] = name
                args = call.get("args")
                out.append(
                    ToolCallStarted(
                        call_id=call_id,
                        name=name,
                        kind=tool_kind(name, args),
                        title=tool_title(name, args),
                        input=args,
                        file=tool_file(args),
                        cmd=tool_cmd(args),
                    )
                )
        if calls == 0 and out:
            out.append(TurnCompleted())
        return out

    def _results(self, record: dict[str, Any]) -> list[Event]:
        meta = record.get("toolCallResult")
        failed = isinstance(meta, dict) and meta.get("status") in ("error", "cancelled")
        out: list[Event] = []
        for part in _parts(record):
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if not isinstance(response, dict):
                continue
            call_id = common.as_str(response.get("id"))
            if call_id is None:
                continue
            name = self._tools.get(call_id)
            output = _response_text(response.get("response"))
            if failed:
                out.append(ToolCallFailed(call_id=call_id, error=output, name=name))
            else:
                result = ToolResult(output=output)
                out.append(ToolCallCompleted(call_id=call_id, result=result, name=name))
        return out


def mirror(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> JsonlTail:
    return JsonlTail(lambda: transcript_path(cwd, sid, env), Parser)
