"""Gemini CLI's session store: one JSON-lines operation log per chat, grouped by project.

Where: ``$GEMINI_CLI_HOME`` (else ``HOME``) ``/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl``
(0.61.0). ``<project>`` is a short name (``projects.json`` maps cwd → name) or, in older
versions, the SHA-256 of the cwd; its ``.project_root`` file holds the cwd. The log's lines are:
a header (``sessionId``, ``projectHash``, ``startTime``, ``kind``: ``main``/``subagent``), message
records upserted by ``id`` (``type`` ``user``/``gemini``/``info``/``error``; a ``gemini``
message is first written bare and rewritten with its ``toolCalls``, each carrying its
``result`` and ``status``), and ``{"$set": {...}}`` updates (``lastUpdated``; on resume the
whole ``messages`` list again). ``--resume`` appends to the same log; ids repeat, so the parser
keeps what it reported per message id. A ``gemini`` message without tool calls ends the turn.
"""

from __future__ import annotations

import functools
import hashlib
import os
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

AGENT = "gemini"
HEAD_BUDGET = 128 * 1024
_CONTEXT = "<session_context>"
MAX_PROJECTS = 10_000


def gemini_dir(env: Mapping[str, str] | None = None) -> Path:
    return common.env_dir(env, "GEMINI_CLI_HOME", common.home(env)) / ".gemini"


def store_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    return [gemini_dir(env) / "tmp"]


def _accept(name: str) -> bool:
    return name.startswith("session-") and name.endswith((".jsonl", ".json"))


def files(env: Mapping[str, str] | None = None, since: float | None = None) -> Iterator[FileStat]:
    for stat in common.walk(store_roots(env)[0], accept=_accept, since=since, max_depth=2):
        if os.path.basename(os.path.dirname(stat.path)) == "chats":
            yield stat


def _project_root(chat: str | Path) -> str | None:
    """The cwd recorded next to a chats directory (``<project>/.project_root``)."""
    return _root_of(os.path.dirname(os.path.dirname(chat)))


@functools.lru_cache(maxsize=4096)
def _root_of(project: str) -> str | None:
    # A project's root never changes once written; the cache saves one open per chat file.
    try:
        with open(os.path.join(project, ".project_root"), "rb") as handle:
            text = handle.read(4096).decode("utf-8", errors="replace").strip()
    except OSError:
        return None
    return text or None


def project_dirs(cwd: str, env: Mapping[str, str] | None = None) -> list[Path]:
    """The project directories that may hold ``cwd``'s chats (name from projects.json, hash)."""
    base = gemini_dir(env)
    names = [hashlib.sha256(cwd.encode("utf-8", "replace")).hexdigest()]
    mapping = common.read_json(base / "projects.json", 1 << 20)
    projects = mapping.get("projects") if isinstance(mapping, dict) else None
    if isinstance(projects, dict) and isinstance(projects.get(cwd), str):
        names.insert(0, projects[cwd])
    found = [base / "tmp" / n for n in names if common.safe_sid(n)]
    if not any((d / "chats").is_dir() for d in found):
        # No map (or a stale one): the project whose .project_root names cwd.
        try:
            entries = list(os.scandir(base / "tmp"))[:MAX_PROJECTS]
        except OSError:
            entries = []
        for entry in entries:
            if entry.is_dir() and common.same_dir(
                _project_root(Path(entry.path) / "chats" / "x"), cwd
            ):
                found.append(Path(entry.path))
    return found


def _user_text(message: dict[str, Any]) -> str | None:
    if message.get("type") != "user":
        return None
    text = _texts(message)
    if not text.strip() or text.lstrip().startswith(_CONTEXT):
        return None
    return text


def _texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def header(stat: FileStat) -> ExternalSession | None:
    sid: str | None = None
    title: str | None = None
    kind: object = "main"
    lines = common.head_lines(stat.path, HEAD_BUDGET)
    for record in common.records(lines, worth=(b"sessionId", b'"user"')):
        if sid is None and "sessionId" in record and "type" not in record:
            sid, kind = common.as_str(record.get("sessionId")), record.get("kind", "main")
        elif "type" in record and "id" in record:
            title = title or common.one_line(_user_text(record))
        if sid and title:
            break
    if sid is None or kind != "main":
        return None
    cwd = _project_root(stat.path)
    return common.entry(AGENT, stat, sid, cwd, title, missing="no .project_root next to the chats")


def scan(
    env: Mapping[str, str] | None = None, since: float | None = None
) -> Iterator[ExternalSession]:
    return common.headers(files(env, since), header)


def _chats(cwd: str, env: Mapping[str, str] | None) -> list[FileStat]:
    found: list[FileStat] = []
    for project in project_dirs(cwd, env):
        found += common.walk(project / "chats", accept=_accept, max_depth=0)
    return common.newest_first(iter(found))


def latest_sid_for_cwd(cwd: str, env: Mapping[str, str] | None = None) -> str | None:
    for stat in _chats(cwd, env):
        entry = header(stat)
        if entry is not None and common.same_dir(entry.cwd, cwd):
            return entry.sid
    return None


def transcript_path(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> Path | None:
    """The log of ``sid``: of several (a resume starts a stub), the biggest."""
    if not common.safe_sid(sid):
        return None
    found = []
    for stat in _chats(cwd, env):
        if sid[:8] in Path(stat.path).name:
            entry = header(stat)
            if entry is not None and entry.sid == sid and common.same_dir(entry.cwd, cwd):
                found.append(stat)
    return Path(max(found, key=lambda s: s.size).path) if found else None


def records_of(path: Path) -> Iterator[dict[str, Any]]:
    return common.jsonl_records(path)


class Parser(StoreParser):
    """Gemini CLI chat-log records → corral events, once per message id and tool call."""

    def __init__(self) -> None:
        self._said: set[str] = set()
        self._calls: dict[str, str] = {}  # call id → the last state reported
        self._ended: set[str] = set()

    def _feed(self, record: Any) -> list[Event]:
        if not isinstance(record, dict):
            return []
        update = record.get("$set")
        if isinstance(update, dict):
            messages = update.get("messages")
            out: list[Event] = []
            for message in messages if isinstance(messages, list) else ():
                out += self._message(message)
            return out
        return self._message(record)

    def _message(self, message: Any) -> list[Event]:
        if not isinstance(message, dict):
            return []
        mid = common.as_str(message.get("id"))
        kind = message.get("type")
        if mid is None or kind not in ("user", "gemini"):
            return []
        if kind == "user":
            if mid in self._said:
                return []
            self._said.add(mid)
            text = _user_text(message)
            return [common.prompt_event(text)] if text else []
        out: list[Event] = []
        if mid not in self._said:
            thoughts = message.get("thoughts")
            for thought in thoughts if isinstance(thoughts, list) else ():
                if isinstance(thought, dict) and isinstance(thought.get("description"), str):
                    out.append(ReasoningComplete(text=thought["description"], message_id=mid))
            text = _texts(message)
            if text:
                out.append(TextComplete(text=text, message_id=mid))
            if out:
                self._said.add(mid)
        calls = message.get("toolCalls")
        calls = calls if isinstance(calls, list) else []
        for call in calls:
            out += self._call(call)
        if not calls and mid in self._said and mid not in self._ended:
            self._ended.add(mid)
            out.append(TurnCompleted())
        return out

    def _call(self, call: Any) -> list[Event]:
        if not isinstance(call, dict):
            return []
        call_id, name = common.as_str(call.get("id")), common.as_str(call.get("name"))
        if call_id is None or name is None:
            return []
        out: list[Event] = []
        if call_id not in self._calls:
            self._calls[call_id] = "started"
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
        status = call.get("status")
        if status in ("success", "error", "cancelled") and self._calls[call_id] == "started":
            self._calls[call_id] = "done"
            output = _result_text(call.get("result"))
            if status == "success":
                out.append(
                    ToolCallCompleted(call_id=call_id, result=ToolResult(output=output), name=name)
                )
            else:
                out.append(ToolCallFailed(call_id=call_id, error=output or str(status), name=name))
        return out


def _result_text(result: object) -> str:
    for part in result if isinstance(result, list) else ():
        response = part.get("functionResponse") if isinstance(part, dict) else None
        body = response.get("response") if isinstance(response, dict) else None
        if isinstance(body, dict):
            for key in ("output", "error"):
                if isinstance(body.get(key), str):
                    return str(body[key])
    return ""


def mirror(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> JsonlTail:
    return JsonlTail(lambda: transcript_path(cwd, sid, env), Parser)
