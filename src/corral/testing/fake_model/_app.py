"""The Starlette app: routes every path to the wire-API modules, logs every request.

Routing is done by hand on the path, because the same fake must accept every client's spelling
(``/v1/messages?beta=true``, ``/chat/completions`` with or without ``/v1``, Gemini's
``/v1beta/models/{model}:method``), and anything unknown must still be logged (as a 404).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import _anthropic, _chat, _gemini, _responses
from ._asgi import Frame, HoldRegistry, PlannedResponse
from ._log import RequestLog, RequestRecord, redact_headers, redact_query
from ._plan import Plan, ScenarioRunner
from ._scenario import ErrorSpec
from ._types import ParsedRequest

_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
_GEMINI_CALL = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_MODEL_ID = "fake-model"


@dataclass
class AppState:
    runner: ScenarioRunner
    log: RequestLog
    holds: HoldRegistry


@dataclass(frozen=True)
class _Wire:
    """How one wire API renders a plan: full JSON, stream frames, HTTP error, in-stream error."""

    render_json: Callable[[Plan, ParsedRequest], dict[str, Any]]
    render_stream: Callable[[Plan, ParsedRequest], list[Frame]]
    render_error: Callable[[ErrorSpec], tuple[int, dict[str, Any]]]
    render_stream_error: Callable[[ErrorSpec, Plan], Frame]


_WIRES: dict[str, _Wire] = {
    "anthropic": _Wire(
        _anthropic.render_json,
        _anthropic.render_stream,
        _anthropic.render_error,
        _anthropic.render_stream_error,
    ),
    "responses": _Wire(
        _responses.render_json,
        _responses.render_stream,
        _responses.render_error,
        _responses.render_stream_error,
    ),
    "chat": _Wire(
        _chat.render_json, _chat.render_stream, _chat.render_error, _chat.render_stream_error
    ),
    "gemini": _Wire(
        _gemini.render_json,
        _gemini.render_stream,
        _gemini.render_error,
        _gemini.render_stream_error,
    ),
}

# POST path suffix → (endpoint name, request parser); checked in order.
_POST_ROUTES: tuple[tuple[str, str, Callable[[dict[str, Any]], ParsedRequest] | None], ...] = (
    ("/messages/count_tokens", "count_tokens", None),
    ("/messages", "messages", _anthropic.parse),
    ("/responses", "responses", _responses.parse),
    ("/chat/completions", "chat/completions", _chat.parse),
)
_WIRE_OF = {"messages": "anthropic", "responses": "responses", "chat/completions": "chat"}


def create_app(state: AppState) -> Starlette:
    async def endpoint(request: Request) -> Response:
        return await _handle(state, request)

    return Starlette(routes=[Route("/{path:path}", endpoint, methods=_METHODS)])


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


async def _handle(state: AppState, request: Request) -> Response:
    raw = await request.body()
    body: Any = None
    if raw:
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
    record = RequestRecord(
        index=0,
        method=request.method,
        path=request.url.path,
        query=redact_query(dict(request.query_params)),
        headers=redact_headers(dict(request.headers)),
        body=body,
    )
    response = _route(state, request, record)
    # Logged only once the reply is planned, so a test that sees the record can release its hold.
    state.log.append(record)
    if not isinstance(response, PlannedResponse):
        record.status = response.status_code
        state.log.finish(record, "complete")
    return response  # type: ignore[return-value]


def _route(state: AppState, request: Request, record: RequestRecord) -> Response | PlannedResponse:
    path, method = request.url.path.rstrip("/"), request.method
    body = record.body if isinstance(record.body, dict) else None
    if method == "HEAD" or (method == "GET" and path == ""):
        record.endpoint = "probe"
        return Response(status_code=200)
    if method == "GET" and path.endswith("/responses"):
        # Codex tries a WebSocket upgrade first; a quick non-101 answer makes it fall back to POST.
        record.endpoint = "websocket-refused"
        return JSONResponse(
            {
                "error": {
                    "message": "websockets are not supported by the fake model",
                    "type": "invalid_request_error",
                    "code": "upgrade_refused",
                }
            },
            status_code=426 if "upgrade" in request.headers else 405,
        )
    if method == "GET" and (path.endswith("/models") or "/models/" in path):
        record.endpoint = "models"
        return JSONResponse(_models(path))
    if method != "POST":
        return _not_found(record)
    gemini = _GEMINI_CALL.search(path)
    route = next(((e, parse) for suffix, e, parse in _POST_ROUTES if path.endswith(suffix)), None)
    if gemini is None and route is None:
        return _not_found(record)
    if body is None:
        return _bad_request(record, "the request body must be a JSON object")
    try:
        if gemini is not None:
            return _gemini_call(state, request, record, body, gemini["model"], gemini["method"])
        assert route is not None
        endpoint, parse = route
        if parse is None:
            record.endpoint, record.wire_api = endpoint, "anthropic"
            return JSONResponse(_anthropic.count_tokens(body))
        return _generate(state, record, _WIRES[_WIRE_OF[endpoint]], parse(body), endpoint)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        # A request shape the fake does not understand is logged and refused, never a crash.
        return _bad_request(record, f"the fake model could not read this request: {exc!r}")


def _bad_request(record: RequestRecord, message: str) -> Response:
    record.endpoint = "bad-request"
    record.step = None
    return JSONResponse({"error": {"message": message, "code": 400}}, status_code=400)


def _not_found(record: RequestRecord) -> Response:
    record.endpoint = "not-found"
    return JSONResponse(
        {
            "error": {
                "message": f"fake model: no route for {record.method} {record.path}",
                "code": 404,
            }
        },
        status_code=404,
    )


def _models(path: str) -> dict[str, Any]:
    if path.startswith("/v1beta"):
        entry = {
            "name": f"models/{_MODEL_ID}",
            "displayName": "Fake Model",
            "supportedGenerationMethods": [
                "generateContent",
                "streamGenerateContent",
                "countTokens",
                "embedContent",
            ],
            "inputTokenLimit": 128000,
            "outputTokenLimit": 8192,
        }
        return entry if "/models/" in path else {"models": [entry]}
    entry = {
        "id": _MODEL_ID,
        "object": "model",
        "created": 0,
        "owned_by": "corral",
        "type": "model",
        "display_name": "Fake Model",
        "created_at": "2026-01-01T00:00:00Z",
    }
    if "/models/" in path:
        return entry
    return {
        "object": "list",
        "data": [entry],
        "has_more": False,
        "first_id": _MODEL_ID,
        "last_id": _MODEL_ID,
    }


def _gemini_call(
    state: AppState,
    request: Request,
    record: RequestRecord,
    body: dict[str, Any],
    model: str,
    method: str,
) -> Response | PlannedResponse:
    record.wire_api, record.model = "gemini", model
    if method == "countTokens":
        record.endpoint = "countTokens"
        return JSONResponse(_gemini.count_tokens(body))
    if method in ("embedContent", "batchEmbedContents"):
        record.endpoint = method
        return JSONResponse(_gemini.embed(body))
    if method not in ("generateContent", "streamGenerateContent"):
        return _not_found(record)
    stream = method == "streamGenerateContent"
    parsed = _gemini.parse(body, model, stream)
    # Without alt=sse the stream endpoint answers one JSON array.
    as_array = stream and request.query_params.get("alt") != "sse"
    if as_array:
        parsed.stream = False
    return _generate(state, record, _WIRES["gemini"], parsed, method, json_array=as_array)


def _generate(
    state: AppState,
    record: RequestRecord,
    wire: _Wire,
    parsed: ParsedRequest,
    endpoint: str,
    json_array: bool = False,
) -> PlannedResponse:
    decision = state.runner.decide(parsed)
    plan = decision.plan
    record.endpoint = endpoint
    record.wire_api = parsed.wire_api
    record.model = parsed.model
    record.stream = parsed.stream
    record.is_main = decision.is_main
    record.turn = decision.turn
    record.tool_names = [t.name for t in parsed.tools]
    record.tool_results = parsed.tool_results
    record.last_is_tool_result = parsed.last_is_tool_result
    record.has_image = parsed.has_image
    record.user_texts = parsed.user_texts
    record.messages = parsed.messages
    record.step = plan.label
    headers = {"content-type": "application/json"}
    status = 200
    error = plan.error
    if error is not None and error.after_chunks is not None and parsed.stream:
        frames = wire.render_stream(plan, parsed)[: error.after_chunks]
        frames.append(wire.render_stream_error(error, plan))
        headers = {"content-type": "text/event-stream", "cache-control": "no-cache"}
    elif error is not None:
        status, error_body = wire.render_error(error)
        frames = [Frame(_json_bytes(error_body))]
        if error.retry_after is not None:
            headers["retry-after"] = f"{error.retry_after:g}"
    elif parsed.stream:
        frames = wire.render_stream(plan, parsed)
        headers = {"content-type": "text/event-stream", "cache-control": "no-cache"}
    elif json_array:
        frames = [Frame(_json_bytes([wire.render_json(plan, parsed)]))]
    else:
        frames = [Frame(_json_bytes(wire.render_json(plan, parsed)))]
    if len(frames) == 1 and headers["content-type"] == "application/json":
        headers["content-length"] = str(len(frames[0].data))
    record.status = status

    def done(outcome: str) -> None:
        state.log.finish(record, outcome)

    return PlannedResponse(
        status,
        headers,
        frames,
        hold=plan.hold,
        disconnect_after=plan.disconnect_after,
        holds=state.holds,
        on_done=done,
        on_frame=lambda sent: state.log.progress(record, sent),
    )
