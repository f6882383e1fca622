"""The ACP handshake steps: ``initialize``, ``authenticate``, and opening the session.

Bodies are built with the SDK's schema types; results are kept raw (what the driver reads) and,
for ``initialize``, also parsed into ``acp.schema.InitializeResponse`` when they validate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._process import JsonRpcClient
from .._version import __version__
from ..errors import JsonRpcError, UnsupportedOperation

if TYPE_CHECKING:
    from acp.schema import ClientCapabilities, InitializeResponse

AUTH_REQUIRED = -32000
"""ACP's error code for ``session/new`` before ``authenticate``."""


async def initialize(
    client: JsonRpcClient, capabilities: ClientCapabilities
) -> tuple[dict[str, Any], InitializeResponse | None]:
    from acp import PROTOCOL_VERSION  # the SDK's pydantic schema: once the agent runs
    from acp.schema import Implementation, InitializeRequest, InitializeResponse
    from pydantic import ValidationError

    request = InitializeRequest(
        protocol_version=PROTOCOL_VERSION,
        client_capabilities=capabilities,
        client_info=Implementation(name="corral", title="corral", version=__version__),
    )
    raw = await client.request(
        "initialize", request.model_dump(mode="json", by_alias=True, exclude_none=True)
    )
    if not isinstance(raw, dict):
        raise JsonRpcError(-32603, f"initialize returned {raw!r}")
    try:
        typed: InitializeResponse | None = InitializeResponse.model_validate(raw)
    except ValidationError:
        typed = None
    return raw, typed


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
