"""The OpenAPI 3.1 document of ``corral serve`` (``GET /api/openapi.json``).

Paths are written here by hand (a test checks they match the app's routes exactly); the schemas
of bodies and records are generated from the msgspec types the handlers decode and encode, so
they cannot drift. See docs/decisions/005-sessions-and-queue.md.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .._version import __version__
from ..events import Envelope
from ..sessions import PromptRecord, SessionRecord, SessionStatus, ViewState
from . import (
    _adapters_api,
    _board_api,
    _external_api,
    _files_api,
    _handoff_api,
    _models_api,
    _overview_api,
    _settings_api,
)
from ._bodies import (
    ApprovalAnswer,
    CreateSession,
    EditPrompt,
    ErrorBody,
    QuestionAnswer,
    ResumeBody,
    SendPrompt,
    ViewUpdate,
)

_TYPES: tuple[Any, ...] = (
    CreateSession,
    SendPrompt,
    EditPrompt,
    ApprovalAnswer,
    QuestionAnswer,
    ViewUpdate,
    ResumeBody,
    ErrorBody,
    SessionRecord,
    PromptRecord,
    SessionStatus,
    ViewState,
    Envelope,
    *_adapters_api.OPENAPI_TYPES,
    *_external_api.OPENAPI_TYPES,
    *_models_api.OPENAPI_TYPES,
    *_files_api.OPENAPI_TYPES,
    *_overview_api.OPENAPI_TYPES,
    *_board_api.OPENAPI_TYPES,
    *_settings_api.OPENAPI_TYPES,
    *_handoff_api.OPENAPI_TYPES,
)


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _op(
    summary: str,
    *,
    body: str | None = None,
    returns: dict[str, Any] | None = None,
    status: str = "200",
    params: tuple[str, ...] = (),
    query: tuple[tuple[str, str], ...] = (),
    mutating: bool = False,
) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "responses": {}}
    parameters = [
        {"name": p, "in": "path", "required": True, "schema": {"type": "string"}} for p in params
    ]
    parameters += [
        {"name": n, "in": "query", "required": False, "schema": {"type": t}} for n, t in query
    ]
    if parameters:
        op["parameters"] = parameters
    if body:
        op["requestBody"] = {"required": True, **_json(_ref(body))}
    ok = {"description": "OK", **_json(returns or {"type": "object"})}
    op["responses"][status] = ok
    op["responses"]["default"] = {"description": "An error", **_json(_ref("ErrorBody"))}
    if mutating:
        op["description"] = "Requires `Content-Type: application/json`."
    return op


def _paths() -> dict[str, dict[str, Any]]:
    sid, pid = ("session_id",), ("prompt_id",)
    session, prompt = _ref("SessionRecord"), _ref("PromptRecord")
    ok = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    s, p = "/api/sessions/{session_id}", "/api/prompts/{prompt_id}"
    return {
        "/api/health": {"get": {**_op("Liveness and version"), "security": []}},
        "/api/auth/codes": {
            "post": _op(
                "A new one-time login code and its URL (GET /auth/login?code=… sets the cookie)",
                returns={
                    "type": "object",
                    "properties": {"code": {"type": "string"}, "url": {"type": "string"}},
                },
                mutating=True,
            )
        },
        "/api/openapi.json": {"get": _op("This document")},
        "/api/adapters": {
            "get": _op(
                "Adapters: installed, pinned, capabilities, intents, repair (and demo variants)",
                query=(("refresh", "boolean"),),
                returns={"type": "array", "items": _ref("AdapterRow")},
            )
        },
        "/api/external-sessions": {
            "get": _op(
                "Sessions in the agents' own stores (terminal ones included), from corral's index",
                query=(("agent", "string"), ("cwd", "string"), ("refresh", "boolean")),
                returns=_ref("ExternalSessionList"),
            )
        },
        "/api/adapters/{adapter_id}/models": {
            "get": _op(
                "The models an adapter lists live (adapters with provides_models), each with "
                "its efforts, else why not; probe=false answers from the cache only",
                params=("adapter_id",),
                query=(("probe", "boolean"),),
                returns=_ref("ModelList"),
            )
        },
        "/api/settings": {
            "get": _op(
                "The service settings: webhook and its last delivery, defaults, stale profiles",
                returns=_ref("SettingsView"),
            )
        },
        "/api/settings/conformance": {
            "get": _op(
                "Recorded conformance results per agent and CLI version (read-only)",
                returns={"type": "array", "items": _ref("AgentConformance")},
            )
        },
        "/api/settings/adapters/{adapter_id}/verify": {
            "post": _op(
                "Verify an adapter's launch now and record it (clears a stale profile)",
                params=("adapter_id",),
                returns=_ref("VerifyState"),
                mutating=True,
            )
        },
        "/api/settings/webhook": {
            "put": _op(
                "Set (http/https) or clear the attention webhook URL",
                body="WebhookBody",
                returns=_ref("SettingsView"),
                mutating=True,
            )
        },
        "/api/settings/adapters/{adapter_id}/defaults": {
            "put": _op(
                "The adapter's profile: the model, effort and intent of a launch naming none "
                "(changing it marks the adapter stale: the next launch re-verifies)",
                params=("adapter_id",),
                body="Profile",
                returns=_ref("SettingsView"),
                mutating=True,
            )
        },
        "/api/overview": {
            "get": _op(
                "Every session with attention, pending cards, usage and last activity",
                returns={"type": "array", "items": _ref("SessionOverview")},
            )
        },
        "/api/adapters/{adapter_id}": {
            "get": _op(
                "An adapter's enforceable intents, launch options and capabilities",
                params=("adapter_id",),
            )
        },
        "/api/sessions": {
            "get": _op("List sessions", returns={"type": "array", "items": session}),
            "post": _op(
                "Create (and start) a session",
                body="CreateSession",
                returns=session,
                status="201",
                mutating=True,
            ),
        },
        s: {
            "get": _op(
                "A session and its prompts",
                params=sid,
                returns={
                    "type": "object",
                    "properties": {
                        "session": session,
                        "prompts": {"type": "array", "items": prompt},
                    },
                },
            )
        },
        f"{s}/events": {
            "get": _op(
                "The stored transcript (envelopes) after a sequence number",
                params=sid,
                query=(("after", "integer"),),
                returns={"type": "array", "items": _ref("Envelope")},
            )
        },
        f"{s}/stream": {
            "get": {
                **_op(
                    "Server-sent events: replay after Last-Event-ID or ?after=, then follow",
                    params=sid,
                    query=(("after", "integer"), ("follow", "boolean")),
                ),
                "responses": {
                    "200": {
                        "description": "text/event-stream; id = seq, data = an Envelope",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}},
                    }
                },
            }
        },
        f"{s}/files": {
            "get": _op(
                "@file completions: project files whose path contains q (inside the cwd only)",
                params=sid,
                query=(("q", "string"),),
                returns=_ref("FileMatches"),
            )
        },
        f"{s}/status": {"get": _op("A fresh status", params=sid, returns=_ref("SessionStatus"))},
        f"{s}/start": {
            "post": _op("Start a created session", params=sid, returns=session, mutating=True)
        },
        f"{s}/stop": {"post": _op("Stop the current turn", params=sid, returns=ok, mutating=True)},
        f"{s}/kill": {"post": _op("Kill the session", params=sid, returns=session, mutating=True)},
        f"{s}/resume": {
            "post": _op(
                "Resume a failed/disconnected session (checked against the vendor's store);"
                " with {fresh: true}, a fresh session carrying a summary (201)",
                params=sid,
                body="ResumeBody",
                returns=session,
                mutating=True,
            )
        },
        f"{s}/repair": {"post": _op("Re-run adapter readiness", params=sid, mutating=True)},
        f"{s}/prompts": {
            "get": _op("The prompt queue", params=sid, returns={"type": "array", "items": prompt}),
            "post": _op(
                "Queue a prompt",
                params=sid,
                body="SendPrompt",
                returns=prompt,
                status="201",
                mutating=True,
            ),
        },
        f"{s}/approvals/{{request_id}}": {
            "post": _op(
                "Answer an approval request",
                params=(*sid, "request_id"),
                body="ApprovalAnswer",
                returns=ok,
                mutating=True,
            )
        },
        f"{s}/questions/{{request_id}}": {
            "post": _op(
                "Answer a question",
                params=(*sid, "request_id"),
                body="QuestionAnswer",
                returns=ok,
                mutating=True,
            )
        },
        f"{s}/view": {
            "get": _op("Draft and view state", params=sid, returns=_ref("ViewState")),
            "put": _op(
                "Save draft and view state",
                params=sid,
                body="ViewUpdate",
                returns=_ref("ViewState"),
                mutating=True,
            ),
        },
        p: {
            "get": _op("One prompt", params=pid, returns=prompt),
            "patch": _op(
                "Edit a queued prompt", params=pid, body="EditPrompt", returns=prompt, mutating=True
            ),
        },
        f"{p}/cancel": {
            "post": _op(
                "Cancel a queued or failed prompt", params=pid, returns=prompt, mutating=True
            )
        },
        f"{p}/retry": {
            "post": _op(
                "Retry a failed or indeterminate prompt", params=pid, returns=prompt, mutating=True
            )
        },
        **_board_api.openapi_paths(),
        **_handoff_api.openapi_paths(),
    }


def openapi_document() -> dict[str, Any]:
    _, components = msgspec.json.schema_components(
        _TYPES, ref_template="#/components/schemas/{name}"
    )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "corral",
            "version": __version__,
            "description": "Sessions, the durable prompt queue and their event streams.",
        },
        "paths": _paths(),
        "security": [{"bearer": []}, {"cookie": []}],
        "components": {
            "schemas": components,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "The service token (the file `token` in the corral home).",
                },
                "cookie": {
                    "type": "apiKey",
                    "in": "cookie",
                    "name": "corral_auth",
                    "description": "Set by GET /auth/login?code=<one-time code>.",
                },
            },
        },
    }
