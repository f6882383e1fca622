"""Process plumbing shared by every driver: the line-transport seam, the subprocess transport and a
JSON-RPC client on top."""

from ._correlate import Correlator
from ._jsonrpc import METHOD_NOT_FOUND, JsonRpcClient
from ._lifecycle import ProcessId, descendants, identity, is_alive, start_time
from ._line import DEFAULT_TRANSPORT, LineTransport, TransportFactory
from ._stop import StopStep, TurnMark, end_turn, reap_turn
from ._transport import (
    DEFAULT_MAX_LINE,
    Direction,
    OverlongLine,
    ProcessTransport,
    Tap,
    kill_all_now,
)

__all__ = [
    "DEFAULT_MAX_LINE",
    "DEFAULT_TRANSPORT",
    "METHOD_NOT_FOUND",
    "Correlator",
    "Direction",
    "JsonRpcClient",
    "LineTransport",
    "OverlongLine",
    "ProcessId",
    "ProcessTransport",
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
