"""Process plumbing shared by every driver: the line-transport seam, the subprocess transport and a
JSON-RPC client on top."""

from ._correlate import Correlator
from ._jsonrpc import METHOD_NOT_FOUND, JsonRpcClient
from ._line import DEFAULT_TRANSPORT, LineTransport, TransportFactory
from ._transport import DEFAULT_MAX_LINE, Direction, OverlongLine, ProcessTransport, Tap

__all__ = [
    "DEFAULT_MAX_LINE",
    "DEFAULT_TRANSPORT",
    "METHOD_NOT_FOUND",
    "Correlator",
    "Direction",
    "JsonRpcClient",
    "LineTransport",
    "OverlongLine",
    "ProcessTransport",
    "Tap",
    "TransportFactory",
]
