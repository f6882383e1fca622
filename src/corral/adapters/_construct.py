"""From a :class:`~corral.adapters._options.LaunchOptions` value to an adapter instance.

:func:`construct` is the one place options meet an adapter class: it refuses an intent the class
cannot enforce (``IntentRefused``) and any explicitly given option it does not support
(``UnsupportedOperation`` naming it), renders the intent in the vendor's words and merges the
result into the ``__init__`` keyword arguments the class declares.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from ..errors import AdapterContractError, IntentRefused, UnsupportedOperation
from ..intents import Intent
from ._options import INIT_ARGUMENT, OPTION_NAMES, SOFT_OPTIONS, LaunchOptions

if TYPE_CHECKING:
    from .base import BaseAdapter


_STANDARD = {INIT_ARGUMENT.get(name, name): name for name in OPTION_NAMES}


def accepts(cls: type[BaseAdapter], name: str) -> bool:
    """Whether ``cls.__init__`` takes the init argument ``name``: for a standard option of a class
    that declares ``supported_options``, whether it supports it (or may ignore it), and any other
    argument only by name; otherwise by name or ``**kwargs`` in the signature."""
    option = _STANDARD.get(name)
    params = inspect.signature(cls.__init__).parameters
    if cls.supported_options is not None:
        # Its ``**launch`` takes the standard options only: any other argument must be named.
        if option is not None:
            return option in supported_options(cls) or option in SOFT_OPTIONS
        return name in params
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def supported_options(cls: type[BaseAdapter]) -> frozenset[str]:
    """The launch options ``cls`` honours: its declared ``supported_options``, else the ones its
    ``__init__`` takes — plus ``intent``/``allowed_commands`` when it enforces any intent."""
    intents = (
        {"intent", "allowed_commands"} if cls.enforceable_intents and cls.intent_renderer else set()
    )
    if cls.supported_options is not None:
        return frozenset(cls.supported_options) | intents
    names = {
        name
        for name in OPTION_NAMES
        if name not in ("intent", "allowed_commands")
        and accepts(cls, INIT_ARGUMENT.get(name, name))
    }
    return frozenset(names | intents)


def intent_refusal(cls: type[BaseAdapter], intent: Intent) -> str:
    """Why ``cls`` does not offer ``intent``."""
    reason = cls.intent_refusals.get(intent.value)
    if reason:
        return reason
    offered = ", ".join(sorted(i.value for i in cls.enforceable_intents)) or "none"
    return f"not enforceable by {cls.display_name} (it offers: {offered}; see docs/intents.md)"


def check_options(cls: type[BaseAdapter], options: LaunchOptions) -> None:
    """Refuse what ``cls`` cannot honour: an intent it cannot enforce (``IntentRefused``), then any
    explicitly given option it does not support (``UnsupportedOperation`` naming the option)."""
    if options.intent is not None and (
        options.intent not in cls.enforceable_intents or cls.intent_renderer is None
    ):
        raise IntentRefused(cls.agent_id, options.intent.value, intent_refusal(cls, options.intent))
    supported = supported_options(cls)
    for name in options.given():
        if name not in supported and name not in SOFT_OPTIONS:
            raise UnsupportedOperation(cls.agent_id, f"the launch option {name!r}")


def init_arguments(cls: type[BaseAdapter], options: LaunchOptions) -> dict[str, Any]:
    """The ``__init__`` keyword arguments for ``options`` — the one place an intent's rendering is
    merged: its argv after the caller's extra args, its environment over the caller's, its
    settings as the adapter's own arguments."""
    check_options(cls, options)
    kwargs: dict[str, Any] = {}
    for name in OPTION_NAMES:
        if name in ("intent", "allowed_commands"):
            continue
        arg = INIT_ARGUMENT.get(name, name)
        value = getattr(options, name)
        if name == "env":
            value = dict(value)
        elif name == "extra_args":
            value = list(value)
        if accepts(cls, arg) and (value or name == "cwd"):
            kwargs[arg] = value
    if options.intent is not None and cls.intent_renderer is not None:
        rendering = cls.intent_renderer(options.intent, options.allowed_commands, options.cwd)
        if rendering.argv:
            kwargs["extra_args"] = [*kwargs.get("extra_args", []), *rendering.argv]
        if rendering.env:
            kwargs["env"] = {**kwargs.get("env", {}), **rendering.env}
        kwargs.update(rendering.settings)
        missing = [k for k in kwargs if not accepts(cls, k)]
        if missing:
            raise AdapterContractError(
                f"{cls.agent_id}: the {options.intent} rendering needs init arguments "
                f"{', '.join(missing)} that {cls.__qualname__}.__init__ does not take"
            )
    return kwargs


def construct(
    cls: type[BaseAdapter], options: LaunchOptions | None = None, /, **offered: Any
) -> BaseAdapter:
    """Instantiate ``cls`` for ``options`` (or, for older callers, the same options as keyword
    arguments: ``permission_mode`` is ``vendor_permission_mode``). Refuses what it cannot honour."""
    if options is None:
        unknown = set(offered) - set(_init_kwargs()) - {"intent", "allowed_commands"}
        if unknown:
            raise TypeError(f"not an adapter init argument: {', '.join(sorted(unknown))}")
        renamed = {
            ("vendor_permission_mode" if k == "permission_mode" else k): v
            for k, v in offered.items()
        }
        options = LaunchOptions.create(**renamed)
    elif offered:
        raise TypeError("pass either a LaunchOptions value or keyword arguments, not both")
    adapter = cls(**init_arguments(cls, options))
    adapter.launch_options = options
    return adapter


def _init_kwargs() -> tuple[str, ...]:
    from .base import INIT_KWARGS

    return INIT_KWARGS
