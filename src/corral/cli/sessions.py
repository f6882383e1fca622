"""``corral sessions …`` — talk to a running ``corral serve`` over HTTP.

Every command takes ``--url`` (default ``$CORRAL_URL`` or ``http://127.0.0.1:8765``) and ``--json``;
every command sends the service token as a bearer token (``$CORRAL_TOKEN``, else the ``token`` file
``corral serve`` keeps in the corral home) and every mutation a JSON body. Images are uploaded as
bytes, so they need not lie inside the session's project. Exit codes: 0 success, 1 the service
refused, 2 bad usage, 4 unknown session or prompt.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import typer

from .._paths import read_token
from ..errors import ApiError, ConfigError
from ..events import (
    Envelope,
    StatusChanged,
    decode_envelope,
)
from ..sessions import SeqGate
from ._common import JSON_OPTION, console, err_console, print_json
from ._intent import allowed_commands_option, intent_option, parse_commands
from ._run_render import PlainRenderer

app = typer.Typer(
    name="sessions", help="Persistent agent sessions and their prompt queue.", no_args_is_help=True
)

DEFAULT_URL = "http://127.0.0.1:8765"
URL_OPTION = typer.Option(
    None, "--url", help="The corral service (default $CORRAL_URL or http://127.0.0.1:8765)."
)

IMAGE_OPTION: list[str] = typer.Option([], "--image", help="Attach an image file (repeatable).")


# ── rendering, shared with ``corral chat`` ──
def render_event(envelope: Envelope, renderer: PlainRenderer | None = None) -> str | None:
    """The text a person sees for one event, ``None`` for events with nothing to show.

    Pass one ``renderer`` for all the events of a session: the rules (``cli/_render_rules.py``,
    the same as the web app's) keep a little state, e.g. to show a prompt once.
    """
    return (renderer or PlainRenderer()).render(envelope)


# ── HTTP ──
def _base(url: str | None) -> str:
    return (url or os.environ.get("CORRAL_URL") or DEFAULT_URL).rstrip("/")


def _headers() -> dict[str, str]:
    token = read_token()
    return {"Authorization": f"Bearer {token}"} if token else {}


def _client(url: str | None, timeout: float | None = 30.0) -> httpx.Client:
    return httpx.Client(base_url=_base(url), headers=_headers(), timeout=timeout)


def call(url: str | None, method: str, path: str, body: Any = None) -> Any:
    try:
        with _client(url) as client:
            # the service refuses mutations that are not JSON, so a body-less one sends ``{}``
            payload = body if body is not None or method == "GET" else {}
            response = client.request(method, path, json=payload)
    except httpx.TransportError as exc:
        raise ApiError(
            f"no corral service at {_base(url)} ({exc}); start one with `corral serve`"
        ) from exc
    return _decode(response)


def _decode(response: httpx.Response) -> Any:
    try:
        data = response.json()
    except ValueError:
        data = {"error": response.text}
    if response.is_error:
        message = data.get("error", response.reason_phrase) if isinstance(data, dict) else str(data)
        kind = data.get("type") if isinstance(data, dict) else None
        if response.status_code == 401:
            message += (
                " (set CORRAL_TOKEN, or use the CORRAL_HOME of the running `corral serve`,"
                " whose token file the CLI reads)"
            )
        raise ApiError(message, status=response.status_code, kind=kind)
    return data


def _out(data: Any, as_json: bool, human: str) -> None:
    if as_json:
        print_json(data)
    else:
        console.print(human, highlight=False)


def _prompt_line(p: dict[str, Any]) -> str:
    return f"{p['id'][:12]}  {p['state']:<13} v{p['version']}  {p['text'][:60]!r}"


# ── commands ──
@app.command("new")
def new(
    adapter: str = typer.Argument(..., help="Adapter id."),
    model: str | None = typer.Option(None),
    effort: str | None = typer.Option(None),
    cwd: str | None = typer.Option(None, help="Working directory (default: the current one)."),
    intent: str | None = intent_option(),
    allowed_commands: str | None = allowed_commands_option(),
    url: str | None = URL_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Create and start a session."""
    body = {
        "adapter_id": adapter,
        "model": model,
        "effort": effort,
        "cwd": cwd or os.getcwd(),
        "intent": intent,
        "allowed_commands": list(parse_commands(allowed_commands)),
    }
    s = call(url, "POST", "/api/sessions", body)
    _out(s, as_json, f"{s['id']}  {s['adapter_id']}  {s['state']}")


EXTERNAL_OPTION = typer.Option(
    False,
    "--external",
    help="List the sessions in the agents' own stores (terminal sessions included), from"
    " corral's index; reads the stores directly, no service needed.",
)
AGENT_OPTION = typer.Option(None, "--agent", help="With --external: only this agent's store.")
CWD_OPTION = typer.Option(None, "--cwd", help="With --external: only sessions of this directory.")


@app.command("list")
def list_(
    url: str | None = URL_OPTION,
    as_json: bool = JSON_OPTION,
    external: bool = EXTERNAL_OPTION,
    agent: str | None = AGENT_OPTION,
    cwd: Path | None = CWD_OPTION,
) -> None:
    """List sessions."""
    if external:
        _list_external(as_json, agent, cwd)
        return
    if agent is not None or cwd is not None:
        raise ConfigError("--agent and --cwd filter --external listings only")
    rows = call(url, "GET", "/api/sessions")
    lines = [
        f"{s['id']}  {s['adapter_id']:<10} {s['state']:<12} {s['intent'] or '-':<7} seq {s['last_seq']}"
        for s in rows
    ]
    _out(rows, as_json, "\n".join(lines) or "no sessions")


def _list_external(as_json: bool, agent: str | None, cwd: Path | None) -> None:
    from datetime import UTC, datetime

    from .. import _db
    from ..server._app import Settings
    from ..sessions._external import ExternalIndex, store_ids

    stores = store_ids(agent)  # an agent without a store reader is refused before any work
    conn = _db.connect(Settings.from_env().db_path, synchronous="NORMAL")
    try:
        index = ExternalIndex(conn)
        stats = index.refresh(agents=stores)
        where = str(cwd.expanduser().absolute()) if cwd is not None else None
        found = index.sessions(agent=agent, cwd=where, env=os.environ)
    finally:
        conn.close()
    for problem in stats.problems:  # listed from the index as it was, and said so
        err_console.print(f"could not read now: {problem}", highlight=False, soft_wrap=True)
    rows = [msgspec.to_builtins(e) for e in found]
    lines = [
        f"{e.agent_id:<12} {e.sid}  "
        f"{datetime.fromtimestamp(e.mtime, UTC).strftime('%Y-%m-%d %H:%M')}  "
        f"{e.cwd or '?'}  {e.title or ''}"
        for e in found
    ]
    if as_json:
        print_json(rows)
    else:  # one line per session, never wrapped (paths and ids are copied from it)
        console.print("\n".join(lines) or "no external sessions", highlight=False, soft_wrap=True)


@app.command("show")
def show(session_id: str, url: str | None = URL_OPTION, as_json: bool = JSON_OPTION) -> None:
    """A session, its prompts and its transcript."""
    data = call(url, "GET", f"/api/sessions/{session_id}")
    events = call(url, "GET", f"/api/sessions/{session_id}/events")
    data["events"] = events
    s = data["session"]
    renderer = PlainRenderer()
    text = "".join(filter(None, (render_event(_envelope(e), renderer) for e in events)))
    prompts = "\n".join(_prompt_line(p) for p in data["prompts"])
    _out(data, as_json, f"{s['id']}  {s['adapter_id']}  {s['state']}\n{prompts}\n{text}")


def _envelope(obj: dict[str, Any]) -> Envelope:
    return decode_envelope(json.dumps(obj))


def iter_sse(url: str | None, session_id: str, after: int, follow: bool) -> Iterator[Envelope]:
    """Envelopes from the SSE stream; reconnects from the last seq and drops stale repeats."""
    gate = SeqGate(after)
    while True:
        params = {"follow": "true" if follow else "false"}
        headers = {"Last-Event-ID": str(gate.last_seq)}
        try:
            with (
                _client(url, timeout=None) as client,
                client.stream(
                    "GET", f"/api/sessions/{session_id}/stream", params=params, headers=headers
                ) as response,
            ):
                if response.is_error:
                    response.read()
                    _decode(response)
                for line in response.iter_lines():
                    if line.startswith("data: "):
                        env = decode_envelope(line[6:])
                        if gate.accept(env):
                            yield env
        except httpx.TransportError as exc:
            if not follow:
                raise ApiError(f"stream from {_base(url)} failed: {exc}") from exc
            time.sleep(1.0)  # the service restarts: reconnect from the last seq
            continue
        if not follow:
            return


@app.command("tail")
def tail(
    session_id: str,
    after: int = typer.Option(0, help="Start after this sequence number."),
    follow: bool = typer.Option(True, "--follow/--no-follow", help="Keep following live events."),
    until: str | None = typer.Option(
        None, help="Stop after an event of this type (or status, e.g. prompt.delivered)."
    ),
    url: str | None = URL_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Print a session's events (JSON lines with --json), following live ones."""
    renderer = PlainRenderer()
    for env in iter_sse(url, session_id, after, follow):
        if as_json:
            sys.stdout.write(msgspec.json.encode(env).decode() + "\n")
        elif (text := render_event(env, renderer)) is not None:
            sys.stdout.write(text)
        sys.stdout.flush()
        status = env.event.status if isinstance(env.event, StatusChanged) else None
        if until is not None and until in (env.event.__struct_config__.tag, status):
            return


@app.command("send")
def send(
    session_id: str,
    text: str,
    image: list[str] = IMAGE_OPTION,
    url: str | None = URL_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Queue a prompt (delivered in order, when no turn is running)."""
    attachments = [_upload(p) for p in image]
    p = call(
        url,
        "POST",
        f"/api/sessions/{session_id}/prompts",
        {"text": text, "attachments": attachments},
    )
    _out(p, as_json, _prompt_line(p))


def _upload(path: str) -> dict[str, str]:
    """An image attachment as uploaded bytes (JSON carries bytes as base64, as msgspec reads them)."""
    import base64

    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read image {path!r}: {exc}") from exc
    return {
        "data": base64.b64encode(data).decode("ascii"),
        "media_type": _media_type(path),
        "name": os.path.basename(path),
    }


def _media_type(path: str) -> str:
    import mimetypes

    return mimetypes.guess_type(path)[0] or "application/octet-stream"


@app.command("queue")
def queue(session_id: str, url: str | None = URL_OPTION, as_json: bool = JSON_OPTION) -> None:
    """The session's prompts and their delivery states."""
    rows = call(url, "GET", f"/api/sessions/{session_id}/prompts")
    _out(rows, as_json, "\n".join(_prompt_line(p) for p in rows) or "queue empty")


@app.command("edit")
def edit(
    prompt_id: str,
    text: str,
    version: int | None = typer.Option(None, help="Refuse unless the prompt is at this version."),
    url: str | None = URL_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Replace a queued prompt's text (images and launch policy are kept)."""
    p = call(url, "PATCH", f"/api/prompts/{prompt_id}", {"text": text, "expected_version": version})
    _out(p, as_json, _prompt_line(p))


def _prompt_action(verb: str, doc: str) -> None:
    def command(prompt_id: str, url: str | None = URL_OPTION, as_json: bool = JSON_OPTION) -> None:
        p = call(url, "POST", f"/api/prompts/{prompt_id}/{verb}")
        _out(p, as_json, _prompt_line(p))

    command.__doc__ = doc
    app.command(verb)(command)


_prompt_action("cancel", "Cancel a queued (or failed) prompt; it stays visible as canceled.")
_prompt_action(
    "retry", "Queue a failed or indeterminate prompt again (check for a duplicate first)."
)


def _session_action(verb: str, doc: str) -> None:
    def command(session_id: str, url: str | None = URL_OPTION, as_json: bool = JSON_OPTION) -> None:
        data = call(url, "POST", f"/api/sessions/{session_id}/{verb}")
        human = data.get("state", "ok") if isinstance(data, dict) else "ok"
        _out(data, as_json, f"{session_id}: {human}")

    command.__doc__ = doc
    app.command(verb)(command)


_session_action("stop", "Stop the current turn; the session and its transcript stay.")
_session_action("kill", "Tear the session down on purpose (recorded as killed).")
_session_action("repair", "Re-run the adapter's readiness check.")


@app.command("status")
def status(session_id: str, url: str | None = URL_OPTION, as_json: bool = JSON_OPTION) -> None:
    """Ask the session for a fresh status."""
    st = call(url, "GET", f"/api/sessions/{session_id}/status")
    s = st["session"]
    human = (
        f"{s['id']}  {s['state']}  running={st['running']} busy={st['busy']}\n"
        f"queue: {st['queue']}  approvals: {st['pending_approvals']}  questions: {st['pending_questions']}"
    )
    _out(st, as_json, human)


@app.command("approve")
def approve(
    session_id: str,
    request_id: str,
    decision: str = typer.Argument("allow", help="allow | allow_always | deny | cancel"),
    url: str | None = URL_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Answer an approval request."""
    data = call(
        url, "POST", f"/api/sessions/{session_id}/approvals/{request_id}", {"decision": decision}
    )
    _out(data, as_json, "ok")


from . import _sessions_handoff as _sessions_handoff  # noqa: E402  (link, handoff, resume)
