"""Process plumbing shared by every driver: the line-transport seam and the subprocess transport, the
HTTP-transport seam and the server transport, and a JSON-RPC client on top."""

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
