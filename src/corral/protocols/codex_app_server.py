"""Codex ``app-server`` (JSON-RPC over stdio, no ``"jsonrpc"`` member) → corral events.

:class:`AppServerParser` is synchronous and does no I/O. Feed it every message the server sent —
notifications, server→client requests, responses (ignored) — as decoded JSON objects::

    parser.feed({"method": "item/agentMessage/delta", "params": {...}})   -> [TextDelta(...)]
    parser.feed({"id": 0, "method": "item/commandExecution/requestApproval", ...})
                                                                        -> [ApprovalRequested(...)]

Items (``item/started`` → deltas → ``item/completed``) become tool, text and reasoning events;
``turn/completed`` ends every turn with :class:`TurnCompleted` (``completed`` → end_turn,
``interrupted`` → cancelled, ``failed`` → error with the server's message). A method or item type
the parser does not know becomes :class:`UnknownEvent`; bookkeeping notifications that carry nothing
a user would see (rate limits, read state, thread status) are dropped.

Approval answers are built by :func:`approval_result` (also pure), from the request's method and the
decisions the server offered. The policy/sandbox helpers accept the current kebab-case spellings and
the older camelCase ones (``unlessTrusted``, ``workspaceWrite``…).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..events import (
    ErrorEvent,
    Event,
    PlanEntry,
    PlanUpdated,
    ReasoningComplete,
    ReasoningDelta,
    StatusChanged,
    StopReason,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallUpdated,
    ToolResult,
    TurnCompleted,
    UnknownEvent,
    Usage,
    WarningEvent,
)
from ..events._fields import _Clean, mark_part
from ..events._text import SurrogateJoiner
from ._codex_items import TOOL_ITEMS, file_diff, mcp_output, tool_start
from ._codex_requests import (
    APPROVAL_METHODS,
    approval_result,
    question_result,
    request_events,
)
from ._codex_vocab import USER_INPUT_REQUEST, error_code
from ._total import mapping, sequence, total

__all__ = [
    "APPROVAL_METHODS",
    "USER_INPUT_REQUEST",
    "AppServerParser",
    "approval_result",
    "file_diff",
    "question_result",
]

_SILENT = frozenset(
    {
        "thread/started",
        "thread/status/changed",
        "thread/readState/changed",
        "thread/name/updated",
        "account/rateLimits/updated",
        "remoteControl/status/changed",
        "serverRequest/resolved",
        "mcpServer/startupStatus/updated",
        "item/reasoning/summaryPartAdded",
        "item/plan/delta",
        "turn/diff/updated",
        "skills/changed",
        "thread/goal/updated",
        "thread/goal/cleared",
    }
)
"""Notifications with nothing to show: state the driver tracks itself or the UI does not need."""

_PLAN_STATUS = {"inProgress": "in_progress", "pending": "pending", "completed": "completed"}


class AppServerParser:
    """Turns one app-server session's messages into events; keeps only per-item bookkeeping."""

    def __init__(self) -> None:
        self.thread_id: str | None = None
        self.turn_id: str | None = None
        """The turn in progress (set by ``turn/started``, cleared by ``turn/completed``)."""
        self.model: str | None = None
        self._items: dict[str, dict[str, Any]] = {}
        self._streamed: set[str] = set()
        self._output: dict[str, list[str]] = {}
        self._last_text: str | None = None
        self._open_tools: list[str] = []
        self._children: dict[str, str] = {}
        self._joiner = SurrogateJoiner()
        """Sub-agent thread id → the call id of the ``collabAgentToolCall`` that spawned it."""

    # ── entry point ──
    @total
    def feed(self, msg: dict[str, Any]) -> list[Event]:
        if type(msg) is not dict:
            return [UnknownEvent(raw=msg)]
        method = msg.get("method")
        if not isinstance(method, str):
            # A response to one of our requests: the driver reads it directly. A replay learns
            # the session's thread from the thread/start (or thread/resume) answer.
            result = msg.get("result")
            if self.thread_id is None and isinstance(result, dict):
                thread = result.get("thread")
                if isinstance(thread, dict) and isinstance(thread.get("id"), str):
                    self.thread_id = thread["id"]
            return []
        params = msg.get("params")
        if type(params) is not dict:
            params = {}
        elif msg is _Clean.value:
            _Clean.part = params  # storable as it is, like the line (see corral.events._fields)
        if "id" in msg:
            return self._request(msg["id"], method, params)
        return self._notification(method, params)

    @total
    def finish(self) -> list[Event]:
        return []

    # ── server → client requests ──
    @total
    def request(self, request_id: Any, method: str, params: dict[str, Any]) -> list[Event]:
        """An approval request becomes ``ApprovalRequested``, a user-input request
        ``QuestionAsked``; other requests produce nothing."""
        mark_part(params, "params")
        return self._request(request_id, method, params)

    def _request(self, request_id: Any, method: str, params: dict[str, Any]) -> list[Event]:
        item_id = params.get("itemId") or params.get("callId")
        item = self._items.get(str(item_id), {}) if item_id is not None else {}
        return request_events(str(request_id), method, params, item)

    # ── notifications ──
    @total
    def notification(self, method: str, p: dict[str, Any]) -> list[Event]:
        """A notification the server sent (``params`` already taken out of the message)."""
        mark_part(p, "params")
        return self._notification(method, p)

    def _notification(self, method: str, p: dict[str, Any]) -> list[Event]:
        handler = _HANDLERS.get(method)
        thread = p.get("threadId")
        if thread is None or thread == self.thread_id or self.thread_id is None:
            if handler is not None:  # the usual case first: our own thread, a known method
                return handler(self, p)
        elif type(thread) is str:
            return self._subagent(method, p, thread)
        if handler is not None:
            return handler(self, p)
        if method in _SILENT:
            if method == "thread/started" and self.thread_id is None:
                started = mapping(p.get("thread"))
                self.thread_id = started.get("id")
                self.model = started.get("model", self.model)
            return []
        return [UnknownEvent(vendor_type=method, raw=p)]

    def _subagent(self, method: str, p: dict[str, Any], thread: str) -> list[Event]:
        """A sub-agent's thread (spawned by a ``collabAgentToolCall``) speaks on the same
        connection: its turns never end ours, its items nest under the spawning call."""
        parent = self._children.get(thread, f"thread:{thread}")
        if method in ("turn/started", "turn/completed"):
            turn = mapping(p.get("turn"))
            status = (
                "subagent.running" if method == "turn/started" else f"subagent.{turn.get('status')}"
            )
            return [StatusChanged(status=status, message=thread, raw=p)]
        if method == "thread/tokenUsage/updated":
            usage = mapping(mapping(p.get("tokenUsage")).get("last"))
            return [
                Usage(
                    input_tokens=usage.get("inputTokens"),
                    output_tokens=usage.get("outputTokens"),
                    cache_read_tokens=usage.get("cachedInputTokens"),
                    reasoning_tokens=usage.get("reasoningOutputTokens"),
                    raw=p,
                )
            ]
        handler = _HANDLERS.get(method)
        if handler is None:
            return [] if method in _SILENT else [UnknownEvent(vendor_type=method, raw=p)]
        last_text = self._last_text
        events = handler(self, p)
        self._last_text = last_text  # the sub-agent's words are not our turn's result
        return [
            msgspec.structs.replace(e, parent_call_id=parent)
            if "parent_call_id" in e.__struct_fields__
            else e
            for e in events
        ]

    def _turn_started(self, p: dict[str, Any]) -> list[Event]:
        self.turn_id = mapping(p.get("turn")).get("id")
        self._last_text = None
        return [StatusChanged(status="running", raw=p)]

    def _turn_completed(self, p: dict[str, Any]) -> list[Event]:
        turn = mapping(p.get("turn"))
        status = turn.get("status")
        self.turn_id = None
        err = mapping(turn.get("error"))
        if status == "interrupted":
            reason, message = StopReason.CANCELLED, None
        elif status == "failed":
            reason = StopReason.ERROR
            message = err.get("message") or "turn failed"
            if err.get("additionalDetails"):
                message = f"{message} ({err['additionalDetails']})"
        else:
            reason, message = StopReason.END_TURN, None
        # Tool calls the turn left open (an interrupted command never gets item/completed).
        unfinished: list[Event] = [
            ToolCallFailed(
                call_id=call_id, error=f"the turn ended ({status}) before it finished", raw=p
            )
            for call_id in self._open_tools
        ]
        self._open_tools.clear()
        return [
            *unfinished,
            TurnCompleted(
                stop_reason=reason,
                turn_id=turn.get("id"),
                error=message,
                result_text=self._last_text,
                raw=p,
            ),
        ]

    def _error(self, p: dict[str, Any]) -> list[Event]:
        err = mapping(p.get("error"))
        return [
            ErrorEvent(
                message=err.get("message") or "error",
                code=error_code(err.get("codexErrorInfo")),
                fatal=not p.get("willRetry", False),
                raw=p,
            )
        ]

    def _warning(self, p: dict[str, Any]) -> list[Event]:
        message = p.get("message") or p.get("summary") or ""
        if p.get("details"):
            message = f"{message}\n{p['details']}"
        return [WarningEvent(message=message, raw=p)]

    def _model_rerouted(self, p: dict[str, Any]) -> list[Event]:
        self.model = p.get("toModel", self.model)
        return [StatusChanged(status="model", message=self.model, raw=p)]

    def _token_usage(self, p: dict[str, Any]) -> list[Event]:
        usage = mapping(p.get("tokenUsage"))
        last = mapping(usage.get("last"))
        return [
            Usage(
                input_tokens=last.get("inputTokens"),
                output_tokens=last.get("outputTokens"),
                cache_read_tokens=last.get("cachedInputTokens"),
                cache_write_tokens=last.get("cacheWriteInputTokens"),
                reasoning_tokens=last.get("reasoningOutputTokens"),
                model=self.model,
                raw=p,
            )
        ]

    def _plan(self, p: dict[str, Any]) -> list[Event]:
        entries = tuple(
            PlanEntry(
                content=s.get("step", ""), status=_PLAN_STATUS.get(str(s.get("status")), "pending")
            )
            for s in sequence(p.get("plan"))
            if isinstance(s, dict)
        )
        return [PlanUpdated(entries=entries, explanation=p.get("explanation"), raw=p)]

    def _text_delta(self, p: dict[str, Any]) -> list[Event]:
        item_id = p.get("itemId")
        self._streamed.add(str(item_id))
        text = self._joiner.join(p.get("delta"), (str(item_id), "text"))
        return [TextDelta(text=text, message_id=item_id, raw=p)]

    def _reasoning_delta(self, p: dict[str, Any]) -> list[Event]:
        item_id = p.get("itemId")
        self._streamed.add(str(item_id))
        text = self._joiner.join(p.get("delta"), (str(item_id), "reasoning"))
        return [ReasoningDelta(text=text, message_id=item_id, raw=p)]

    def _output_delta(self, p: dict[str, Any]) -> list[Event]:
        item_id = str(p.get("itemId"))
        delta = p.get("delta", "")
        self._output.setdefault(item_id, []).append(delta)
        return [ToolCallUpdated(call_id=item_id, output_delta=delta, raw=p)]

    def _mcp_progress(self, p: dict[str, Any]) -> list[Event]:
        return [ToolCallUpdated(call_id=str(p.get("itemId")), status=p.get("message"), raw=p)]

    # ── items ──
    def _note_children(self, item: dict[str, Any]) -> None:
        if item.get("type") == "collabAgentToolCall":
            for child in sequence(item.get("receiverThreadIds")):
                self._children.setdefault(str(child), str(item.get("id")))

    def _item_started(self, p: dict[str, Any]) -> list[Event]:
        item = mapping(p.get("item"))
        item_id = str(item.get("id"))
        self._items[item_id] = item
        self._note_children(item)
        started = tool_start(item, p)
        if started is None:
            return []
        if p.get("threadId") in (None, self.thread_id):
            self._open_tools.append(item_id)
        return [started]

    def _item_completed(self, p: dict[str, Any]) -> list[Event]:
        item = mapping(p.get("item"))
        item_id = str(item.get("id"))
        kind = item.get("type")
        seen = item_id in self._items
        self._items[item_id] = item
        if item_id in self._open_tools:
            self._open_tools.remove(item_id)
        self._note_children(item)
        events: list[Event] = []
        if kind == "agentMessage":
            text = item.get("text") or ""
            self._last_text = text
            if item_id not in self._streamed and text:
                events.append(TextDelta(text=text, message_id=item_id, raw=p))
            events.append(TextComplete(text=text, message_id=item_id, raw=p))
        elif kind == "reasoning":
            parts = sequence(item.get("summary")) or sequence(item.get("content"))
            text = "\n\n".join(str(s) for s in parts)
            if text:
                events.append(ReasoningComplete(text=text, message_id=item_id, raw=p))
        elif kind in ("userMessage", "plan", "hookPrompt"):
            pass
        elif kind == "contextCompaction":
            events.append(StatusChanged(status="compacted", raw=p))
        elif isinstance(kind, str) and kind in TOOL_ITEMS:
            if not seen:
                started = tool_start(item, p)
                if started is not None:
                    events.append(started)
            if kind == "fileChange":
                events += [
                    file_diff(c, item_id)
                    for c in sequence(item.get("changes"))
                    if isinstance(c, dict)
                ]
            events.append(self._tool_end(item, p))
        else:
            events.append(UnknownEvent(vendor_type=f"item/completed:{kind}", raw=p))
        self._streamed.discard(item_id)
        self._output.pop(item_id, None)
        return events

    def _tool_end(self, item: dict[str, Any], p: dict[str, Any]) -> Event:
        item_id = str(item.get("id"))
        name, kind = TOOL_ITEMS[item["type"]](item)[:2]
        status = item.get("status")
        output = item.get("aggregatedOutput")
        if output is None:
            output = "".join(self._output.get(item_id, []))
        exit_code = item.get("exitCode")
        if item.get("type") == "mcpToolCall":
            output = mcp_output(item.get("result"))
        if item.get("type") == "webSearch":
            output = str(item.get("query") or "")
        failed = status in ("failed", "declined") or (isinstance(exit_code, int) and exit_code)
        result = ToolResult(output=output or "", exit_code=exit_code, is_error=bool(failed))
        if status == "declined":
            return ToolCallFailed(
                call_id=item_id,
                error="declined by the user",
                denied=True,
                name=name,
                kind=kind,
                raw=p,
            )
        if status == "failed":
            err = mapping(item.get("error"))
            message = err.get("message") if isinstance(err, dict) else None
            return ToolCallFailed(
                call_id=item_id,
                error=message or output or "failed",
                result=result,
                name=name,
                kind=kind,
                raw=p,
            )
        return ToolCallCompleted(call_id=item_id, result=result, name=name, kind=kind, raw=p)


_HANDLERS = {
    "turn/started": AppServerParser._turn_started,
    "turn/completed": AppServerParser._turn_completed,
    "turn/plan/updated": AppServerParser._plan,
    "error": AppServerParser._error,
    "warning": AppServerParser._warning,
    "configWarning": AppServerParser._warning,
    "guardianWarning": AppServerParser._warning,
    "deprecationNotice": AppServerParser._warning,
    "model/rerouted": AppServerParser._model_rerouted,
    "thread/tokenUsage/updated": AppServerParser._token_usage,
    "item/started": AppServerParser._item_started,
    "item/completed": AppServerParser._item_completed,
    "item/agentMessage/delta": AppServerParser._text_delta,
    "item/reasoning/summaryTextDelta": AppServerParser._reasoning_delta,
    "item/reasoning/textDelta": AppServerParser._reasoning_delta,
    "item/commandExecution/outputDelta": AppServerParser._output_delta,
    "item/fileChange/outputDelta": AppServerParser._output_delta,
    "item/mcpToolCall/progress": AppServerParser._mcp_progress,
}
