"""Codex app-server requests *to* the client — approvals and user-input questions — as events,
and the answers to them (pure functions; the driver sends them)."""

from __future__ import annotations

from typing import Any

from ..events import (
    ApprovalDecision,
    ApprovalOption,
    ApprovalRequested,
    Event,
    Question,
    QuestionAsked,
    ToolKind,
)
from ._codex_vocab import (
    COMMAND_APPROVAL,
    FILE_APPROVAL,
    LEGACY_COMMAND_APPROVAL,
    LEGACY_PATCH_APPROVAL,
    USER_INPUT_REQUEST,
    approval_options,
    decision_value,
)
from ._total import sequence

APPROVAL_METHODS = frozenset(
    {COMMAND_APPROVAL, FILE_APPROVAL, LEGACY_COMMAND_APPROVAL, LEGACY_PATCH_APPROVAL}
)


def request_events(
    request_id: str, method: str, params: dict[str, Any], item: dict[str, Any]
) -> list[Event]:
    """``item`` is the thread item the request is about, if the parser saw it start."""
    if method == USER_INPUT_REQUEST:
        return [_question(request_id, params)]
    if method not in APPROVAL_METHODS:
        return []
    item_id = params.get("itemId") or params.get("callId")
    options = tuple(
        ApprovalOption(id=oid, label=label, decision=decision)
        for oid, label, decision in approval_options(method, params)
    )
    if method in (COMMAND_APPROVAL, LEGACY_COMMAND_APPROVAL):
        cmd = params.get("command")
        if isinstance(cmd, list):
            cmd = " ".join(str(c) for c in cmd)
        cmd = cmd or item.get("command")
        return [
            ApprovalRequested(
                request_id=str(request_id),
                tool_name="shell",
                kind=ToolKind.COMMAND,
                title=params.get("reason") or cmd,
                input=params,
                call_id=str(item_id) if item_id is not None else None,
                cmd=cmd,
                options=options,
                raw=params,
            )
        ]
    paths = [c.get("path") for c in sequence(item.get("changes")) if isinstance(c, dict)]
    if not paths and isinstance(params.get("fileChanges"), dict):
        paths = list(params["fileChanges"])
    return [
        ApprovalRequested(
            request_id=str(request_id),
            tool_name="apply_patch",
            kind=ToolKind.EDIT,
            title=params.get("reason") or (f"edit {paths[0]}" if paths else "apply patch"),
            input=params,
            call_id=str(item_id) if item_id is not None else None,
            file=paths[0] if paths else None,
            options=options,
            raw=params,
        )
    ]


def _question(request_id: str, params: dict[str, Any]) -> QuestionAsked:
    questions = tuple(
        Question(
            question=str(q.get("question", "")),
            header=q["header"] if isinstance(q.get("header"), str) else None,
            options=tuple(
                str(o.get("label", "")) for o in sequence(q.get("options")) if isinstance(o, dict)
            ),
        )
        for q in sequence(params.get("questions"))
        if isinstance(q, dict)
    )
    item_id = params.get("itemId")
    return QuestionAsked(
        request_id=request_id,
        questions=questions,
        call_id=str(item_id) if item_id is not None else None,
        raw=params,
    )


def question_result(params: dict[str, Any], answers: dict[str, str]) -> dict[str, Any]:
    """The ``ToolRequestUserInputResponse`` for ``answers`` (question text, or id, → answer)."""
    out: dict[str, Any] = {}
    for q in sequence(params.get("questions")):
        if not isinstance(q, dict):
            continue
        answer = answers.get(str(q.get("question")), answers.get(str(q.get("id"))))
        out[str(q.get("id"))] = {"answers": [answer] if answer is not None else []}
    return {"answers": out}


def approval_result(
    method: str,
    params: dict[str, Any],
    decision: ApprovalDecision,
    option_id: str | None = None,
) -> dict[str, Any]:
    """The JSON-RPC ``result`` answering an approval request.

    ``option_id`` (an ``ApprovalOption.id`` from the event) wins; otherwise the decision maps to
    the first offered option with that meaning, else to the plain wire value (``decline`` is
    accepted by codex 0.171 even when ``availableDecisions`` omits it).
    """
    return {"decision": decision_value(method, params, decision, option_id)}
