"""corral: one Python interface, CLI and local service for every coding-agent CLI.

The public names load on first use (PEP 562): ``import corral`` stays cheap, so the ``corral``
command starts fast and nothing pulls in asyncio before it is needed.
"""

from __future__ import annotations

import importlib

from ._version import __version__

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)

if TYPE_CHECKING:
    from typing import Any

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
