"""Claude Code's session store: one JSON-lines transcript per session, grouped by project.

Where: ``$CLAUDE_CONFIG_DIR`` (else ``~/.claude``) ``/projects/<cwd>/<session id>.jsonl``, the
project directory being the cwd with every character but ASCII letters and digits turned into
``-``. Each line is one record: ``user`` / ``assistant`` (an Anthropic message under
``message``, with ``sessionId``, ``cwd``, ``uuid``/``parentUuid``), and bookkeeping records
(``queue-operation``, ``attachment``, ``last-prompt``, ``mode``, ``summary``…) that carry no
conversation. ``--continue``/``--resume`` append to the same file in 2.1.197, so the lineage head
of a directory is its newest transcript.
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
    StopReason,
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

AGENT = "claude-code"
HEAD_BUDGET = 96 * 1024
_SANITIZE = re.compile(r"[^A-Za-z0-9]")
_STOPS = {
    "end_turn": StopReason.END_TURN,
    "stop_sequence": StopReason.END_TURN,
    "max_tokens": StopReason.MAX_TOKENS,
    "refusal": StopReason.REFUSAL,
}


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    return common.env_dir(env, "CLAUDE_CONFIG_DIR", common.home(env) / ".claude")


def store_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    return [config_dir(env) / "projects"]


def project_dir(cwd: str, env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / "projects" / _SANITIZE.sub("-", cwd)


def _accept(name: str) -> bool:
    return name.endswith(".jsonl") and not name.startswith("agent-")


def files(env: Mapping[str, str] | None = None, since: float | None = None) -> Iterator[FileStat]:
    """Transcripts (``projects/*/*.jsonl``) changed after ``since``; stat only."""
    for root in store_roots(env):
        yield from common.walk(root, accept=_accept, since=since, max_depth=1)


def _prompt_text(record: dict[str, Any]) -> str | None:
    """The user's own text in a ``user`` record (not a tool result, not a meta record)."""
    if record.get("type") != "user" or record.get("isMeta") or record.get("isSidechain"):
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    text = common.text_parts(message.get("content"))
    return text if text.strip() else None


def header(stat: FileStat) -> ExternalSession | None:
    """The session in one transcript, from its first lines only."""
    sid = os.path.basename(stat.path).removesuffix(".jsonl")
    cwd: str | None = None
    title: str | None = None
    lines = common.head_lines(stat.path, HEAD_BUDGET)
    for record in common.records(lines, worth=(b'"cwd"', b'"user"')):
        if record.get("sessionId") not in (None, sid):
            continue
        cwd = cwd or common.as_str(record.get("cwd"))
        if title is None:
            title = common.one_line(_prompt_text(record))
        if cwd and title:
            break
    return common.entry(
        AGENT, stat, sid, cwd, title, missing="no cwd in the transcript's first lines"
    )


def scan(
    env: Mapping[str, str] | None = None, since: float | None = None
) -> Iterator[ExternalSession]:
    return common.headers(files(env, since), header)


def _same_dir(a: str | None, b: str) -> bool:
    return a is not None and os.path.realpath(a) == os.path.realpath(b)


def latest_sid_for_cwd(cwd: str, env: Mapping[str, str] | None = None) -> str | None:
    """The newest transcript whose header names ``cwd``."""
    found = [s for s in common.walk(project_dir(cwd, env), accept=_accept, max_depth=0)]
    for stat in sorted(found, key=lambda s: s.mtime, reverse=True):
        entry = header(stat)
        if entry is not None and _same_dir(entry.cwd, cwd):
            return entry.sid
    return None


def transcript_path(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> Path | None:
    """``sid``'s transcript when its header records ``cwd`` (the directory name is lossy:
    ``/a-b`` and ``/a/b`` share one), never another directory's."""
    if not common.safe_sid(sid):
        return None
    path = project_dir(cwd, env) / f"{sid}.jsonl"
    stat = common.stat_of(path)
    entry = header(stat) if stat is not None else None
    return path if entry is not None and common.same_dir(entry.cwd, cwd) else None


def _tool_output(content: object) -> str:
    if isinstance(content, str):
        return content
    return common.text_parts(content)


class Parser(StoreParser):
    """Claude Code transcript records → corral events (tool names remembered for results)."""

    def __init__(self) -> None:
        self._tools: dict[str, str] = {}

    def _feed(self, record: Any) -> list[Event]:
        if not isinstance(record, dict) or record.get("isSidechain"):
            return []
        message = record.get("message")
        if not isinstance(message, dict):
            return []
        kind = record.get("type")
        if kind == "user" and not record.get("isMeta"):
            return self._user(message)
        if kind == "assistant":
            return self._assistant(message)
        return []

    def _user(self, message: dict[str, Any]) -> list[Event]:
        content = message.get("content")
        if isinstance(content, str):
            return [common.prompt_event(content)] if content.strip() else []
        out: list[Event] = []
        text = common.text_parts(content)
        if text.strip():
            out.append(common.prompt_event(text))
        for part in content if isinstance(content, list) else ():
            if not isinstance(part, dict) or part.get("type") != "tool_result":
                continue
            call_id = common.as_str(part.get("tool_use_id"))
            if call_id is None:
                continue
            name = self._tools.get(call_id)
            result = ToolResult(output=_tool_output(part.get("content")))
            if part.get("is_error") is True:
                out.append(ToolCallFailed(call_id=call_id, error=result.output, name=name))
            else:
                out.append(ToolCallCompleted(call_id=call_id, result=result, name=name))
        return out

    def _assistant(self, message: dict[str, Any]) -> list[Event]:
        message_id = common.as_str(message.get("id"))
        content = message.get("content")
        out: list[Event] = []
        for part in content if isinstance(content, list) else ():
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str) and part["text"]:
                out.append(TextComplete(text=part["text"], message_id=message_id))
            elif kind == "thinking" and isinstance(part.get("thinking"), str) and part["thinking"]:
                out.append(ReasoningComplete(text=part["thinking"], message_id=message_id))
            elif kind == "tool_use":
                call_id, name = common.as_str(part.get("id")), common.as_str(part.get("name"))
                if call_id is None or name is None:
                    continue
                self._tools[call_id] = name
                tool_input = part.get("input")
                out.append(
                    ToolCallStarted(
                        call_id=call_id,
                        name=name,
                        kind=tool_kind(name, tool_input),
                        title=tool_title(name, tool_input),
                        input=tool_input,
                        file=tool_file(tool_input),
                        cmd=tool_cmd(tool_input),
                    )
                )
        reason = message.get("stop_reason")
        stop = _STOPS.get(reason) if isinstance(reason, str) else None
        if stop is not None:
            out.append(TurnCompleted(stop_reason=stop))
        return out


def mirror(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> JsonlTail:
    """A live tail of ``sid``'s transcript (waits for the file when it does not exist yet)."""
    return JsonlTail(lambda: transcript_path(cwd, sid, env), Parser)


def records_of(path: Path) -> Iterator[dict[str, Any]]:
    """The records of one transcript, in order (what the mirror feeds the parser)."""
    return common.jsonl_records(path)
