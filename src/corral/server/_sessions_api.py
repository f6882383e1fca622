"""REST routes for sessions, their prompt queue, approvals/answers, lifecycle and view state.

Every body is decoded by :func:`_body` (msgspec validates it, :func:`._limits.check_fields` bounds
its fields); a ``cwd`` and attachment paths are confined by :mod:`._confine`.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..adapters.base import supported_options
from ..registry import Profile, load_profile
from ..sessions import SessionManager, SessionSpec, ViewState
from ..sessions._resume_check import fresh_session
from ._bodies import (
    ApprovalAnswer,
    CreateSession,
    EditPrompt,
    QuestionAnswer,
    ResumeBody,
    SendPrompt,
    ViewUpdate,
)
from ._confine import check_cwd, confine_attachments
from ._demo import DEMO_PREFIX
from ._limits import Limits, check_fields
from ._models_api import check_effort, listed_models, probe_lock
from ._responses import Refusal, json_response

T = TypeVar("T")


def _manager(request: Request) -> SessionManager:
    manager: SessionManager = request.app.state.manager
    return manager


async def _body(request: Request, kind: type[T]) -> T:
    try:
        body = msgspec.json.decode(await request.body() or b"{}", type=kind)
    except RecursionError:
        raise Refusal(422, "ValidationError", "the request body is nested too deeply") from None
    limits: Limits = request.app.state.limits
    check_fields(body, limits)
    return body


def _project(request: Request, session_id: str) -> str | None:
    # the committed record is enough for its cwd: no wait for the transcript writes under way
    return _manager(request).store.record(session_id).cwd


def _sid(request: Request) -> str:
    return str(request.path_params["session_id"])


def _pid(request: Request) -> str:
    return str(request.path_params["prompt_id"])


async def show_adapter(request: Request) -> Response:
    """What an adapter takes at launch: its enforceable intents and launch options (as data)."""
    cls = _manager(request).resolver(str(request.path_params["adapter_id"]))
    return json_response(
        {
            "id": cls.agent_id,
            "display_name": cls.display_name,
            "enforceable_intents": sorted(i.value for i in cls.enforceable_intents),
            "intent_refusals": dict(cls.intent_refusals),
            "launch_options": sorted(supported_options(cls)),
            "capabilities": cls.capabilities(),
        }
    )


async def list_sessions(request: Request) -> Response:
    return json_response(_manager(request).list_sessions())


async def create_session(request: Request) -> Response:
    body = await _body(request, CreateSession)
    check_cwd(body.cwd)
    profile = load_profile(body.adapter_id)  # what is left out comes from the adapter's profile
    spec = SessionSpec(
        adapter_id=body.adapter_id,
        model=profile.model if body.model is msgspec.UNSET else body.model,
        effort=profile.effort if body.effort is msgspec.UNSET else body.effort,
        cwd=body.cwd,
        intent=profile.intent if body.intent is msgspec.UNSET else body.intent,
        allowed_commands=body.allowed_commands,
    )  # the manager's launch gate re-verifies a stale adapter first (corral.registry)
    try:  # an effort the adapter's live list does not offer for that model is refused
        check_effort(
            _manager(request).resolver(spec.adapter_id),
            Profile(model=spec.model, effort=spec.effort),
            listed_models(request.app.state, spec.adapter_id),
        )
    except ValueError as exc:
        raise Refusal(422, "ValidationError", str(exc), field="effort") from None
    lock = probe_lock(request.app.state, spec.adapter_id)
    if body.start and spec.adapter_id.startswith(DEMO_PREFIX):
        # A demo agent's home is shared: no probe may start an agent there while this one starts.
        async with lock:
            record = await _manager(request).create_session(spec, start=True)
    else:
        if body.start:  # after any model probe of this adapter has stopped its agent
            async with lock:
                pass
        record = await _manager(request).create_session(spec, start=body.start)
    return json_response(record, 201)


async def show_session(request: Request) -> Response:
    mgr = _manager(request)
    sid = _sid(request)
    return json_response({"session": mgr.get_session(sid), "prompts": mgr.prompts(sid)})


async def transcript(request: Request) -> Response:
    raw = request.query_params.get("after", "0")
    try:
        after = int(raw)
    except ValueError:
        raise Refusal(422, "ValidationError", f"after must be an integer, not {raw!r}") from None
    return json_response(_manager(request).events(_sid(request), after=after))


async def status(request: Request) -> Response:
    return json_response(await _manager(request).status(_sid(request)))


async def start(request: Request) -> Response:
    return json_response(await _manager(request).start(_sid(request)))


async def stop(request: Request) -> Response:
    await _manager(request).stop_turn(_sid(request))
    return json_response({"ok": True})


async def kill(request: Request) -> Response:
    return json_response(await _manager(request).kill(_sid(request)))


async def resume(request: Request) -> Response:
    body = await _body(request, ResumeBody)
    if body.fresh:  # the offer of a refused resume (docs/handoff.md#resume-safety)
        return json_response(await fresh_session(_manager(request), _sid(request)), 201)
    return json_response(await _manager(request).resume(_sid(request)))


async def repair(request: Request) -> Response:
    return json_response(await _manager(request).repair(_sid(request)))


async def list_prompts(request: Request) -> Response:
    return json_response(_manager(request).prompts(_sid(request)))


async def send_prompt(request: Request) -> Response:
    body = await _body(request, SendPrompt)
    sid = _sid(request)
    # the project is read only for attachments (no record read per prompt on the hot path)
    attachments = (
        confine_attachments(body.attachments, _project(request, sid)) if body.attachments else ()
    )
    prompt = await _manager(request).asend(
        sid, body.text, attachments=attachments, launch=body.launch
    )
    return json_response(prompt, 201)


async def get_prompt(request: Request) -> Response:
    return json_response(_manager(request).queue.get(_pid(request)))


async def edit_prompt(request: Request) -> Response:
    body = await _body(request, EditPrompt)
    prompt = await _manager(request).aedit_prompt(
        _pid(request), body.text, expected_version=body.expected_version
    )
    return json_response(prompt)


async def cancel_prompt(request: Request) -> Response:
    return json_response(await _manager(request).acancel_prompt(_pid(request)))


async def retry_prompt(request: Request) -> Response:
    return json_response(await _manager(request).aretry_prompt(_pid(request)))


async def answer_approval(request: Request) -> Response:
    body = await _body(request, ApprovalAnswer)
    await _manager(request).respond_approval(
        _sid(request),
        str(request.path_params["request_id"]),
        body.decision,
        option_id=body.option_id,
        message=body.message,
    )
    return json_response({"ok": True})


async def answer_question(request: Request) -> Response:
    body = await _body(request, QuestionAnswer)
    await _manager(request).answer_question(
        _sid(request), str(request.path_params["request_id"]), body.answers
    )
    return json_response({"ok": True})


async def get_view(request: Request) -> Response:
    return json_response(_manager(request).view(_sid(request)))


async def put_view(request: Request) -> Response:
    body = await _body(request, ViewUpdate)
    sid = _sid(request)
    fields: dict[str, Any] = msgspec.structs.asdict(body)
    fields["draft_attachments"] = confine_attachments(
        body.draft_attachments, _project(request, sid)
    )
    return json_response(_manager(request).save_view(sid, ViewState(**fields)))


S = "/api/sessions/{session_id}"
P = "/api/prompts/{prompt_id}"

LIVE_ROUTES = [Route(f"{S}/prompts", send_prompt, methods=["POST"])]
"""The route a steady load calls most, first in the app's list (Starlette tries each in order)."""

ROUTES = [
    Route("/api/adapters/{adapter_id}", show_adapter, methods=["GET"]),
    Route("/api/sessions", list_sessions, methods=["GET"]),
    Route("/api/sessions", create_session, methods=["POST"]),
    Route(S, show_session, methods=["GET"]),
    Route(f"{S}/events", transcript, methods=["GET"]),
    Route(f"{S}/status", status, methods=["GET"]),
    Route(f"{S}/start", start, methods=["POST"]),
    Route(f"{S}/stop", stop, methods=["POST"]),
    Route(f"{S}/kill", kill, methods=["POST"]),
    Route(f"{S}/resume", resume, methods=["POST"]),
    Route(f"{S}/repair", repair, methods=["POST"]),
    Route(f"{S}/prompts", list_prompts, methods=["GET"]),
    Route(f"{S}/approvals/{{request_id}}", answer_approval, methods=["POST"]),
    Route(f"{S}/questions/{{request_id}}", answer_question, methods=["POST"]),
    Route(f"{S}/view", get_view, methods=["GET"]),
    Route(f"{S}/view", put_view, methods=["PUT"]),
    Route(P, get_prompt, methods=["GET"]),
    Route(P, edit_prompt, methods=["PATCH"]),
    Route(f"{P}/cancel", cancel_prompt, methods=["POST"]),
    Route(f"{P}/retry", retry_prompt, methods=["POST"]),
]
