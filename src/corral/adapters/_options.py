"""``LaunchOptions``: everything corral may ask of an adapter at launch, as one typed value.

It is built (and normalised) once, by :meth:`LaunchOptions.create`, and passed whole to
:func:`corral.adapters.base.construct`, which

1. refuses every option given explicitly that the adapter does not support
   (``UnsupportedOperation`` naming the option) — nothing is silently dropped;
2. refuses an intent the adapter cannot enforce (``IntentRefused``);
3. renders the intent in the vendor's words (``corral.intents.<vendor>``) and merges it, with the
   other options, into the adapter's own ``__init__`` arguments — in that one place.

``vendor_permission_mode`` is the documented escape hatch: the vendor's own permission word
(Claude Code's ``acceptEdits``, OpenCode's ``ask``…), passed through untranslated. It cannot be
combined with an intent.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypedDict

from ..errors import ConfigError
from ..intents import ApprovalGuard, Intent, parse_allowed_commands, parse_intent

OPTION_NAMES: tuple[str, ...] = (
    "cwd",
    "model",
    "effort",
    "intent",
    "allowed_commands",
    "binary",
    "env",
    "extra_args",
    "resume_session_id",
    "on_session_id",
    "vendor_permission_mode",
)
"""Every launch option, in order."""

STANDARD_OPTIONS = frozenset(
    {"cwd", "model", "binary", "resume_session_id", "on_session_id", "effort", "env", "extra_args"}
)
"""The options every process-launching driver honours; a driver's ``supported_options`` is this
set with its own additions (``vendor_permission_mode``) or removals (``effort``)."""

INIT_ARGUMENT: dict[str, str] = {"vendor_permission_mode": "permission_mode"}
"""Options whose adapter ``__init__`` argument is named differently."""


class LaunchArgs(TypedDict, total=False):
    """The standard launch options as adapter ``__init__`` keyword arguments (``**launch:
    Unpack[LaunchArgs]``): declared here once, normalised once by
    :meth:`corral.adapters.base.BaseAdapter.take_options`."""

    cwd: str | os.PathLike[str] | None
    model: str | None
    binary: str | None
    resume_session_id: str | None
    on_session_id: Callable[[str], None] | None
    effort: str | None
    env: Mapping[str, str] | None
    extra_args: Iterable[str] | None
    permission_mode: str | None


SOFT_OPTIONS = frozenset({"cwd", "on_session_id"})
"""Options an adapter may ignore without refusing them: every adapter runs in ``cwd`` (its
process is started there), and ``on_session_id`` is a callback that is simply never called by an
adapter with no session ids to report."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class LaunchOptions:
    """One launch of one adapter. Build it with :meth:`create` (which normalises)."""

    cwd: str
    """Absolute path of an existing directory."""
    model: str | None = None
    effort: str | None = None
    intent: Intent | None = None
    """``None`` is the vendor's own default permission behaviour (never ``full``)."""
    allowed_commands: tuple[str, ...] = ()
    """The project's allowed command prefixes (seed 002 ``AGENT_COMMANDS``); needs an intent."""
    binary: str | None = None
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    extra_args: tuple[str, ...] = ()
    resume_session_id: str | None = None
    on_session_id: Callable[[str], None] | None = None
    vendor_permission_mode: str | None = None
    """Escape hatch: the vendor's own permission-mode word, untranslated (no intent with it)."""

    @classmethod
    def create(
        cls,
        *,
        cwd: str | os.PathLike[str] | None = None,
        model: str | None = None,
        effort: str | None = None,
        intent: Intent | str | None = None,
        allowed_commands: str | Iterable[str] | None = None,
        binary: str | None = None,
        env: Mapping[str, str] | None = None,
        extra_args: Iterable[str] = (),
        resume_session_id: str | None = None,
        on_session_id: Callable[[str], None] | None = None,
        vendor_permission_mode: str | None = None,
    ) -> LaunchOptions:
        """Normalise once: ``cwd`` absolute and existing (``ConfigError`` otherwise), the intent and
        the allowed commands parsed, empty strings treated as not given."""
        path = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
        if not os.path.isdir(path):
            raise ConfigError(f"working directory {path} does not exist or is not a directory")
        try:
            parsed_intent = parse_intent(intent or None)
            commands = parse_allowed_commands(allowed_commands)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if commands and parsed_intent is None:
            raise ConfigError("allowed commands need an intent (--intent work or act-pr)")
        if parsed_intent is not None and vendor_permission_mode:
            raise ConfigError("an intent and a vendor permission mode cannot be combined")
        return cls(
            cwd=path,
            model=model or None,
            effort=effort or None,
            intent=parsed_intent,
            allowed_commands=commands,
            binary=binary or None,
            env=dict(env or {}),
            extra_args=tuple(extra_args),
            resume_session_id=resume_session_id or None,
            on_session_id=on_session_id,
            vendor_permission_mode=vendor_permission_mode or None,
        )

    def given(self) -> list[str]:
        """The names of the options set explicitly (not ``None``, not empty)."""
        return [name for name in OPTION_NAMES if _is_given(getattr(self, name))]

    def replace(self, **changes: Any) -> LaunchOptions:
        return dataclasses.replace(self, **changes)


def _is_given(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, (tuple, list, dict, str)) or hasattr(value, "keys"):
        return bool(value)
    return True


def guard_of(adapter: Any) -> ApprovalGuard | None:
    """The approval guard of an adapter launched under an intent (``None`` without one)."""
    options = getattr(adapter, "launch_options", None)
    if not isinstance(options, LaunchOptions) or options.intent is None:
        return None
    return ApprovalGuard(intent=options.intent, allowed_commands=options.allowed_commands)
