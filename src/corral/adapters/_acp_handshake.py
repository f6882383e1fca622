"""The ACP handshake steps: ``initialize``, ``authenticate``, and opening the session.

Bodies are plain JSON, key for key what the SDK's schema types dump
(``tests/unit/acp/test_wire_bodies.py`` compares them with ``acp.schema``); results are kept raw
(what the driver reads). The SDK's pydantic schema is not imported on a run: it costs about a
second of CPU (decision 039); :attr:`AcpAdapter.init` parses the ``initialize`` answer with it
only when someone asks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._process import JsonRpcClient
from .._version import __version__
from ..errors import JsonRpcError, UnsupportedOperation

AUTH_REQUIRED = -32000
"""ACP's error code for ``session/new`` before ``authenticate``."""
PROTOCOL_VERSION = 1
"""The ACP version corral speaks: the SDK's ``acp.PROTOCOL_VERSION`` (a test keeps them equal)."""


def client_capabilities(*, read: bool, write: bool, terminal: bool) -> dict[str, Any]:
    """``ClientCapabilities`` as the SDK dumps it (with its default ``auth``)."""
    return {
        "fs": {"readTextFile": read, "writeTextFile": write},
        "terminal": terminal,
        "auth": {"terminal": False},
    }


async def initialize(client: JsonRpcClient, capabilities: dict[str, Any]) -> dict[str, Any]:
    """``initialize``; the agent's raw answer (``JsonRpcError`` when it is not an object)."""
    request = {
        "protocolVersion": PROTOCOL_VERSION,
        "clientCapabilities": capabilities,
        "clientInfo": {"name": "corral", "title": "corral", "version": __version__},
    }
    raw = await client.request("initialize", request)
    if not isinstance(raw, dict):
        raise JsonRpcError(-32603, f"initialize returned {raw!r}")
    return raw


async def authenticate(
    client: JsonRpcClient, init_raw: dict[str, Any], preferred: Sequence[str]
) -> bool:
    """``authenticate`` with the first preferred method the agent offers; False if none."""
    offered = [m.get("id") for m in init_raw.get("authMethods") or [] if isinstance(m, dict)]
    for method_id in preferred:
        if method_id in offered:
            await client.request("authenticate", {"methodId": method_id})
            return True
    return False


async def open_session(
    client: JsonRpcClient,
    init_raw: dict[str, Any],
    *,
    cwd: str,
    resume_session_id: str | None,
    agent_id: str,
    before_load: Callable[[], None] = lambda: None,
) -> tuple[str, dict[str, Any]]:
    """``session/new``, or for a resume ``session/load`` (preferred) / ``session/resume``.

    Returns the session id and the raw result. ``before_load`` runs just before a load (its
    history replay follows).
    """
    base: dict[str, Any] = {"cwd": cwd, "mcpServers": []}
    if not resume_session_id:
        result = await client.request("session/new", base)
        return str(result["sessionId"]), result
    caps = init_raw.get("agentCapabilities") or {}
    params = {**base, "sessionId": resume_session_id}
    if caps.get("loadSession"):
        before_load()
        result = await client.request("session/load", params)
    elif (caps.get("sessionCapabilities") or {}).get("resume") is not None:
        result = await client.request("session/resume", params)
    else:
        raise UnsupportedOperation(agent_id, "resume")
    return resume_session_id, result if isinstance(result, dict) else {}


def agent_field(init_raw: dict[str, Any], name: str) -> str | None:
    info = init_raw.get("agentInfo")
    value = info.get(name) if isinstance(info, dict) else None
    return value if isinstance(value, str) else None
