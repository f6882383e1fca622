"""corral: one Python interface, CLI and local service for every coding-agent CLI.

The public names load on first use (PEP 562): ``import corral`` stays cheap, so the ``corral``
command starts fast and nothing pulls in asyncio before it is needed.
"""

from __future__ import annotations

from ._exports import lazy_exports
from ._version import __version__

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)

if TYPE_CHECKING:
    from .adapters.base import Attachment, BaseAdapter, DetectedAgent, ModelInfo
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
    "ModelInfo",
    "__version__",
]

# Public name → the module that defines it.
_LAZY = {
    "AgentInfo": ".events",
    "Attachment": ".adapters.base",
    "BaseAdapter": ".adapters.base",
    "Capabilities": ".events",
    "CorralError": ".errors",
    "DetectedAgent": ".adapters.base",
    "Envelope": ".events",
    "Event": ".events",
    "ModelInfo": ".adapters.base",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
