"""The control-protocol half of the stream-json parser: permission requests and our answers."""

from __future__ import annotations

from typing import Any

from ..events import (
    ApprovalDecision,
    ApprovalOption,
    ApprovalRequested,
    ApprovalResolved,
    Event,
    QuestionAnswered,
    QuestionAsked,
    UnknownEvent,
)
from ._claude_tools import QUESTION_TOOLS, questions, tool_cmd, tool_file, tool_kind, tool_title
from ._total import mapping, total

APPROVAL_OPTIONS = (
    ApprovalOption(id="allow", label="Allow", decision=ApprovalDecision.ALLOW),
    ApprovalOption(
        id="allow_always", label="Allow for this session", decision=ApprovalDecision.ALLOW_ALWAYS
    ),
    ApprovalOption(id="deny", label="Deny", decision=ApprovalDecision.DENY),
)


class ControlMixin:
    """``can_use_tool`` requests in, our ``control_response`` answers out (``feed_sent``)."""

    _requests: dict[str, dict[str, Any]]
    _denied: set[str]
    _turn_open: bool

    @total
    def feed_sent(self, obj: Any) -> list[Event]:
        if not isinstance(obj, dict):
            return []
        if obj.get("type") == "user":
            self._turn_open = True
            return []
        if obj.get("type") != "control_response":
            return []
        response = mapping(obj.get("response"))
        request_id = response.get("request_id")
        if not isinstance(request_id, str):
            return []
        request = self._requests.pop(request_id, None)
        if request is None:
            return []
        answer = mapping(response.get("response"))
        behavior = answer.get("behavior")
        call_id = request.get("tool_use_id")
        updated = answer.get("updatedInput")
        if request.get("tool_name") in QUESTION_TOOLS and behavior == "allow":
            answers = updated.get("answers") if isinstance(updated, dict) else None
            return [QuestionAnswered(request_id=request_id, answers=dict(answers or {}), raw=obj)]
        if behavior == "allow":
            decision = (
                ApprovalDecision.ALLOW_ALWAYS
                if answer.get("updatedPermissions")
                else ApprovalDecision.ALLOW
            )
        else:
            decision = ApprovalDecision.DENY
            if isinstance(call_id, str):
                self._denied.add(call_id)
        return [
            ApprovalResolved(
                request_id=request_id,
                decision=decision,
                option_id=decision.value,
                message=answer.get("message"),
                raw=obj,
            )
        ]

    def pending_request(self, request_id: str) -> dict[str, Any] | None:
        """The ``can_use_tool`` request still waiting for our answer (the adapter needs its input)."""
        return self._requests.get(request_id)

    # ── handlers ──
    def _control_request(self, obj: dict[str, Any]) -> list[Event]:
        request = mapping(obj.get("request"))
        request_id = obj.get("request_id")
        if request.get("subtype") != "can_use_tool" or not isinstance(request_id, str):
            return [UnknownEvent(raw=obj, vendor_type=f"control_request/{request.get('subtype')}")]
        self._requests[request_id] = request
        name = request.get("tool_name")
        name = name if isinstance(name, str) else "?"
        tool_input = request.get("input")
        call_id = request.get("tool_use_id")
        if name in QUESTION_TOOLS:
            return [
                QuestionAsked(
                    request_id=request_id,
                    questions=questions(tool_input),
                    call_id=call_id,
                    raw=obj,
                )
            ]
        return [
            ApprovalRequested(
                request_id=request_id,
                tool_name=name,
                kind=tool_kind(name, tool_input),
                title=request.get("title") or tool_title(name, tool_input),
                input=tool_input,
                call_id=call_id,
                file=tool_file(tool_input),
                cmd=tool_cmd(tool_input),
                options=APPROVAL_OPTIONS,
                raw=obj,
            )
        ]

    def _control_cancel(self, obj: dict[str, Any]) -> list[Event]:
        request_id = obj.get("request_id")
        if isinstance(request_id, str) and self._requests.pop(request_id, None) is not None:
            return [
                ApprovalResolved(request_id=request_id, decision=ApprovalDecision.CANCEL, raw=obj)
            ]
        return []
