"""Lazy package exports (PEP 562): a name loads its module on first use, then stays in the package.

``corral``, ``corral._process`` and ``corral.registry`` list their public names with the
submodule that defines each, so importing the package costs nothing until a name is used:

    __getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
"""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, MutableMapping, Sequence
    from typing import Any


def lazy_exports(
    package: str,
    table: Mapping[str, str],
    namespace: MutableMapping[str, Any],
    public: Sequence[str],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``; ``table`` maps a name to the
    relative module defining it."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib  # on first use: the package's __init__ loads ``warnings`` (decision 057)

        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__
