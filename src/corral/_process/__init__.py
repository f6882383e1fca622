"""Process plumbing shared by every driver: a byte/line transport and a JSON-RPC client on top."""

from ._jsonrpc import METHOD_NOT_FOUND, JsonRpcClient
from ._transport import DEFAULT_MAX_LINE, Direction, OverlongLine, ProcessTransport, Tap

__all__ = [
    "DEFAULT_MAX_LINE",
    "METHOD_NOT_FOUND",
    "Direction",
    "JsonRpcClient",
    "OverlongLine",
    "ProcessTransport",
    "Tap",
]
