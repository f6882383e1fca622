"""Built-in adapters redirected to a benchmark's model, inside a ``corral serve`` child process.

A session in ``corral serve`` takes no agent argv or environment from its client, so a benchmark
that drives a real CLI through the service cannot pass what ``corral run --agent-arg`` and the
inherited environment give a one-shot run (the redirection to the scripted model). This module is
the hook for that: the benchmark sets

* ``CORRAL_BENCH_TARGETS`` to ``{adapter id: {"binary": …, "env": {…}, "argv": […]}}`` (JSON), and
* ``CORRAL_EXTRA_ADAPTERS`` to :func:`extra_adapters` of those ids,

and the service's registry replaces each built-in class by a subclass whose ``__init__`` adds that
binary, environment and argv to whatever the session manager offers. Nothing else changes: the
same class, the same manifest (a replaced built-in keeps its manifest), the same adapter id in the
client's ``POST /api/sessions``. The demo provider (``corral.server._demo``) wraps classes the same
way for its own scripted model.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
from collections.abc import Iterable
from typing import Any

from corral.adapters import BUILTIN_ADAPTERS
from corral.adapters.base import BaseAdapter

TARGETS_ENV = "CORRAL_BENCH_TARGETS"


def attribute(adapter_id: str) -> str:
    """The module attribute naming ``adapter_id``'s class (``claude-code`` → ``claude_code``)."""
    return adapter_id.replace("-", "_").replace(".", "_")


def extra_adapters(adapter_ids: Iterable[str]) -> str:
    """The ``CORRAL_EXTRA_ADAPTERS`` value that registers the classes of ``adapter_ids``."""
    return ",".join(f"{__name__}:{attribute(a)}" for a in adapter_ids)


def redirected(
    cls: type[BaseAdapter], *, binary: str | None, env: dict[str, str], argv: list[str]
) -> type[BaseAdapter]:
    """``cls`` with ``binary``, ``env`` (over the offered one) and ``argv`` (after the offered
    extra args) added to every construction."""
    base_init = cls.__init__

    def __init__(self: BaseAdapter, **offered: Any) -> None:
        kwargs = dict(offered)
        if binary:
            kwargs["binary"] = binary
        kwargs["env"] = {**(offered.get("env") or {}), **env}
        kwargs["extra_args"] = [*(offered.get("extra_args") or ()), *argv]
        base_init(self, **kwargs)

    # construct() and accepts() read the signature: the wrapper takes what the class takes.
    __init__.__signature__ = inspect.signature(base_init)  # type: ignore[attr-defined]
    return type(cls.__name__, (cls,), {"__init__": __init__, "__module__": __name__})


def _load(adapter_id: str) -> type[BaseAdapter]:
    module, _, name = BUILTIN_ADAPTERS[adapter_id].partition(":")
    cls = getattr(importlib.import_module(module), name)
    assert isinstance(cls, type) and issubclass(cls, BaseAdapter)
    return cls


def _classes() -> dict[str, type[BaseAdapter]]:
    spec: dict[str, dict[str, Any]] = json.loads(os.environ.get(TARGETS_ENV) or "{}")
    return {
        attribute(adapter_id): redirected(
            _load(adapter_id),
            binary=target.get("binary"),
            env=dict(target.get("env") or {}),
            argv=list(target.get("argv") or ()),
        )
        for adapter_id, target in spec.items()
    }


_CLASSES = _classes()


def __getattr__(name: str) -> type[BaseAdapter]:
    try:
        return _CLASSES[name]
    except KeyError:
        raise AttributeError(name) from None
