"""The adapter contract (seed 003): one instance drives one interactive session with one agent.

A subclass implements four coroutines::

    start(session_id) -> AgentInfo      start or connect the agent, report who it is
    send(text, attachments=None)        hand a user message to the running session
    stream() -> AsyncIterator[Event]    the normalized events; every turn ends with TurnCompleted
    stop()                              end the session cleanly

``stream()`` may either run for the whole session or end after each turn (seed 003's minimal
adapter does the latter); consumers read it through :func:`iter_events`, which calls it again
until a ``SessionEnded`` event arrives, so both styles work.

Capabilities are class attributes (``cap_*``). The two optional surfaces, ``provides_models`` and
``provides_usage``, must be set to ``True`` or ``False`` explicitly. The contract is checked when
the class is *defined*: a subclass that misses a declaration raises ``TypeError`` at once, so an
adapter can never silently inherit an empty implementation. Intermediate bases that are not
adapters themselves pass ``abstract=True`` in the class statement.

Launch options arrive as one :class:`LaunchOptions` value (see :mod:`corral.adapters._options`);
:func:`construct` turns it into the ``__init__`` keyword arguments an adapter declares, out of
``cwd``, ``model``, ``binary``, ``resume_session_id``, ``on_session_id``, ``effort``, ``env``,
``extra_args`` and ``permission_mode``. A driver's ``__init__`` declares only its own arguments
and takes the standard ones as ``**launch: Unpack[LaunchArgs]``, handing them to
:meth:`BaseAdapter.take_options` (which normalises them once into ``self.options``); it lists
the ones it honours in ``supported_options`` (data). An option given explicitly that the adapter does not
support is refused by name (``UnsupportedOperation``), never dropped. Intents: an adapter lists the
ones it can enforce in ``enforceable_intents`` and renders them with ``intent_renderer`` (a pure
function from :mod:`corral.intents`); any other intent is refused (``IntentRefused``).

Every ``send()`` / ``send_acknowledged()`` a subclass defines is wrapped, when the class is
defined, so that an invalid prompt (empty, whitespace only, not text — see
:func:`corral.adapters._turns.check_prompt`) raises :class:`~corral.errors.InvalidPromptError`
before the driver runs: no agent ever sees one.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import msgspec

from ..errors import AdapterContractError, UnsupportedOperation
from ..events import AgentInfo, ApprovalDecision, Capabilities, Event, SessionEnded
from ..intents import Intent, Renderer
from ._handoff import HandoffHooks
from ._launch import find_binary as find_binary
from ._model_info import ModelInfo as ModelInfo
from ._options import INIT_ARGUMENT, SOFT_OPTIONS, LaunchArgs, LaunchOptions
from ._turns import check_prompt
from ._usage import UsageTotals

INIT_ARGUMENT_OPTION = {arg: option for option, arg in INIT_ARGUMENT.items()}

ADAPTER_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,80}$")

INIT_KWARGS: tuple[str, ...] = tuple(LaunchArgs.__annotations__)
"""The keyword arguments corral offers an adapter's ``__init__``; it receives those it declares.

The first six are seed 003's. corral adds ``env`` (extra environment for the agent process, e.g.
endpoint redirection from ``corral.redirect``), ``extra_args`` (argv additions) and
``permission_mode`` (the agent's own permission-mode word, such as Claude Code's ``acceptEdits``
or OpenCode's ``ask``; an adapter that declares it documents the words it takes)."""

UNIVERSAL_SLASH_COMMANDS: tuple[str, ...] = ("/status", "/stop", "/model")
"""Commands corral itself answers for every session, listed before the agent's own."""

REQUIRED_COROUTINES = ("start", "send", "stream", "stop")
EXPLICIT_FLAGS = ("provides_models", "provides_usage")
CAPABILITY_ATTRS = tuple(f"cap_{name}" for name in Capabilities.__struct_fields__)


class Attachment(msgspec.Struct, frozen=True, kw_only=True):
    """A file sent with a prompt: an image or a document, by path or inline bytes."""

    path: str | None = None
    data: bytes | None = None
    media_type: str = "application/octet-stream"
    name: str | None = None

    @property
    def is_image(self) -> bool:
        return self.media_type.startswith("image/")

    def read_bytes(self) -> bytes:
        if self.data is not None:
            return self.data
        if self.path is None:
            raise ValueError("attachment has neither path nor data")
        return Path(self.path).read_bytes()


class DetectedAgent(msgspec.Struct, frozen=True, kw_only=True):
    """What ``detect()`` found on this machine."""

    agent_id: str
    path: str
    version: str | None = None


class BaseAdapter(HandoffHooks):
    """Base class of every adapter; see the module docstring for the contract."""

    # ── identity (required) ──
    agent_id: ClassVar[str]
    display_name: ClassVar[str]
    cli_binary: ClassVar[str | None] = None
    """Executable probed by the default ``detect()`` (``<binary> --version``)."""

    # ── capabilities: data, the single source of truth ──
    cap_documents: ClassVar[bool] = False
    cap_thinking: ClassVar[bool] = False
    cap_permissions: ClassVar[bool] = False
    cap_subagents: ClassVar[bool] = False
    cap_input_during_turn: ClassVar[bool] = False
    cap_terminal: ClassVar[bool] = False
    cap_resume: ClassVar[bool] = False
    cap_cancel: ClassVar[bool] = False
    cap_interact: ClassVar[bool] = False
    cap_attached_terminal: ClassVar[bool] = False
    cap_image_input: ClassVar[bool] = False

    # ── optional surfaces: each subclass must say True or False ──
    provides_models: ClassVar[bool]
    provides_usage: ClassVar[bool]
    models_unavailable: ClassVar[str | None] = None
    """Why ``list_models()`` has nothing to offer, for adapters with ``provides_models = False``
    (shown by the web app next to its free-text model field)."""
    efforts_unavailable: ClassVar[str | None] = None
    """Why ``describe_models()`` lists no efforts for this adapter's models (``None`` when it
    does, per model); shown by the web app instead of a made-up list."""

    # ── launch options and intents: data ──
    supported_options: ClassVar[frozenset[str] | None] = None
    """The :class:`LaunchOptions` names this adapter honours; ``None`` derives them from the
    ``__init__`` signature (see :func:`supported_options`)."""
    enforceable_intents: ClassVar[frozenset[Intent]] = frozenset()
    """The intents this adapter can enforce (docs/intents.md); every other intent is refused."""
    intent_renderer: ClassVar[Renderer | None] = None
    """``(intent, allowed_commands, cwd) -> Rendering``, from :mod:`corral.intents`."""
    intent_refusals: ClassVar[Mapping[str, str]] = MappingProxyType({})
    """Why an intent is not enforceable, by intent value (shown in the refusal)."""

    launch_options: LaunchOptions | None = None
    """The options this instance was built from, intent included (set by :func:`construct`)."""

    # ── the standard launch options, normalised once by ``take_options()`` ──
    options: LaunchOptions
    """The standard options this driver runs with (an intent's rendering already merged)."""
    cwd: str
    """Absolute path of an existing directory."""
    model: str | None
    binary: str
    resume_session_id: str | None
    on_session_id: Callable[[str], None] | None
    effort: str | None
    env: dict[str, str]
    extra_args: list[str]
    permission_mode: str | None

    def __init_subclass__(cls, *, abstract: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.__corral_abstract__ = abstract  # type: ignore[attr-defined]
        for name in ("send", "send_acknowledged"):
            impl = cls.__dict__.get(name)
            if inspect.iscoroutinefunction(impl) and not hasattr(impl, "__corral_checked__"):
                setattr(cls, name, _checked(impl))
        if not abstract:
            problems = contract_problems(cls)
            if problems:
                raise AdapterContractError(
                    f"{cls.__module__}.{cls.__qualname__} breaks the adapter contract: "
                    + "; ".join(problems)
                )

    def take_options(self, launch: Mapping[str, Any], *, binary_name: str | None = None) -> None:
        """Normalise the standard launch options an ``__init__`` received as ``**launch``
        (:class:`~corral.adapters._options.LaunchArgs`) — the one place every driver does it.

        ``cwd`` becomes absolute and must exist (``ConfigError``); empty values count as not
        given; an unknown name is a ``TypeError``; an option given explicitly that the class does
        not support is refused by name (``UnsupportedOperation``), exactly as :func:`construct`
        refuses it; ``binary`` defaults to ``binary_name`` (else ``cli_binary``) found as
        detection finds it (an adapter with neither runs no executable: ``""``). The result is ``self.options``, mirrored as ``self.cwd``,
        ``self.model``… for the driver's code (``set_model()`` may change ``self.model``)."""
        unknown = sorted(set(launch) - set(INIT_KWARGS))
        if unknown:
            raise TypeError(f"{type(self).__qualname__}() got unexpected arguments: {unknown}")
        renamed = {INIT_ARGUMENT_OPTION.get(k, k): v for k, v in launch.items()}
        options = LaunchOptions.create(**{k: v for k, v in renamed.items() if v is not None})
        supported = supported_options(type(self))
        for name in options.given():
            if name not in supported and name not in SOFT_OPTIONS:
                raise UnsupportedOperation(self.agent_id, f"the launch option {name!r}")
        self.options = options
        self.cwd = options.cwd
        self.model = options.model
        default = binary_name or self.cli_binary
        self.binary = find_binary(options.binary, default) if default else (options.binary or "")
        self.resume_session_id = options.resume_session_id
        self.on_session_id = options.on_session_id
        self.effort = options.effort
        self.env = dict(options.env)
        self.extra_args = list(options.extra_args)
        self.permission_mode = options.vendor_permission_mode

    # ── the four coroutines ──
    async def start(self, session_id: str) -> AgentInfo:
        raise NotImplementedError

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        raise NotImplementedError

    def stream(self) -> AsyncIterator[Event]:
        raise NotImplementedError

    async def stop(self) -> None:
        raise NotImplementedError

    # ── delivery and status: defaults that every adapter may refine ──
    async def send_acknowledged(
        self,
        text: str,
        attachments: Sequence[Attachment] | None,
        *,
        ack: Callable[[], None],
    ) -> None:
        """Like ``send()``, calling ``ack()`` at the protocol's own acknowledgement point.

        The durable prompt queue marks a prompt ``delivered`` when ``ack`` is called; a driver whose
        protocol confirms receipt later than ``send()`` returns (or earlier) overrides this. The
        default acknowledges when ``send()`` returns. See docs/sessions.md for each protocol.
        """
        await self.send(text, attachments)
        ack()

    async def query_status(self) -> dict[str, Any]:
        """A fresh status from the agent (process alive, busy, model…)."""
        raise UnsupportedOperation(self.agent_id, "query_status")

    # ── interaction: optional; the default says "unsupported" (capabilities tell which work) ──
    async def interrupt(self) -> None:
        """Stop the current turn; the turn ends with ``TurnCompleted(stop_reason=cancelled)``."""
        raise UnsupportedOperation(self.agent_id, "interrupt")

    async def respond_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        *,
        option_id: str | None = None,
        updated_input: Any = None,
        message: str | None = None,
    ) -> None:
        """Answer an ``ApprovalRequested`` event."""
        raise UnsupportedOperation(self.agent_id, "respond_approval")

    async def answer_question(self, request_id: str, answers: dict[str, str]) -> None:
        """Answer a ``QuestionAsked`` event (question text → answer)."""
        raise UnsupportedOperation(self.agent_id, "answer_question")

    async def set_model(self, model: str) -> None:
        raise UnsupportedOperation(self.agent_id, "set_model")

    async def set_permission_mode(self, mode: str) -> None:
        raise UnsupportedOperation(self.agent_id, "set_permission_mode")

    # ── optional surfaces ──
    async def list_models(self) -> list[str]:
        return []

    async def describe_models(self) -> list[ModelInfo]:
        """The models with what the agent says about each (efforts); by default the names of
        :meth:`list_models` with no efforts listed."""
        return [ModelInfo(id=m) for m in await self.list_models()]

    async def get_usage(self) -> UsageTotals:
        """Tokens and cost summed over the session's ``Usage`` events (see ``provides_usage``)."""
        return UsageTotals()

    # ── helpers ──
    @classmethod
    def capabilities(cls) -> Capabilities:
        return Capabilities(
            **{name: bool(getattr(cls, f"cap_{name}")) for name in Capabilities.__struct_fields__}
        )

    def make_agent_info(
        self,
        *,
        name: str | None = None,
        version: str | None = None,
        model: str | None = None,
        slash_commands: Sequence[str] = (),
        agent_session_id: str | None = None,
    ) -> AgentInfo:
        """Build the AgentInfo from the class's ``cap_*`` flags, universal commands first."""
        commands = list(UNIVERSAL_SLASH_COMMANDS)
        commands += [c for c in slash_commands if c not in commands]
        return AgentInfo(
            agent_id=self.agent_id,
            name=name or self.display_name,
            version=version,
            model=model,
            capabilities=self.capabilities(),
            slash_commands=tuple(commands),
            agent_session_id=agent_session_id,
        )

    @classmethod
    async def detect(cls, *, timeout: float = 10.0) -> DetectedAgent | None:
        """Find ``cli_binary`` as launch does (:func:`find_binary`) and ask it ``--version``;
        ``None`` when absent."""
        if not cls.cli_binary:
            return None
        from ..registry._resolve import resolve_executable_path

        found = resolve_executable_path(cls.cli_binary)
        if found is None:
            return None
        path = found.path
        version: str | None = None
        try:
            proc = await asyncio.create_subprocess_exec(
                path,
                "--version",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            try:
                out, _ = await asyncio.wait_for(proc.communicate(), timeout)
                version = parse_version(out.decode(errors="replace"))
            except TimeoutError:
                proc.kill()
                await proc.wait()
        except OSError:
            return None
        return DetectedAgent(agent_id=cls.agent_id, path=path, version=version)


def _checked(impl: Callable[..., Any]) -> Callable[..., Any]:
    """``impl`` (a ``send``) with the prompt checked first."""

    @functools.wraps(impl)
    async def send(self: BaseAdapter, text: str, attachments: Any = None, **kw: Any) -> Any:
        check_prompt(text, attachments)
        return await impl(self, text, attachments, **kw)

    send.__corral_checked__ = True  # type: ignore[attr-defined]
    return send


_VERSION_RE = re.compile(r"(\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.]+)?)")


def parse_version(text: str) -> str | None:
    """The first dotted version number in a ``--version`` output."""
    m = _VERSION_RE.search(text)
    return m.group(1) if m else None


def _declared_below_base(cls: type, name: str) -> bool:
    return any(name in vars(k) for k in cls.__mro__ if k is not BaseAdapter and k is not object)


def contract_problems(cls: type) -> list[str]:
    """Every way ``cls`` breaks the adapter contract (empty when it complies)."""
    problems: list[str] = []
    for attr in ("agent_id", "display_name"):
        value = getattr(cls, attr, None)
        if not isinstance(value, str) or not value:
            problems.append(f"{attr} must be a non-empty string")
    agent_id = getattr(cls, "agent_id", None)
    if isinstance(agent_id, str) and agent_id and not ADAPTER_ID_RE.match(agent_id):
        problems.append(f"agent_id {agent_id!r} must match [A-Za-z0-9._-]{{1,80}}")
    for flag in EXPLICIT_FLAGS:
        if not _declared_below_base(cls, flag):
            problems.append(f"{flag} must be declared explicitly as True or False")
        elif not isinstance(getattr(cls, flag), bool):
            problems.append(f"{flag} must be a bool")
    for attr in CAPABILITY_ATTRS:
        if not isinstance(getattr(cls, attr), bool):
            problems.append(f"{attr} must be a bool")
    for meth in REQUIRED_COROUTINES:
        impl = getattr(cls, meth, None)
        if impl is None or impl is getattr(BaseAdapter, meth):
            problems.append(f"{meth}() must be implemented")
            continue
        if meth == "stream":
            # An async generator, or a plain method returning an async iterator; an ``async def``
            # without ``yield`` returns a coroutine, which ``async for`` cannot iterate.
            if inspect.iscoroutinefunction(impl) or not callable(impl):
                problems.append("stream() must be an async generator (async def with yield)")
        elif not inspect.iscoroutinefunction(impl):
            problems.append(f"{meth}() must be a coroutine (async def)")
    if (
        getattr(cls, "provides_models", False) is True
        and getattr(cls, "list_models", None) is BaseAdapter.list_models
    ):
        problems.append("provides_models is True but list_models() is not overridden")
    if (
        getattr(cls, "provides_usage", False) is True
        and getattr(cls, "get_usage", None) is BaseAdapter.get_usage
    ):
        problems.append("provides_usage is True but get_usage() is not overridden")
    return problems


SessionIdCallback = Callable[[str], None]


async def iter_events(adapter: BaseAdapter) -> AsyncIterator[Event]:
    """Every event of the session, across turns, until (and including) ``SessionEnded``."""
    while True:
        produced = False
        async for event in adapter.stream():
            produced = True
            yield event
            if isinstance(event, SessionEnded):
                return
        if not produced:
            # A stream that ends at once and keeps ending would spin; yield control at least.
            await asyncio.sleep(0.01)


# Launch options → ``__init__`` arguments (kept in their own module; re-exported here, where
# adapter authors have always found ``construct``).
from ._construct import accepts as accepts  # noqa: E402
from ._construct import check_options as check_options  # noqa: E402
from ._construct import construct as construct  # noqa: E402
from ._construct import init_arguments as init_arguments  # noqa: E402
from ._construct import intent_refusal as intent_refusal  # noqa: E402
from ._construct import supported_options as supported_options  # noqa: E402
