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
from typing import Any, TypedDict, Unpack

from ..errors import ConfigError
from ..intents import ApprovalGuard, Intent, parse_allowed_commands, parse_intent

STANDARD_OPTIONS = frozenset(
    {"cwd", "model", "binary", "resume_session_id", "on_session_id", "effort", "env", "extra_args"}
)
"""The options every process-launching driver honours; a driver's ``supported_options`` is this
set with its own additions (``vendor_permission_mode``) or removals (``effort``)."""

INIT_ARGUMENT: dict[str, str] = {"vendor_permission_mode": "permission_mode"}
"""Options whose adapter ``__init__`` argument is named differently."""


class _StandardArgs(TypedDict, total=False):
    """The options both an adapter's ``__init__`` and :meth:`LaunchOptions.create` take, with the
    types they accept: declared here, once, for both."""

    cwd: str | os.PathLike[str] | None
    model: str | None
    binary: str | None
    resume_session_id: str | None
    on_session_id: Callable[[str], None] | None
    effort: str | None
    env: Mapping[str, str] | None
    extra_args: Iterable[str] | None


class LaunchArgs(_StandardArgs, total=False):
    """The standard launch options as adapter ``__init__`` keyword arguments (``**launch:
    Unpack[LaunchArgs]``): normalised once by
    :meth:`corral.adapters.base.BaseAdapter.take_options`."""

    permission_mode: str | None
    """``vendor_permission_mode`` under its ``__init__`` name (:data:`INIT_ARGUMENT`)."""


class CreateArgs(_StandardArgs, total=False):
    """The keyword arguments of :meth:`LaunchOptions.create`: one per :class:`LaunchOptions`
    field (``tests/unit/adapters/test_option_lists.py`` holds the two together)."""

    intent: Intent | str | None
    allowed_commands: str | Iterable[str] | None
    vendor_permission_mode: str | None


RENDERED_OPTIONS = frozenset({"intent", "allowed_commands"})
"""Options no ``__init__`` receives as such: :func:`~corral.adapters._construct.construct` renders
them in the vendor's words (argv, environment, settings)."""


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
    def create(cls, **given: Unpack[CreateArgs]) -> LaunchOptions:
        """Normalise once: ``cwd`` absolute and existing (``ConfigError`` otherwise), the intent and
        the allowed commands parsed, empty strings treated as not given; a name that is not an
        option is a ``TypeError``."""
        unknown = sorted(set(given) - set(OPTION_NAMES))
        if unknown:
            raise TypeError(f"LaunchOptions.create() got unexpected arguments: {unknown}")
        cwd = given.get("cwd")
        path = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
        if not os.path.isdir(path):
            raise ConfigError(f"working directory {path} does not exist or is not a directory")
        vendor_permission_mode = given.get("vendor_permission_mode") or None
        try:
            parsed_intent = parse_intent(given.get("intent") or None)
            commands = parse_allowed_commands(given.get("allowed_commands"))
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if commands and parsed_intent is None:
            raise ConfigError("allowed commands need an intent (--intent work or act-pr)")
        if parsed_intent is not None and vendor_permission_mode:
            raise ConfigError("an intent and a vendor permission mode cannot be combined")
        return cls(
            cwd=path,
            model=given.get("model") or None,
            effort=given.get("effort") or None,
            intent=parsed_intent,
            allowed_commands=commands,
            binary=given.get("binary") or None,
            env=dict(given.get("env") or {}),
            extra_args=tuple(given.get("extra_args") or ()),
            resume_session_id=given.get("resume_session_id") or None,
            on_session_id=given.get("on_session_id"),
            vendor_permission_mode=vendor_permission_mode,
        )

    def given(self) -> list[str]:
        """The names of the options set explicitly (not ``None``, not empty)."""
        return [name for name in OPTION_NAMES if _is_given(getattr(self, name))]

    def replace(self, **changes: Any) -> LaunchOptions:
        return dataclasses.replace(self, **changes)


OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(LaunchOptions))
"""Every launch option, in order: the fields of :class:`LaunchOptions`."""


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
