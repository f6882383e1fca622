"""Process plumbing shared by every driver: a byte/line transport and a JSON-RPC client on top."""

from ._jsonrpc import METHOD_NOT_FOUND, JsonRpcClient
from ._lifecycle import ProcessId, descendants, identity, is_alive, start_time
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
    "METHOD_NOT_FOUND",
    "Direction",
    "JsonRpcClient",
    "OverlongLine",
    "ProcessId",
    "ProcessTransport",
    "StopStep",
    "Tap",
    "TurnMark",
    "descendants",
    "end_turn",
    "identity",
    "is_alive",
    "kill_all_now",
    "reap_turn",
    "start_time",
]
