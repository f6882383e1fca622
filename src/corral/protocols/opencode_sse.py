"""OpenCode server protocol: ``/event`` SSE objects (and the HTTP calls we made) → corral events.

Synchronous and I/O-free. The driver hands every decoded SSE ``data`` object to :meth:`feed` and
every HTTP exchange it made to :meth:`feed_sent` (``{"method", "path", "body", "status",
"response"}``), so a recorded transcript replays through exactly the code the live driver runs.

What the parser needs to know from our side (all through ``feed_sent``): the root session (the
answer to ``POST /session``, ``POST /session/{id}/fork`` or ``GET /session/{id}`` on resume),
when a turn begins (``prompt_async``) and when we asked to abort (``abort``).

Mapping (verified on opencode 1.18.33; see docs/protocols/opencode.md):

* ``session.status`` busy → ``StatusChanged("busy")`` once per turn; idle (or the deprecated
  ``session.idle``) → ``TurnCompleted`` (``cancelled`` after an abort or ``MessageAbortedError``,
  ``error`` after a ``session.error``).
* ``message.part.updated`` / ``message.part.delta`` of assistant messages: text and reasoning parts
  → deltas (the difference between snapshots when no delta event came) and a ``…Complete`` when
  ``time.end`` is set; tool parts pending → ``ToolCallStarted``, running → ``ToolCallUpdated``,
  completed → ``ToolCallCompleted`` (+ ``FileDiff`` for edits), error → ``ToolCallFailed``
  (``denied`` when we or someone rejected its permission); step-finish → ``Usage``.
* ``message.updated`` user ``summary.diffs`` and ``session.diff`` → ``FileDiff`` (deduplicated).
* ``todo.updated`` → ``PlanUpdated``; ``permission.asked/replied`` → ``ApprovalRequested/Resolved``;
  ``question.asked/replied/rejected`` → ``QuestionAsked/Answered``; ``session.error`` → ``Error``.
* Child sessions (sub-agents started by the ``task`` tool) are followed; their events carry
  ``parent_call_id`` = the task call. Events of unrelated sessions are dropped; event types with
  nothing for corral are ignored; anything else becomes ``UnknownEvent``.
"""

from __future__ import annotations

from typing import Any

from ..events import (
    ApprovalRequested,
    ApprovalResolved,
    ErrorEvent,
    Event,
    FileDiff,
    PlanUpdated,
    Question,
    QuestionAnswered,
    QuestionAsked,
    ReasoningComplete,
    ReasoningDelta,
    StatusChanged,
    StopReason,
    TextComplete,
    TextDelta,
    TurnCompleted,
    UnknownEvent,
    Usage,
)
from ..events._text import SurrogateJoiner
from ._opencode_parts import ToolTracker
from ._opencode_state import (
    _ABORTED,
    _IGNORED_PREFIXES,
    _SESSION_PATH,
    IGNORED_TYPES,
    _error_message,
    _int,
    _Scope,
    _Text,
    _Turn,
)
from ._opencode_tools import APPROVAL_OPTIONS, DECISION_FOR, command_of, file_of, plan_entries
from ._opencode_tools import tool_kind as _tool_kind
from ._total import mapping, sequence, total


class OpenCodeSseParser:
    """One parser per driven root session (a fork or a resume switches the root)."""

    def __init__(self, session_id: str | None = None) -> None:
        self.scope = _Scope(root=session_id)
        self.turn = _Turn()
        self._roles: dict[str, str] = {}
        self._models: dict[str, str] = {}
        self._texts: dict[str, _Text] = {}
        self._tools = ToolTracker(self.scope)
        self._permission_calls: dict[str, str] = {}
        self._questions: dict[str, list[str]] = {}
        self._diffs: dict[str, str | None] = {}
        self._joiner = SurrogateJoiner()

    @property
    def session_id(self) -> str | None:
        return self.scope.root

    # ── what we sent ──
    @total
    def feed_sent(self, exchange: dict[str, Any]) -> list[Event]:
        method = str(exchange.get("method", "")).upper()
        path = str(exchange.get("path", ""))
        status = exchange.get("status")
        response = exchange.get("response")
        ok = isinstance(status, int) and 200 <= status < 300
        if method == "POST" and path == "/session" and ok and isinstance(response, dict):
            self._switch_root(response.get("id"))
            return []
        if method == "GET" and path == "/session/status" and ok and isinstance(response, dict):
            # Re-read after an /event reconnect: an idle we missed still ends the turn.
            status = response.get(self.scope.root or "")
            if self.turn.open and self.turn.busy and not (status and status.get("type") != "idle"):
                return self._idle(exchange)
            return []
        m = _SESSION_PATH.match(path)
        if m is None:
            return []
        rest = m.group("rest") or ""
        if method == "GET" and rest == "" and ok:
            self._switch_root(m.group("id"))
        elif method == "POST" and rest == "/fork" and ok and isinstance(response, dict):
            self._switch_root(response.get("id"))
        elif method == "POST" and rest in ("/prompt_async", "/message", "/command", "/shell"):
            if not self.turn.open:
                self.turn = _Turn(open=True, busy=self.turn.busy)
        elif method == "POST" and rest == "/abort" and self.turn.open:
            self.turn.interrupted = True
        return []

    def _switch_root(self, sid: Any) -> None:
        if isinstance(sid, str) and sid != self.scope.root:
            self.scope.root = sid
            self.scope.parents.clear()
            self.turn = _Turn()

    # ── what the server said ──
    @total
    def feed(self, obj: Any) -> list[Event]:
        etype = obj.get("type") if type(obj) is dict else None
        if type(etype) is not str:
            return [UnknownEvent(vendor_type=None, raw=obj)]
        handler = _HANDLERS.get(etype)  # no handled type is also ignored (the test says so)
        if handler is None:
            if etype == "session.created" or etype == "session.updated":
                props = obj.get("properties")
                self._note_session(props.get("info") if type(props) is dict else None)
                return []
            if etype in IGNORED_TYPES or etype.startswith(_IGNORED_PREFIXES):
                return []
            return [UnknownEvent(vendor_type=etype, raw=obj)]
        props = obj.get("properties")
        if type(props) is not dict:
            props = {}
        sid = props.get("sessionID")
        if sid is None and etype == "message.part.updated":
            sid = mapping(props.get("part")).get("sessionID")
        if etype != "session.error" and not self.scope.follows(sid):
            return []
        if etype == "session.error" and sid is not None and not self.scope.follows(sid):
            return []
        return handler(self, obj, props)

    @total
    def finish(self) -> list[Event]:
        """The stream is over: an open turn ends with an error."""
        if not self.turn.open:
            return []
        self.turn.open = False
        reason = StopReason.CANCELLED if self.turn.interrupted else StopReason.ERROR
        return [
            TurnCompleted(
                stop_reason=reason,
                error=None if self.turn.interrupted else "the OpenCode event stream ended",
            )
        ]

    # ── handlers ──
    def _note_session(self, info: Any) -> None:
        if not isinstance(info, dict):
            return
        sid, parent = info.get("id"), info.get("parentID")
        if isinstance(sid, str) and isinstance(parent, str) and self.scope.follows(parent):
            self.scope.parents.setdefault(sid, parent)

    def _on_status(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        status = props.get("status") if isinstance(props.get("status"), dict) else {}
        assert isinstance(status, dict)
        kind = status.get("type")
        if props.get("sessionID") != self.scope.root:
            return []
        if kind == "idle":
            return self._idle(obj)
        if kind == "retry":
            return [StatusChanged(status="retry", message=status.get("message"), raw=obj)]
        if kind == "busy" and not self.turn.busy:
            if not self.turn.open:
                self.turn = _Turn(open=True)
            self.turn.busy = True
            return [StatusChanged(status="busy", raw=obj)]
        return []

    def _on_idle(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        return self._idle(obj) if props.get("sessionID") == self.scope.root else []

    def _idle(self, obj: dict[str, Any]) -> list[Event]:
        turn = self.turn
        turn.busy = False
        if not turn.open:
            return []
        turn.open = False
        if turn.interrupted:
            reason = StopReason.CANCELLED
        elif turn.error is not None:
            reason = StopReason.ERROR
        else:
            reason = StopReason.END_TURN
        return [
            TurnCompleted(
                stop_reason=reason,
                error=turn.error if reason is StopReason.ERROR else None,
                result_text=turn.last_text,
                raw=obj,
            )
        ]

    def _on_message(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        info = props.get("info") if isinstance(props.get("info"), dict) else {}
        assert isinstance(info, dict)
        mid, role = info.get("id"), info.get("role")
        if isinstance(mid, str) and isinstance(role, str):
            self._roles[mid] = role
            if isinstance(info.get("modelID"), str):
                self._models[mid] = str(info["modelID"])
        error = info.get("error")
        if isinstance(error, dict) and info.get("sessionID") == self.scope.root:
            self._note_error(error)
        summary = info.get("summary")
        if isinstance(summary, dict):
            return self._diff_events(summary.get("diffs"), obj)
        return []

    def _on_session_diff(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        return self._diff_events(props.get("diff"), obj)

    def _diff_events(self, diffs: Any, obj: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        for d in diffs if isinstance(diffs, list) else []:
            if not isinstance(d, dict):
                continue
            path = d.get("file") or d.get("path")
            patch = d.get("patch") if isinstance(d.get("patch"), str) else None
            if not isinstance(path, str) or self._diffs.get(path, "\0") == patch:
                continue
            self._diffs[path] = patch
            out.append(FileDiff(path=path, diff=patch, raw=obj))
        return out

    def _on_part(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        part = props.get("part")
        if not isinstance(part, dict):
            return []
        mid = str(part.get("messageID"))
        if self._roles.get(mid) == "user":
            return []
        ptype = part.get("type")
        sid = str(part.get("sessionID") or props.get("sessionID"))
        parent = self.scope.parent_call(sid)
        if ptype in ("text", "reasoning"):
            return self._text_part(part, props, parent, obj)
        if ptype == "tool":
            out = self._tools.update(part, parent, obj)
            for ev in out:
                if isinstance(ev, FileDiff):
                    self._diffs[ev.path] = ev.diff
            return out
        if ptype == "step-finish":
            tokens = part.get("tokens") if isinstance(part.get("tokens"), dict) else {}
            assert isinstance(tokens, dict)
            cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
            assert isinstance(cache, dict)
            return [
                Usage(
                    input_tokens=_int(tokens.get("input")),
                    output_tokens=_int(tokens.get("output")),
                    reasoning_tokens=_int(tokens.get("reasoning")),
                    cache_read_tokens=_int(cache.get("read")),
                    cache_write_tokens=_int(cache.get("write")),
                    cost_usd=float(part["cost"])
                    if isinstance(part.get("cost"), int | float)
                    else None,
                    model=self._models.get(mid),
                    raw=obj,
                )
            ]
        if ptype == "retry":
            error = part.get("error") if isinstance(part.get("error"), dict) else {}
            assert isinstance(error, dict)
            return [StatusChanged(status="retry", message=_error_message(error), raw=obj)]
        if ptype == "compaction":
            return [StatusChanged(status="compacting", raw=obj)]
        return []

    def _text_part(
        self, part: dict[str, Any], props: dict[str, Any], parent: str | None, obj: dict[str, Any]
    ) -> list[Event]:
        pid = str(part.get("id"))
        state = self._texts.setdefault(pid, _Text(kind=str(part.get("type"))))
        if state.done:
            return []
        text = part.get("text") if isinstance(part.get("text"), str) else ""
        assert isinstance(text, str)
        out: list[Event] = []
        delta = props.get("delta")
        if isinstance(delta, str) and delta:
            out += self._delta(state, str(part.get("messageID")), delta, parent, obj)
        elif len(text) > len(state.emitted) and text.startswith(state.emitted):
            out += self._delta(
                state, str(part.get("messageID")), text[len(state.emitted) :], parent, obj
            )
        end = mapping(part.get("time")).get("end") if isinstance(part.get("time"), dict) else None
        if end is not None:
            state.done = True
            cls = TextComplete if state.kind == "text" else ReasoningComplete
            out.append(
                cls(text=text, message_id=part.get("messageID"), parent_call_id=parent, raw=obj)
            )
            if state.kind == "text" and parent is None and text:
                self.turn.last_text = text
        return out

    def _delta(
        self, state: _Text, mid: str, delta: str, parent: str | None, obj: dict[str, Any]
    ) -> list[Event]:
        delta = self._joiner.join(delta, id(state))
        state.emitted += delta
        cls = TextDelta if state.kind == "text" else ReasoningDelta
        return [cls(text=delta, message_id=mid, parent_call_id=parent, raw=obj)]

    def _on_part_delta(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        if props.get("field") != "text" or not isinstance(props.get("delta"), str):
            return []
        mid = str(props.get("messageID"))
        if self._roles.get(mid) == "user":
            return []
        state = self._texts.setdefault(str(props.get("partID")), _Text(kind="text"))
        if state.done:
            return []
        parent = self.scope.parent_call(str(props.get("sessionID")))
        return self._delta(state, mid, str(props["delta"]), parent, obj)

    def _on_todo(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        return [PlanUpdated(entries=plan_entries(props.get("todos")), raw=obj)]

    def _on_permission(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        rid, perm = str(props.get("id")), str(props.get("permission") or "unknown")
        metadata = props.get("metadata") if isinstance(props.get("metadata"), dict) else {}
        patterns = [p for p in sequence(props.get("patterns")) if isinstance(p, str)]
        tool = props.get("tool") if isinstance(props.get("tool"), dict) else {}
        assert isinstance(tool, dict)
        call_id = tool.get("callID") if isinstance(tool.get("callID"), str) else None
        if call_id:
            self._permission_calls[rid] = call_id
        kind = _tool_kind(perm, metadata)
        title = f"{perm}: {', '.join(patterns)}" if patterns else perm
        return [
            ApprovalRequested(
                request_id=rid,
                tool_name=perm,
                kind=kind,
                title=title,
                input=metadata,
                call_id=call_id,
                file=file_of(metadata),
                cmd=command_of(metadata),
                options=APPROVAL_OPTIONS,
                raw=obj,
            )
        ]

    def _on_permission_replied(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        rid, reply = str(props.get("requestID")), str(props.get("reply"))
        decision = DECISION_FOR.get(reply)
        if decision is None:
            return [UnknownEvent(vendor_type="permission.replied", raw=obj)]
        if reply == "reject" and rid in self._permission_calls:
            self._tools.denied.add(self._permission_calls[rid])
        return [ApprovalResolved(request_id=rid, decision=decision, option_id=reply, raw=obj)]

    def _on_question(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        rid = str(props.get("id"))
        questions: list[Question] = []
        for q in sequence(props.get("questions")):
            if not isinstance(q, dict) or not isinstance(q.get("question"), str):
                continue
            options = tuple(
                str(o.get("label")) for o in sequence(q.get("options")) if isinstance(o, dict)
            )
            questions.append(
                Question(
                    question=q["question"],
                    header=q.get("header") if isinstance(q.get("header"), str) else None,
                    options=options,
                    multi_select=bool(q.get("multiple")),
                )
            )
        self._questions[rid] = [q.question for q in questions]
        tool = props.get("tool") if isinstance(props.get("tool"), dict) else {}
        assert isinstance(tool, dict)
        return [
            QuestionAsked(
                request_id=rid, questions=tuple(questions), call_id=tool.get("callID"), raw=obj
            )
        ]

    def question_texts(self, request_id: str) -> list[str]:
        """The questions of a pending request, in order (answers are sent in this order)."""
        return list(self._questions.get(request_id, []))

    def _on_question_done(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        rid = str(props.get("requestID"))
        texts = self._questions.get(rid, [])
        answers: dict[str, str] = {}
        for i, answer in enumerate(sequence(props.get("answers"))):
            key = texts[i] if i < len(texts) else str(i)
            answers[key] = (
                ", ".join(str(a) for a in answer) if isinstance(answer, list) else str(answer)
            )
        return [QuestionAnswered(request_id=rid, answers=answers, raw=obj)]

    def _on_session_error(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        error = props.get("error") if isinstance(props.get("error"), dict) else {}
        assert isinstance(error, dict)
        if props.get("sessionID") in (None, self.scope.root):
            self._note_error(error)
        if error.get("name") == _ABORTED:
            return []
        return [ErrorEvent(message=_error_message(error), code=error.get("name"), raw=obj)]

    def _note_error(self, error: dict[str, Any]) -> None:
        if not self.turn.open:
            return
        if error.get("name") == _ABORTED:
            self.turn.interrupted = True
        else:
            self.turn.error = _error_message(error)

    def _on_compacted(self, obj: dict[str, Any], props: dict[str, Any]) -> list[Event]:
        return [StatusChanged(status="compacted", raw=obj)]


_HANDLERS = {
    "session.status": OpenCodeSseParser._on_status,
    "session.idle": OpenCodeSseParser._on_idle,
    "session.error": OpenCodeSseParser._on_session_error,
    "session.diff": OpenCodeSseParser._on_session_diff,
    "session.compacted": OpenCodeSseParser._on_compacted,
    "message.updated": OpenCodeSseParser._on_message,
    "message.part.updated": OpenCodeSseParser._on_part,
    "message.part.delta": OpenCodeSseParser._on_part_delta,
    "todo.updated": OpenCodeSseParser._on_todo,
    "permission.asked": OpenCodeSseParser._on_permission,
    "permission.replied": OpenCodeSseParser._on_permission_replied,
    "question.asked": OpenCodeSseParser._on_question,
    "question.replied": OpenCodeSseParser._on_question_done,
    "question.rejected": OpenCodeSseParser._on_question_done,
}
