"""Process plumbing shared by every driver: the line-transport seam and the subprocess transport, the
HTTP-transport seam and the server transport, and a JSON-RPC client on top.

The names load on first use (PEP 562): a stream-json run never imports the HTTP, SSE or
JSON-RPC modules (decision 039).
"""

from __future__ import annotations

from .._exports import lazy_exports

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)

if TYPE_CHECKING:
    from ._correlate import Correlator
    from ._http import (
        DEFAULT_HTTP_TRANSPORT,
        REQUEST_TIMEOUT,
        HttpReply,
        HttpTransport,
        HttpTransportFactory,
        RequestFailed,
    )
    from ._jsonrpc import METHOD_NOT_FOUND, JsonRpcClient
    from ._lifecycle import ProcessId, descendants, identity, is_alive, start_time
    from ._line import DEFAULT_TRANSPORT, LineTransport, TransportFactory
    from ._server import ServerTransport
    from ._stop import AgentProcess, StopStep, TurnMark, end_turn, reap_turn
    from ._transport import (
        DEFAULT_MAX_LINE,
        Direction,
        OverlongLine,
        ProcessTransport,
        Tap,
        kill_all_now,
    )

__all__ = [
    "DEFAULT_HTTP_TRANSPORT",
    "DEFAULT_MAX_LINE",
    "DEFAULT_TRANSPORT",
    "METHOD_NOT_FOUND",
    "REQUEST_TIMEOUT",
    "AgentProcess",
    "Correlator",
    "Direction",
    "HttpReply",
    "HttpTransport",
    "HttpTransportFactory",
    "JsonRpcClient",
    "LineTransport",
    "OverlongLine",
    "ProcessId",
    "ProcessTransport",
    "RequestFailed",
    "ServerTransport",
    "StopStep",
    "Tap",
    "TransportFactory",
    "TurnMark",
    "descendants",
    "end_turn",
    "identity",
    "is_alive",
    "kill_all_now",
    "reap_turn",
    "start_time",
]

# Public name → the module that defines it.
_LAZY = {
    "AgentProcess": "._stop",
    "Correlator": "._correlate",
    "DEFAULT_HTTP_TRANSPORT": "._http",
    "DEFAULT_MAX_LINE": "._transport",
    "DEFAULT_TRANSPORT": "._line",
    "Direction": "._transport",
    "HttpReply": "._http",
    "HttpTransport": "._http",
    "HttpTransportFactory": "._http",
    "JsonRpcClient": "._jsonrpc",
    "LineTransport": "._line",
    "METHOD_NOT_FOUND": "._jsonrpc",
    "OverlongLine": "._transport",
    "ProcessId": "._lifecycle",
    "ProcessTransport": "._transport",
    "REQUEST_TIMEOUT": "._http",
    "RequestFailed": "._http",
    "ServerTransport": "._server",
    "StopStep": "._stop",
    "Tap": "._transport",
    "TransportFactory": "._line",
    "TurnMark": "._stop",
    "descendants": "._lifecycle",
    "end_turn": "._stop",
    "identity": "._lifecycle",
    "is_alive": "._lifecycle",
    "kill_all_now": "._transport",
    "reap_turn": "._stop",
    "start_time": "._lifecycle",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
