"""A built-in adapter without building the registry: what a one-shot ``corral run`` resolves.

:class:`~corral.registry.Registry` reads every manifest, imports every drop-in and scans the
installed entry points (``importlib.metadata``) when it is built; for ``corral run claude-code``
that is most of the time before the agent is spawned (issue 20, decision 039). For a *built-in*
id the registry's answer does not depend on any of it, by this precedence rule:

* A built-in adapter id or alias (``claude-code``, ``claude``, ``codex-exec`` …) always names the
  built-in class. A custom manifest, a drop-in or an entry point cannot take one: the registry
  skips it as a load problem (``corral adapters list`` shows it), whatever it registers.
* Only ``$CORRAL_EXTRA_ADAPTERS`` (and ``adapters=`` of an embedding program) may replace a
  built-in; while that variable names anything, :func:`builtin_id` answers ``None`` and the
  caller builds the registry as before.
* An id that is not built in (a custom manifest, a drop-in, an entry point, a built-in manifest
  with no class such as ``droid``, which a ``corral.drivers`` entry point may drive) goes to the
  registry.

So :func:`resolve_builtin` and :func:`builtin_manifest` give what ``Registry().resolve`` and
``Registry().manifest`` give, without reading anything but the one manifest;
``tests/unit/registry/test_builtin_resolve.py`` compares them.
"""

from __future__ import annotations

import os

from ..adapters import ALIASES, BUILTIN_ADAPTERS
from ..errors import AdapterNotFoundError, ConfigError

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)

if TYPE_CHECKING:
    from ..adapters.base import BaseAdapter
    from ..manifests import Manifest

# The manifest model (msgspec, the event model) loads only when a manifest is read: ``corral
# run``'s early spawn needs :func:`builtin_id` and, with no verification record, nothing else
# (decision 049).

EXTRA_ADAPTERS_ENV = "CORRAL_EXTRA_ADAPTERS"
"""``module:Class`` entries, comma-separated, registered on top of everything else (test hook)."""

BUILTIN_DIR = os.path.join(os.path.dirname(__file__), "builtin")
"""The built-in manifests' folder (read by path: ``importlib.resources`` loads ``tempfile``; a
string: ``pathlib`` is not imported before ``corral run``'s early spawn, decision 056)."""

BUILTIN_ALIASES: dict[str, str] = {a: i for i, names in ALIASES.items() for a in names}
"""Alias → the built-in id it stands for."""


def extra_refs() -> list[str]:
    """The ``module:Class`` references ``$CORRAL_EXTRA_ADAPTERS`` names."""
    return [r.strip() for r in os.environ.get(EXTRA_ADAPTERS_ENV, "").split(",") if r.strip()]


def builtin_id(adapter_id: str) -> str | None:
    """The built-in id ``adapter_id`` (an id or an alias) names when nothing can replace its
    class; ``None``: not a built-in adapter class, or ``$CORRAL_EXTRA_ADAPTERS`` is set."""
    canonical = BUILTIN_ALIASES.get(adapter_id, adapter_id)
    if canonical not in BUILTIN_ADAPTERS or extra_refs():
        return None
    return canonical


def read_builtin_manifest(name: str) -> Manifest | None:
    """The built-in manifest in ``builtin/NAME``; ``None`` when there is no such file."""
    try:
        with open(os.path.join(BUILTIN_DIR, name), encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return None
    import json

    from ..manifests import parse_manifest

    return parse_manifest(json.loads(text), source=name)


def load_builtin_manifests() -> list[Manifest]:
    """The manifests shipped with corral, sorted by id."""
    manifests = []
    for name in sorted(n for n in os.listdir(BUILTIN_DIR) if n.endswith(".json")):
        manifest = read_builtin_manifest(name)
        if manifest is not None:
            manifests.append(manifest)
    return manifests


def load_ref(ref: type[BaseAdapter] | str) -> type[BaseAdapter]:
    """The class behind a reference; ``ConfigError`` when it is not a BaseAdapter subclass."""
    import importlib  # here: importlib's __init__ loads ``warnings`` (decision 057)

    from ..adapters.base import BaseAdapter

    if isinstance(ref, str):
        module_name, _, attr = ref.strip().partition(":")
        if not module_name or not attr:
            raise ConfigError(f"adapter reference {ref!r} is not module:Class")
        obj = getattr(importlib.import_module(module_name), attr, None)
    else:
        obj = ref
    if not (isinstance(obj, type) and issubclass(obj, BaseAdapter) and obj is not BaseAdapter):
        raise ConfigError(f"{ref} is not a BaseAdapter subclass")
    return obj


def resolve_builtin(adapter_id: str) -> type[BaseAdapter] | None:
    """The class ``Registry().resolve(adapter_id)`` would return, for a built-in id; ``None``
    when the registry must answer (see the module docstring). Raises
    :class:`AdapterNotFoundError` as the registry does when the class fails to load."""
    canonical = builtin_id(adapter_id)
    if canonical is None:
        return None
    ref = BUILTIN_ADAPTERS[canonical]
    try:
        return load_ref(ref)
    except (Exception, SystemExit) as exc:
        if read_builtin_manifest(f"{canonical}.json") is None:
            # No manifest of its own: the registry could not list the id at all.
            raise AdapterNotFoundError(adapter_id) from None
        reason = f"its class {ref} fails to load: {type(exc).__name__}: {exc}"
        raise AdapterNotFoundError(adapter_id, reason) from None


def builtin_manifest(adapter_id: str) -> Manifest | None:
    """The manifest ``Registry().manifest(adapter_id)`` would return, for a built-in id; ``None``
    when the registry must answer. Raises :class:`AdapterNotFoundError` as the registry does for
    a built-in class with no manifest file that fails to load (it could not be listed)."""
    canonical = builtin_id(adapter_id)
    if canonical is None:
        return None
    manifest = read_builtin_manifest(f"{canonical}.json")
    if manifest is not None:
        return manifest
    from ._dropins import manifest_for_class

    try:  # a class without a manifest file gets one from its identity (``codex-exec``)
        return manifest_for_class(load_ref(BUILTIN_ADAPTERS[canonical]))
    except (Exception, SystemExit):
        raise AdapterNotFoundError(adapter_id) from None
