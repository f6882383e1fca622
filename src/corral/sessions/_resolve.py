"""How the session manager turns an adapter id into a class: through the registry, nothing else.

The manager takes any ``resolver(adapter_id) -> type[BaseAdapter]``. :class:`AdapterResolver` is the
default: a :class:`corral.registry.Registry` built on first use (so built-ins, drop-ins, entry
points and ``CORRAL_EXTRA_ADAPTERS`` — how a test points ``corral chat`` at
:class:`corral.testing.scripted_adapter.ScriptedAdapter` — all resolve the way ``corral run`` and
``corral adapters list`` see them), with the classes passed as ``adapters`` registered on top.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..adapters.base import BaseAdapter
from ..registry import Registry

Resolver = Callable[[str], type[BaseAdapter]]


class AdapterResolver:
    """A lazily built registry, called like a function: ``resolver("claude") -> ClaudeAdapter``."""

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
        self._registry: Registry | None = None

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            if self.use_entry_points:
                registry = Registry(adapters=self.adapters, use_env=self.use_env)
            else:
                registry = Registry(
                    adapters=self.adapters,
                    use_env=self.use_env,
                    entry_points=None,
                    use_dropins=False,
                )
            self._registry = registry
        return self._registry

    def __call__(self, adapter_id: str) -> type[BaseAdapter]:
        return self.registry.resolve(adapter_id)
