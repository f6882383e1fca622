"""Codex's session store: one JSON-lines "rollout" per thread, filed by date.

Where: ``$CODEX_HOME`` (else ``~/.codex``) ``/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``
(and ``archived_sessions/`` for archived threads). The first line is ``session_meta`` (thread
``id``, ``cwd``, ``cli_version``, the base instructions: tens of KB); then ``response_item``
records (the model conversation: ``message``, ``reasoning``, ``function_call`` and its
``function_call_output``, ``custom_tool_call``…), ``event_msg`` records (``task_started``,
``task_complete`` with ``last_agent_message``, ``turn_aborted``, token counts) and context records.
``codex exec resume`` / ``codex resume`` append to the same rollout (0.171.0), so a thread id is
stable; the lineage head of a directory is the newest rollout recording that cwd.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .._process._decode import BadJson, loads
from ..events import (
    Event,
    ReasoningComplete,
    StopReason,
    TextComplete,
    ToolCallCompleted,
    ToolCallStarted,
    ToolKind,
    ToolResult,
    TurnCompleted,
)
from ..protocols._codex_vocab import command_kind
from . import _store_common as common
from ._handoff import ExternalSession
from ._store_common import FileStat
from ._store_tail import JsonlTail, StoreParser

AGENT = "codex"
HEAD_BUDGET = 512 * 1024
"""``session_meta`` embeds the base instructions (and AGENTS.md): the first line alone is big."""
_THREAD_ID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$")
_EXIT = re.compile(r"(?:Process exited with code|Exit code:?)\s+(-?\d+)")
#: Harness-written user messages (context, instructions), not what the user typed.
#: Every line a header needs contains one of these (the others are not decoded).
_HEADER_WORTH = (b"session_meta", b"turn_context", b'"user"')
_CONTEXT_PREFIXES = ("<environment_context", "<user_instructions", "<permissions", "# AGENTS.md")


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    return common.env_dir(env, "CODEX_HOME", common.home(env) / ".codex")


def store_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    base = codex_home(env)
    return [base / "sessions", base / "archived_sessions"]


def _accept(name: str) -> bool:
    return name.startswith("rollout-") and name.endswith(".jsonl")


def files(env: Mapping[str, str] | None = None, since: float | None = None) -> Iterator[FileStat]:
    for root in store_roots(env):
        yield from common.walk(root, accept=_accept, since=since, max_depth=3)


def _user_text(payload: dict[str, Any]) -> str | None:
    """What the user typed, from a ``response_item`` message (harness context excluded)."""
    if payload.get("type") != "message" or payload.get("role") != "user":
        return None
    text = common.text_parts(payload.get("content"), ("input_text", "text"))
    if not text.strip() or text.lstrip().startswith(_CONTEXT_PREFIXES):
        return None
    return text


def header(stat: FileStat) -> ExternalSession | None:
    match = _THREAD_ID.search(stat.path)
    sid = match.group(1) if match else None
    cwd: str | None = None
    title: str | None = None
    lines = common.head_lines(stat.path, HEAD_BUDGET)
    for n, record in enumerate(common.records(lines, worth=_HEADER_WORTH)):
        payload = record.get("payload")
        if not isinstance(payload, dict):
            continue
        if record.get("type") == "session_meta" and n == 0:
            sid = common.as_str(payload.get("id")) or sid
            cwd = common.as_str(payload.get("cwd"))
        elif record.get("type") == "turn_context" and cwd is None:
            cwd = common.as_str(payload.get("cwd"))
        elif record.get("type") == "response_item" and title is None:
            title = common.one_line(_user_text(payload))
        if cwd and title:
            break
    if sid is None:
        return None
    return common.entry(
        AGENT,
        stat,
        sid,
        cwd,
        title,
        missing="no session_meta with a cwd in the rollout's first lines",
    )


def scan(
    env: Mapping[str, str] | None = None, since: float | None = None
) -> Iterator[ExternalSession]:
    return common.headers(files(env, since), header)


def _same_dir(a: str | None, b: str) -> bool:
    return a is not None and os.path.realpath(a) == os.path.realpath(b)


def latest_sid_for_cwd(cwd: str, env: Mapping[str, str] | None = None) -> str | None:
    """The thread of the newest rollout whose ``session_meta`` names ``cwd``."""
    for stat in sorted(files(env), key=lambda s: s.mtime, reverse=True):
        entry = header(stat)
        if entry is not None and _same_dir(entry.cwd, cwd):
            return entry.sid
    return None


def transcript_path(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> Path | None:
    """The rollout of thread ``sid`` when it records ``cwd`` (never another directory's)."""
    suffix = f"-{sid}.jsonl"
    for stat in common.newest_first(s for s in files(env) if s.path.endswith(suffix)):
        entry = header(stat)
        if entry is not None and entry.sid == sid and _same_dir(entry.cwd, cwd):
            return Path(stat.path)
    return None


def _arguments(raw: object) -> Any:
    if isinstance(raw, str):
        try:
            # Bytes, not str: ``loads`` of a str with a lone surrogate raises UnicodeEncodeError.
            return loads(raw.encode("utf-8", "replace"))
        except BadJson:
            return raw
    return raw


def _output_text(raw: object) -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict):
        content = raw.get("content")
        if isinstance(content, str):
            return content
        return common.text_parts(content, ("input_text", "output_text", "text"))
    return common.text_parts(raw, ("input_text", "output_text", "text"))


class Parser(StoreParser):
    """Rollout records → corral events."""

    def __init__(self) -> None:
        self._tools: dict[str, str] = {}

    def _feed(self, record: Any) -> list[Event]:
        if not isinstance(record, dict):
            return []
        payload = record.get("payload")
        if not isinstance(payload, dict):
            return []
        if record.get("type") == "response_item":
            return self._item(payload)
        if record.get("type") == "event_msg":
            kind = payload.get("type")
            if kind == "task_complete":
                text = common.as_str(payload.get("last_agent_message"))
                turn = common.as_str(payload.get("turn_id"))
                return [
                    TurnCompleted(stop_reason=StopReason.END_TURN, turn_id=turn, result_text=text)
                ]
            if kind == "turn_aborted":
                return [TurnCompleted(stop_reason=StopReason.CANCELLED)]
        return []

    def _item(self, item: dict[str, Any]) -> list[Event]:
        kind = item.get("type")
        item_id = common.as_str(item.get("id"))
        if kind == "message":
            if item.get("role") == "assistant":
                text = common.text_parts(item.get("content"), ("output_text", "text"))
                return [TextComplete(text=text, message_id=item_id)] if text else []
            user = _user_text(item)
            return [common.prompt_event(user)] if user else []
        if kind == "reasoning":
            text = "\n".join(
                p["text"]
                for p in item.get("summary") or ()
                if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
            return [ReasoningComplete(text=text, message_id=item_id)] if text else []
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            return self._call(item)
        if kind in ("function_call_output", "custom_tool_call_output"):
            call_id = common.as_str(item.get("call_id"))
            if call_id is None:
                return []
            output = _output_text(item.get("output"))
            code = _EXIT.search(output)
            result = ToolResult(output=output, exit_code=int(code.group(1)) if code else None)
            return [
                ToolCallCompleted(call_id=call_id, result=result, name=self._tools.get(call_id))
            ]
        return []

    def _call(self, item: dict[str, Any]) -> list[Event]:
        call_id = common.as_str(item.get("call_id")) or common.as_str(item.get("id"))
        name = common.as_str(item.get("name")) or str(item.get("type"))
        if call_id is None:
            return []
        self._tools[call_id] = name
        tool_input = _arguments(item.get("arguments", item.get("input", item.get("action"))))
        cmd = None
        if isinstance(tool_input, dict):
            raw = tool_input.get("cmd", tool_input.get("command"))
            cmd = " ".join(map(str, raw)) if isinstance(raw, list) else common.as_str(raw)
        kind = (
            command_kind(cmd) if cmd else ToolKind.EDIT if name == "apply_patch" else ToolKind.OTHER
        )
        title = f"{name}: {cmd}" if cmd else name
        return [
            ToolCallStarted(
                call_id=call_id, name=name, kind=kind, title=title, input=tool_input, cmd=cmd
            )
        ]


def mirror(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> JsonlTail:
    """A live tail of thread ``sid``'s rollout (waits for it when it does not exist yet)."""
    return JsonlTail(lambda: transcript_path(cwd, sid, env), Parser)


def records_of(path: Path) -> Iterator[dict[str, Any]]:
    """The records of one transcript, in order (what the mirror feeds the parser)."""
    return common.jsonl_records(path)
