"""The event board of seed 002: schema v1 ingestion, storage and live fan-out; the ``job`` run
contract and the ``wire`` live-session emitters live beside it in this package."""

from ._fanout import VIEWER_QUEUE, Fanout, Filter, Missed
from ._ingest import CAPS, KINDS, Ingestor, InvalidEvent
from ._service import Board, IngestResult
from ._store import BoardStore, StoredEvent

__all__ = [
    "CAPS",
    "KINDS",
    "VIEWER_QUEUE",
    "Board",
    "BoardStore",
    "Fanout",
    "Filter",
    "IngestResult",
    "Ingestor",
    "InvalidEvent",
    "Missed",
    "StoredEvent",
]
