"""corral: one Python interface, CLI and local service for every coding-agent CLI."""

from ._version import __version__
from .adapters.base import Attachment, BaseAdapter, DetectedAgent
from .errors import CorralError
from .events import AgentInfo, Capabilities, Envelope, Event

__all__ = [
    "AgentInfo",
    "Attachment",
    "BaseAdapter",
    "Capabilities",
    "CorralError",
    "DetectedAgent",
    "Envelope",
    "Event",
    "__version__",
]
