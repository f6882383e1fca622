"""Finding an adapter class by id, for the session manager.

The manager takes any ``resolver(adapter_id) -> type[BaseAdapter]``. :class:`AdapterResolver` is the
default: an explicit mapping (filled by tests or callers), then the classes named in
``CORRAL_EXTRA_ADAPTERS`` (``module:Class`` entries separated by commas — how a test points
``corral chat`` at :class:`corral.testing.scripted_adapter.ScriptedAdapter`), then corral's own
adapters (:data:`corral.adapters.BUILTIN_ADAPTERS`), then the ``corral.adapters`` entry-point group,
the path third-party adapters plug in through.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points

from ..adapters import builtin_adapter_class
from ..adapters.base import BaseAdapter
from ..errors import AdapterNotFoundError, ConfigError

Resolver = Callable[[str], type[BaseAdapter]]

EXTRA_ADAPTERS_ENV = "CORRAL_EXTRA_ADAPTERS"
ENTRY_POINT_GROUP = "corral.adapters"


def load_class(spec: str) -> type[BaseAdapter]:
    """Import ``module:Class`` and check that it is an adapter class."""
    module_name, _, attr = spec.strip().partition(":")
    if not module_name or not attr:
        raise ConfigError(f"adapter reference {spec!r} is not module:Class")
    obj = getattr(importlib.import_module(module_name), attr, None)
    if not (isinstance(obj, type) and issubclass(obj, BaseAdapter)):
        raise ConfigError(f"{spec} is not a BaseAdapter subclass")
    return obj


class AdapterResolver:
    def __init__(
        self,
        adapters: Mapping[str, type[BaseAdapter]] | None = None,
        *,
        use_env: bool = True,
        use_entry_points: bool = True,
    ) -> None:
        self.adapters: dict[str, type[BaseAdapter]] = dict(adapters or {})
        self.use_env = use_env
        self.use_entry_points = use_entry_points

    def __call__(self, adapter_id: str) -> type[BaseAdapter]:
        if adapter_id in self.adapters:
            return self.adapters[adapter_id]
        if self.use_env:
            for spec in filter(None, os.environ.get(EXTRA_ADAPTERS_ENV, "").split(",")):
                cls = load_class(spec)
                if cls.agent_id == adapter_id:
                    return cls
        builtin = builtin_adapter_class(adapter_id)
        if builtin is not None:
            return builtin
        if self.use_entry_points:
            for ep in entry_points(group=ENTRY_POINT_GROUP):
                if ep.name == adapter_id:
                    loaded = ep.load()
                    if isinstance(loaded, type) and issubclass(loaded, BaseAdapter):
                        return loaded
        raise AdapterNotFoundError(adapter_id)
