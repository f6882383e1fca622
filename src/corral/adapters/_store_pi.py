"""Pi's session store: one JSON-lines session tree per session, grouped by cwd.

Where: ``$PI_CODING_AGENT_DIR`` (else ``~/.pi/agent``) ``/sessions/--<cwd>--/<time>_<id>.jsonl``,
the directory being the cwd with ``/`` turned into ``-`` between ``--`` marks (0.73.1). The
first line is the ``session`` header (``id``, ``cwd``, ``version``); then entries with ``id``
and ``parentId`` (a tree: a branch is a new child of an older entry): ``message`` (``role``
``user``/``assistant``/``toolResult``; assistant content parts ``text``, ``thinking``,
``toolCall``; ``stopReason``), ``model_change``, ``thinking_level_change``, ``compaction``…
``--continue`` appends to the newest session file of the cwd; ``--session`` takes an id.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..events import (
    Event,
    ReasoningComplete,
    StopReason,
    TextComplete,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolResult,
    TurnCompleted,
)
from ..protocols._opencode_tools import command_of, file_of, tool_kind
from . import _store_common as common
from ._handoff import ExternalSession
from ._store_common import FileStat
from ._store_tail import JsonlTail, StoreParser

AGENT = "pi"
HEAD_BUDGET = 64 * 1024
_STOPS = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_TOKENS,
    "error": StopReason.ERROR,
    "aborted": StopReason.CANCELLED,
}


def agent_dir(env: Mapping[str, str] | None = None) -> Path:
    return common.env_dir(env, "PI_CODING_AGENT_DIR", common.home(env) / ".pi" / "agent")


def store_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    return [agent_dir(env) / "sessions"]


def cwd_dir(cwd: str, env: Mapping[str, str] | None = None) -> Path:
    safe = cwd.lstrip("/").replace("/", "-").replace("\\", "-").replace(":", "-")
    return agent_dir(env) / "sessions" / f"--{safe}--"


def _accept(name: str) -> bool:
    return name.endswith(".jsonl")


def files(env: Mapping[str, str] | None = None, since: float | None = None) -> Iterator[FileStat]:
    for root in store_roots(env):
        yield from common.walk(root, accept=_accept, since=since, max_depth=1)


def _message(record: dict[str, Any]) -> dict[str, Any] | None:
    message = record.get("message") if record.get("type") == "message" else None
    return message if isinstance(message, dict) else None


def _user_text(record: dict[str, Any]) -> str | None:
    message = _message(record)
    if message is None or message.get("role") != "user":
        return None
    text = common.text_parts(message.get("content"))
    return text if text.strip() else None


def header(stat: FileStat) -> ExternalSession | None:
    sid: str | None = None
    cwd: str | None = None
    title: str | None = None
    for record in common.records(common.head_lines(stat.path, HEAD_BUDGET)):
        if sid is None and record.get("type") == "session":
            sid = common.as_str(record.get("id"))
            cwd = common.as_str(record.get("cwd"))
        title = title or common.one_line(_user_text(record))
        if title:
            break
    if sid is None:
        stem = Path(stat.path).stem
        sid = stem.split("_", 1)[1] if "_" in stem else stem
    return common.entry(AGENT, stat, sid, cwd, title, missing="no session header with a cwd")


def scan(
    env: Mapping[str, str] | None = None, since: float | None = None
) -> Iterator[ExternalSession]:
    return common.headers(files(env, since), header)


def _in_cwd(cwd: str, env: Mapping[str, str] | None) -> list[FileStat]:
    return common.newest_first(common.walk(cwd_dir(cwd, env), accept=_accept, max_depth=0))


def latest_sid_for_cwd(cwd: str, env: Mapping[str, str] | None = None) -> str | None:
    for stat in _in_cwd(cwd, env):
        entry = header(stat)
        if entry is not None and common.same_dir(entry.cwd, cwd):
            return entry.sid
    return None


def transcript_path(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> Path | None:
    if not common.safe_sid(sid):
        return None
    for stat in _in_cwd(cwd, env):
        if Path(stat.path).stem.endswith(f"_{sid}"):
            entry = header(stat)
            if entry is not None and entry.sid == sid and common.same_dir(entry.cwd, cwd):
                return Path(stat.path)
    return None


def records_of(path: Path) -> Iterator[dict[str, Any]]:
    return common.jsonl_records(path)


class Parser(StoreParser):
    """Pi session entries → corral events."""

    def __init__(self) -> None:
        self._tools: dict[str, str] = {}

    def _feed(self, record: Any) -> list[Event]:
        if not isinstance(record, dict):
            return []
        message = _message(record)
        if message is None:
            return []
        role = message.get("role")
        if role == "user":
            text = _user_text(record)
            return [common.prompt_event(text)] if text else []
        if role == "assistant":
            return self._assistant(message)
        if role == "toolResult":
            call_id = common.as_str(message.get("toolCallId"))
            if call_id is None:
                return []
            output = common.text_parts(message.get("content"))
            name = common.as_str(message.get("toolName")) or self._tools.get(call_id)
            if message.get("isError") is True:
                return [ToolCallFailed(call_id=call_id, error=output, name=name)]
            result = ToolResult(output=output)
            return [ToolCallCompleted(call_id=call_id, result=result, name=name)]
        return []

    def _assistant(self, message: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        content = message.get("content")
        for part in content if isinstance(content, list) else ():
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str) and part["text"]:
                out.append(TextComplete(text=part["text"]))
            elif kind == "thinking" and isinstance(part.get("thinking"), str) and part["thinking"]:
                out.append(ReasoningComplete(text=part["thinking"]))
            elif kind == "toolCall":
                call_id, name = common.as_str(part.get("id")), common.as_str(part.get("name"))
                if call_id is None or name is None:
                    continue
                self._tools[call_id] = name
                args = part.get("arguments")
                cmd = command_of(args)
                path = file_of(args)
                title = f"{name}: {cmd or path}" if cmd or path else name
                out.append(
                    ToolCallStarted(
                        call_id=call_id,
                        name=name,
                        kind=tool_kind(name, args),
                        title=title,
                        input=args,
                        file=path,
                        cmd=cmd,
                    )
                )
        reason = message.get("stopReason")
        stop = _STOPS.get(reason) if isinstance(reason, str) else None
        if stop is not None:
            error = common.as_str(message.get("errorMessage")) if stop is StopReason.ERROR else None
            out.append(TurnCompleted(stop_reason=stop, error=error))
        return out


def mirror(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> JsonlTail:
    return JsonlTail(lambda: transcript_path(cwd, sid, env), Parser)
