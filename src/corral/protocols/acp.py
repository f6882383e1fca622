"""Agent Client Protocol (ACP) traffic → normalized events. Synchronous, no I/O.

One :class:`AcpParser` follows one ACP session. The driver (``corral.adapters._acp``) owns the
JSON-RPC plumbing and hands the parser what the *agent* sent, one entry point per kind:

* ``session/update`` notifications → :meth:`AcpParser.update`,
* ``session/request_permission`` requests → :meth:`AcpParser.permission`, and the answer given →
  :meth:`AcpParser.resolved`,
* the ``session/prompt`` response → :meth:`AcpParser.prompt_result` (or
  :meth:`AcpParser.prompt_failed` for an error or a broken turn).

There is no second, replay-only entry point: a recorded transcript is played into the real driver
through :class:`corral.testing.ReplayTransport`, so replay makes exactly the live calls.

Mapping (ACP v1, schema 1.19 as shipped in agent-client-protocol 0.12):

=========================  ========================================================
``agent_message_chunk``     ``TextDelta`` (``TextComplete`` when the message ends)
``agent_thought_chunk``     ``ReasoningDelta`` (``ReasoningComplete`` likewise)
``tool_call``               ``ToolCallStarted`` (+ ``FileDiff`` per diff content)
``tool_call_update``        ``ToolCallUpdated``; ``completed`` → ``ToolCallCompleted``;
                            ``failed`` → ``ToolCallFailed`` (``denied`` when we refused it)
``plan``                    ``PlanUpdated``
``available_commands_…``    ``StatusChanged(status="commands")``; names in ``commands``
``current_mode_update``     ``StatusChanged(status="mode")``
``usage_update``            ``StatusChanged(status="context")`` (context window, not tokens)
prompt result ``usage``     ``Usage`` (also Gemini's ``_meta.quota`` and Qwen's chunk
                            ``_meta.usage``)
request_permission          ``ApprovalRequested`` with the agent's own option ids
unknown update kinds        ``UnknownEvent`` (payload kept)
=========================  ========================================================

Every ``ToolCallStarted`` gets a terminal event: calls still open when the turn ends are closed
then (denied → ``ToolCallFailed(denied=True)``, a normal end → ``ToolCallCompleted``, otherwise
failed), marked ``raw={"closed_at_turn_end": …}``. An edit reported without diff content gets a
``FileDiff`` derived from its ``rawInput`` (path and content). Vendor differences are listed in
docs/protocols/acp.md.
"""

from __future__ import annotations

from typing import Any

from ..events import (
    ApprovalDecision,
    ApprovalOption,
    ApprovalRequested,
    ApprovalResolved,
    ErrorEvent,
    Event,
    FileDiff,
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
    ToolCallStarted,
    ToolCallUpdated,
    ToolKind,
    ToolResult,
    TurnCompleted,
    UnknownEvent,
    Usage,
)
from ..events._fields import mark_part
from ..events._text import SurrogateJoiner
from ._diff import unified
from ._total import sequence, total

KIND_MAP: dict[str, ToolKind] = {
    "read": ToolKind.READ,
    "edit": ToolKind.EDIT,
    "delete": ToolKind.EDIT,
    "move": ToolKind.EDIT,
    "search": ToolKind.SEARCH,
    "execute": ToolKind.COMMAND,
    "fetch": ToolKind.WEB,
    "think": ToolKind.OTHER,
    "switch_mode": ToolKind.OTHER,
    "other": ToolKind.OTHER,
}
"""ACP ``ToolKind`` → corral ``ToolKind``."""

OPTION_DECISIONS: dict[str, ApprovalDecision] = {
    "allow_once": ApprovalDecision.ALLOW,
    "allow_always": ApprovalDecision.ALLOW_ALWAYS,
    "reject_once": ApprovalDecision.DENY,
    "reject_always": ApprovalDecision.DENY,
}
"""ACP ``PermissionOptionKind`` → corral ``ApprovalDecision``."""

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": StopReason.END_TURN,
    "max_tokens": StopReason.MAX_TOKENS,
    "max_turn_requests": StopReason.MAX_TURNS,
    "refusal": StopReason.REFUSAL,
    "cancelled": StopReason.CANCELLED,
}

_COMMAND_KEYS = ("command", "cmd")
_PATH_KEYS = ("file_path", "filePath", "path", "absolute_path", "abs_path", "filename")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text_of(block: Any) -> str | None:
    """The text of a ContentBlock (``text`` blocks, and embedded text resources)."""
    if type(block) is not dict:
        return None
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        if type(text) is str:
            return text
        if isinstance(text, str):
            return str(text)
    resource = _dict(block.get("resource"))
    if block.get("type") == "resource" and isinstance(resource.get("text"), str):
        return str(resource["text"])
    return None


def _cmd(raw_input: Any) -> str | None:
    raw = _dict(raw_input)
    for key in _COMMAND_KEYS:
        value = raw.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return " ".join(value)
    return None


def _file(update: dict[str, Any]) -> str | None:
    for loc in sequence(update.get("locations")):
        path = _dict(loc).get("path")
        if isinstance(path, str):
            return path
    for item in sequence(update.get("content")):
        if _dict(item).get("type") == "diff" and isinstance(_dict(item).get("path"), str):
            return str(_dict(item)["path"])
    raw = _dict(update.get("rawInput"))
    for source in (raw, _dict(raw.get("arguments"))):  # Hermes nests the tool's arguments
        for key in _PATH_KEYS:
            if isinstance(source.get(key), str):
                return str(source[key])
    return None


def unified_diff(path: str, old: str | None, new: str | None) -> str:
    """A unified diff between two texts (``None`` is an absent file)."""
    return unified(
        (old if isinstance(old, str) else "").splitlines(keepends=True),
        (new if isinstance(new, str) else "").splitlines(keepends=True),
        "/dev/null" if old is None else f"a/{path.lstrip('/')}",
        f"b/{path.lstrip('/')}",
    )


class AcpParser:
    """Follows one ACP session; see the module docstring. ``commands`` and ``mode`` track state."""

    def __init__(self) -> None:
        self.commands: list[str] = []
        self.mode: str | None = None
        self._text: list[str] = []
        self._text_id: str | None = None
        self._thought: list[str] = []
        self._thought_id: str | None = None
        self._calls: dict[str, dict[str, Any]] = {}
        self._open_calls: set[str] = set()
        self._denied: set[str] = set()
        self._permission_calls: dict[str, str] = {}
        self._permission_options: dict[str, dict[str, ApprovalDecision]] = {}
        self._pending_usage: dict[str, Any] = {}
        self._diffs_seen: set[tuple[str, str, str | None, str | None]] = set()
        self._joiner = SurrogateJoiner()

    # ── session/update ──
    @total
    def update(self, update: Any) -> list[Event]:
        mark_part(update, "params", "update")
        upd = _dict(update)
        kind = upd.get("sessionUpdate")
        handler = _UPDATE_HANDLERS.get(str(kind))
        if handler is None:
            return [*self._flush(), UnknownEvent(vendor_type=str(kind), raw=update)]
        return handler(self, upd)

    def _message_chunk(self, upd: dict[str, Any]) -> list[Event]:
        text = _text_of(upd.get("content"))
        meta = upd.get("_meta")
        if type(meta) is dict:
            usage = meta.get("usage")
            if type(usage) is dict and usage:
                # Qwen Code reports a turn's tokens on a last, empty chunk: ``_meta.usage``.
                self._pending_usage = usage
        if text is None:
            return [UnknownEvent(vendor_type="agent_message_chunk", raw=upd)]
        if not text:
            return []
        out = self._flush_thought() if self._thought else []
        msg_id = upd.get("messageId")
        if self._text and msg_id is not None and msg_id != self._text_id:
            out += self._flush_text()
        text = self._joiner.join(text, "text")
        self._text.append(text)
        self._text_id = msg_id
        if text:  # empty when the chunk was only the first half of a surrogate pair
            out.append(TextDelta(text=text, message_id=msg_id, raw=upd))
        return out

    def _thought_chunk(self, upd: dict[str, Any]) -> list[Event]:
        text = _text_of(upd.get("content"))
        if text is None:
            return [UnknownEvent(vendor_type="agent_thought_chunk", raw=upd)]
        out = self._flush_text()
        text = self._joiner.join(text, "thought")
        self._thought.append(text)
        self._thought_id = upd.get("messageId")
        if text:
            out.append(ReasoningDelta(text=text, message_id=self._thought_id, raw=upd))
        return out

    def _flush_text(self) -> list[Event]:
        if not self._text:
            return []
        out: list[Event] = []
        tail = self._joiner.flush("text")  # a first half whose second never came
        if tail:
            self._text.append(tail)
            out.append(TextDelta(text=tail, message_id=self._text_id))
        text, self._text = "".join(self._text), []
        return [*out, TextComplete(text=text, message_id=self._text_id)]

    def _flush_thought(self) -> list[Event]:
        if not self._thought:
            return []
        out: list[Event] = []
        tail = self._joiner.flush("thought")
        if tail:
            self._thought.append(tail)
            out.append(ReasoningDelta(text=tail, message_id=self._thought_id))
        text, self._thought = "".join(self._thought), []
        return [*out, ReasoningComplete(text=text, message_id=self._thought_id)]

    def _flush(self) -> list[Event]:
        if not self._thought and not self._text:
            return []
        return [*self._flush_thought(), *self._flush_text()]

    def _tool_call(self, upd: dict[str, Any]) -> list[Event]:
        out = self._flush()
        call_id = str(upd.get("toolCallId", ""))
        known = self._calls.setdefault(call_id, {})
        known.update({k: v for k, v in upd.items() if v is not None})
        if call_id in self._open_calls or known.get("_done"):
            # A repeated tool_call for a known id (some agents re-announce): treat as an update.
            return out + self._tool_update(upd)
        self._open_calls.add(call_id)
        acp_kind = str(known.get("kind") or "other")
        out.append(
            ToolCallStarted(
                call_id=call_id,
                name=str(known.get("title") or acp_kind),
                kind=KIND_MAP.get(acp_kind, ToolKind.OTHER),
                title=known.get("title"),
                input=known.get("rawInput"),
                file=_file(known),
                cmd=_cmd(known.get("rawInput")),
                raw=upd,
            )
        )
        out += self._diffs(call_id, upd)
        out += self._status(call_id, upd)
        return out

    def _tool_update(self, upd: dict[str, Any]) -> list[Event]:
        out = self._flush()
        call_id = str(upd.get("toolCallId", ""))
        known = self._calls.setdefault(call_id, {})
        known.update({k: v for k, v in upd.items() if v is not None and k != "sessionUpdate"})
        if call_id not in self._open_calls and not known.get("_done"):
            # An update for a call we never saw start (e.g. after session/load): start it now.
            return out + self._tool_call({**known, "sessionUpdate": "tool_call"})
        texts = [
            t
            for t in (_text_of(_dict(c).get("content")) for c in sequence(upd.get("content")))
            if t
        ]
        status = upd.get("status")
        if status not in ("completed", "failed") or texts or upd.get("rawInput") is not None:
            out.append(
                ToolCallUpdated(
                    call_id=call_id,
                    input=upd.get("rawInput"),
                    output_delta="".join(texts) or None,
                    status=status,
                    title=upd.get("title"),
                    file=_file(upd),
                    cmd=_cmd(upd.get("rawInput")),
                    raw=upd,
                )
            )
        out += self._diffs(call_id, upd)
        out += self._status(call_id, upd)
        return out

    def _status(self, call_id: str, upd: dict[str, Any]) -> list[Event]:
        status = upd.get("status")
        if status not in ("completed", "failed") or call_id not in self._open_calls:
            return []
        known = self._calls[call_id]
        self._open_calls.discard(call_id)
        known["_done"] = True
        output = _output(known)
        kind = KIND_MAP.get(str(known.get("kind") or "other"), ToolKind.OTHER)
        name = str(known.get("title") or known.get("kind") or "tool")
        exit_code = _exit_code(known.get("rawOutput"))
        if status == "completed":
            return [
                *self._synthetic_diff(call_id, known),
                ToolCallCompleted(
                    call_id=call_id,
                    name=name,
                    kind=kind,
                    result=ToolResult(
                        output=output,
                        structured=known.get("rawOutput"),
                        exit_code=exit_code,
                        is_error=bool(exit_code),
                    ),
                    raw=upd,
                ),
            ]
        denied = call_id in self._denied
        return [
            ToolCallFailed(
                call_id=call_id,
                error=output or ("permission denied" if denied else "tool call failed"),
                denied=denied,
                name=name,
                kind=kind,
                result=ToolResult(
                    output=output,
                    structured=known.get("rawOutput"),
                    exit_code=exit_code,
                    is_error=True,
                ),
                raw=upd,
            )
        ]

    def _diffs(self, call_id: str, upd: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        for item in sequence(upd.get("content")):
            item = _dict(item)
            if item.get("type") != "diff" or not isinstance(item.get("path"), str):
                continue
            path, old, new = item["path"], item.get("oldText"), item.get("newText")
            key = (
                call_id,
                path,
                old if isinstance(old, str) else None,
                new if isinstance(new, str) else None,
            )
            if key in self._diffs_seen:
                continue
            self._diffs_seen.add(key)
            out.append(
                FileDiff(
                    path=path,
                    diff=unified_diff(path, old, new),
                    old_text=old,
                    new_text=new,
                    call_id=call_id,
                    raw=item,
                )
            )
        return out

    def _plan(self, upd: dict[str, Any]) -> list[Event]:
        entries = tuple(
            PlanEntry(
                content=str(_dict(e).get("content", "")),
                status=str(_dict(e).get("status") or "pending"),
                priority=_dict(e).get("priority"),
            )
            for e in sequence(upd.get("entries"))
        )
        return [*self._flush(), PlanUpdated(entries=entries, raw=upd)]

    def _commands(self, upd: dict[str, Any]) -> list[Event]:
        names = []
        for c in sequence(upd.get("availableCommands")):
            name = c.get("name") if type(c) is dict else None
            if name:
                names.append("/" + (name if type(name) is str else str(name)).lstrip("/"))
        self.commands = names
        return [StatusChanged(status="commands", message=" ".join(names), raw=upd)]

    def _mode(self, upd: dict[str, Any]) -> list[Event]:
        self.mode = upd.get("currentModeId") or upd.get("modeId")
        return [StatusChanged(status="mode", message=self.mode, raw=upd)]

    def _context(self, upd: dict[str, Any]) -> list[Event]:
        used, size = upd.get("used"), upd.get("size")
        return [StatusChanged(status="context", message=f"{used}/{size} tokens", raw=upd)]

    def _info(self, upd: dict[str, Any]) -> list[Event]:
        return [StatusChanged(status="session_info", message=upd.get("title"), raw=upd)]

    def _user_chunk(self, upd: dict[str, Any]) -> list[Event]:
        return [UnknownEvent(vendor_type="user_message_chunk", raw=upd)]

    # ── permissions ──
    @total
    def permission(self, request_id: str, params: dict[str, Any]) -> list[Event]:
        """A ``session/request_permission`` request → ``ApprovalRequested``."""
        mark_part(params, "params")
        call = _dict(params.get("toolCall"))
        call_id = str(call.get("toolCallId") or "")
        if call_id not in self._calls:
            # Hermes asks about an edit under an id of its own ("edit-approval-1") while the
            # write it guards is open under another: tie the request to that call.
            call_id = self._guess_call(call) or call_id
        known = {**self._calls.get(call_id, {}), **{k: v for k, v in call.items() if v is not None}}
        self._permission_calls[request_id] = call_id
        options = tuple(
            ApprovalOption(
                id=str(o.get("optionId")),
                label=str(o.get("name") or o.get("optionId")),
                decision=OPTION_DECISIONS.get(str(o.get("kind")), ApprovalDecision.DENY),
            )
            for o in map(_dict, sequence(params.get("options")))
            if o.get("optionId") is not None
        )
        self._permission_options[request_id] = {o.id: o.decision for o in options}
        acp_kind = str(known.get("kind") or "other")
        out = self._flush()
        if call_id and call_id not in self._open_calls and not known.get("_done"):
            # Some agents (gemini) ask before they ever announce the call: announce it here.
            out += self._tool_call({**known, "sessionUpdate": "tool_call", "toolCallId": call_id})
        out += self._diffs(call_id, call)
        return [
            *out,
            ApprovalRequested(
                request_id=request_id,
                tool_name=str(known.get("title") or acp_kind),
                kind=KIND_MAP.get(acp_kind, ToolKind.OTHER),
                title=known.get("title"),
                input=known.get("rawInput"),
                call_id=call_id or None,
                file=_file(known),
                cmd=_cmd(known.get("rawInput")),
                options=options,
                raw=params,
            ),
        ]

    def _guess_call(self, call: dict[str, Any]) -> str:
        """The open call on the same file (of the same kind), if exactly that is asked about."""
        path = _file(call)
        if path is None:
            return ""
        open_calls = [c for c in self._calls if c in self._open_calls]
        for candidate in reversed(open_calls):
            known = self._calls[candidate]
            if _file(known) == path and known.get("kind") == call.get("kind"):
                return candidate
        return ""

    @total
    def resolved(
        self, request_id: str, outcome: dict[str, Any], decision: ApprovalDecision | None
    ) -> list[Event]:
        """The client answered a permission request with ``outcome`` (ACP shape)."""
        option_id = outcome.get("optionId")
        offered = self._permission_options.pop(request_id, {})
        if decision is None:
            decision = ApprovalDecision.CANCEL
            if outcome.get("outcome") == "selected":
                decision = offered.get(str(option_id), ApprovalDecision.DENY)
        call_id = self._permission_calls.pop(request_id, "")
        if decision in (ApprovalDecision.DENY, ApprovalDecision.CANCEL) and call_id:
            self._denied.add(call_id)
        return [
            ApprovalResolved(
                request_id=request_id,
                decision=decision,
                option_id=option_id if isinstance(option_id, str) else None,
                raw={"outcome": outcome},
            )
        ]

    # ── end of a turn ──
    @total
    def prompt_result(self, result: Any) -> list[Event]:
        """The ``session/prompt`` response: usage (if any), then ``TurnCompleted``."""
        mark_part(result, "result")
        res = _dict(result)
        stop = res.get("stopReason")
        reason = STOP_REASONS.get(stop if type(stop) is str else str(stop), StopReason.END_TURN)
        out = self._flush()
        if self._open_calls:
            out += self._close_open(reason)
        usage = _dict(res.get("usage")) or _meta_usage(res) or self._pending_usage
        self._pending_usage = {}
        if usage:
            out.append(
                Usage(
                    input_tokens=usage.get("inputTokens"),
                    output_tokens=usage.get("outputTokens"),
                    cache_read_tokens=usage.get("cachedReadTokens"),
                    cache_write_tokens=usage.get("cachedWriteTokens"),
                    reasoning_tokens=usage.get("thoughtTokens"),
                    raw=usage,
                )
            )
        out.append(TurnCompleted(stop_reason=reason, raw=result))
        return out

    @total
    def prompt_failed(self, message: str, raw: Any = None) -> list[Event]:
        """The ``session/prompt`` request failed: an ``Error`` and an errored ``TurnCompleted``."""
        return [
            *self._flush(),
            *self._close_open(StopReason.ERROR),
            ErrorEvent(message=message, code="prompt_failed", raw=raw),
            TurnCompleted(stop_reason=StopReason.ERROR, error=message, raw=raw),
        ]

    def prompt_cancelled(self, raw: Any = None) -> list[Event]:
        """The turn ended because corral cancelled it (the agent's own end was an error or the
        process had to go): open calls closed, a cancelled ``TurnCompleted``."""
        return [
            *self._flush(),
            *self._close_open(StopReason.CANCELLED),
            TurnCompleted(stop_reason=StopReason.CANCELLED, raw=raw),
        ]

    def _close_open(self, reason: StopReason) -> list[Event]:
        """Calls still open when the turn ends get their terminal event here, once.

        A call we refused is ``ToolCallFailed(denied=True)``; in a turn that ended normally the
        call is over and is ``ToolCallCompleted`` (Hermes never reports approved edits as done);
        otherwise it failed with the turn. ``raw`` says the driver closed it.
        """
        out: list[Event] = []
        if not self._open_calls:
            return out
        for call_id in [c for c in self._calls if c in self._open_calls]:
            self._open_calls.discard(call_id)
            known = self._calls[call_id]
            known["_done"] = True
            name = str(known.get("title") or known.get("kind") or "tool")
            kind = KIND_MAP.get(str(known.get("kind") or "other"), ToolKind.OTHER)
            marker = {"closed_at_turn_end": reason.value}
            if call_id in self._denied:
                out.append(
                    ToolCallFailed(
                        call_id=call_id,
                        error="permission denied",
                        denied=True,
                        name=name,
                        kind=kind,
                        raw=marker,
                    )
                )
            elif reason is StopReason.END_TURN:
                out += self._synthetic_diff(call_id, known)
                out.append(
                    ToolCallCompleted(
                        call_id=call_id,
                        name=name,
                        kind=kind,
                        result=ToolResult(output=_output(known)),
                        raw=marker,
                    )
                )
            else:
                out.append(
                    ToolCallFailed(
                        call_id=call_id,
                        error=f"turn {reason.value}",
                        name=name,
                        kind=kind,
                        raw=marker,
                    )
                )
        return out

    def _synthetic_diff(self, call_id: str, known: dict[str, Any]) -> list[Event]:
        """An edit the agent reported without diff content (OpenCode ``write``): diff from input."""
        if known.get("kind") != "edit" or any(k[0] == call_id for k in self._diffs_seen):
            return []
        raw_input = _dict(known.get("rawInput"))
        args = _dict(raw_input.get("arguments")) or raw_input
        path = _file({"rawInput": args})
        content = args.get("content")
        if path is None or not isinstance(content, str):
            return []
        metadata = _dict(_dict(known.get("rawOutput")).get("metadata"))
        created = metadata.get("exists") is False
        self._diffs_seen.add((call_id, path, None, content))
        return [
            FileDiff(
                path=path,
                diff=unified_diff(path, None, content) if created else None,
                new_text=content,
                call_id=call_id,
                raw={"synthesized_from": "rawInput"},
            )
        ]


def _meta_usage(result: dict[str, Any]) -> dict[str, Any]:
    """Gemini CLI reports tokens outside the schema: ``_meta.quota.token_count``."""
    meta = result.get("_meta")
    if type(meta) is not dict:
        return {}
    counts = _dict(_dict(meta.get("quota")).get("token_count"))
    if not counts:
        return {}
    return {"inputTokens": counts.get("input_tokens"), "outputTokens": counts.get("output_tokens")}


def _exit_code(raw: Any) -> int | None:
    """A command's exit status where the vendor puts it: ``exit`` / ``exitCode`` / ``exit_code``,
    at the top of ``rawOutput`` or in its ``metadata`` (OpenCode: ``metadata.exit``)."""
    raw = _dict(raw)
    for where in (raw, _dict(raw.get("metadata"))):
        for key in ("exitCode", "exit_code", "exit"):
            value = where.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _output(known: dict[str, Any]) -> str:
    texts = [
        t for t in (_text_of(_dict(c).get("content")) for c in sequence(known.get("content"))) if t
    ]
    if texts:
        return "\n".join(texts)
    raw = known.get("rawOutput")
    if isinstance(raw, str):
        return raw
    raw = _dict(raw)
    for key in ("output", "stdout", "content", "result"):
        if isinstance(raw.get(key), str):
            return str(raw[key])
    return ""


_UPDATE_HANDLERS = {
    "agent_message_chunk": AcpParser._message_chunk,
    "agent_thought_chunk": AcpParser._thought_chunk,
    "user_message_chunk": AcpParser._user_chunk,
    "tool_call": AcpParser._tool_call,
    "tool_call_update": AcpParser._tool_update,
    "plan": AcpParser._plan,
    "available_commands_update": AcpParser._commands,
    "current_mode_update": AcpParser._mode,
    "usage_update": AcpParser._context,
    "session_info_update": AcpParser._info,
}
