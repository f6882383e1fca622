"""The shared ACP driver: one agent process, one ACP session, normalized events.

An ACP vendor adapter subclasses :class:`AcpAdapter` and sets its launch (``cli_binary``,
``acp_args``, ``model_flags``) and its capabilities; everything else is here:

* spawn through ``self.transport_factory`` (default :class:`corral._process.ProcessTransport`:
  line cap, stderr tail, and a ``tap`` that sees every raw line both ways — the recorder uses it;
  a test plays a recording through :class:`corral.testing.Recording`) and talk JSON-RPC through
  :class:`corral._process.JsonRpcClient` (docs/decisions/009 for why not the SDK's connection);
  request bodies are plain JSON, key for key the SDK's schema types' dumps (a test compares
  them), so a run never imports the SDK's pydantic schema (decision 039);
* ``initialize`` with the client capabilities corral serves (``fs`` confined to the project root,
  ``terminal`` as corral-managed processes), ``authenticate`` when ``session/new`` says
  ``auth_required``, then ``session/new`` — or ``session/load`` / ``session/resume`` for
  ``resume_session_id`` (the load's history replay is not re-emitted as events);
* prompts are queued and sent one at a time (ACP runs one turn per session); each
  ``session/prompt`` response ends its turn with ``TurnCompleted``;
* ``session/request_permission`` → ``ApprovalRequested``; :meth:`respond_approval` picks the
  agent's option for the decision (or the explicit ``option_id``);
* :meth:`interrupt` sends ``session/cancel`` and answers pending permission requests
  ``cancelled``, climbing :func:`corral._process.end_turn` when no turn end follows (SIGINT, then
  the process group is killed: the turn ends ``cancelled`` and the session ``failed``); tools the
  cancelled turn started are reaped;
* a broken peer — a line that is not JSON-RPC, a request for a method corral does not serve, the
  process exiting — yields an ``Error`` event; an exit also ends the turn and the session
  (``SessionEnded(failed)`` with the exit code and stderr tail).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Unpack

from .._process import (
    DEFAULT_TRANSPORT,
    METHOD_NOT_FOUND,
    JsonRpcClient,
    LineTransport,
    OverlongLine,
    Tap,
    TransportFactory,
    TurnMark,
    end_turn,
    reap_turn,
)
from .._process._stop import CANCEL_WAIT
from ..errors import (
    JsonRpcError,
    ProcessError,
    SpawnError,
    UnsupportedOperation,
)
from ..events import (
    AgentInfo,
    ApprovalDecision,
    EndReason,
    ErrorEvent,
    Event,
    SessionEnded,
    SessionStarted,
    StatusChanged,
    Usage,
)
from ..events._text import storable
from ..protocols.acp import AcpParser
from ._acp_fs import ProjectFiles
from ._acp_handshake import (
    AUTH_REQUIRED,
    agent_field,
    authenticate,
    client_capabilities,
    initialize,
    open_session,
)
from ._acp_launch import AcpLaunch, build_launch, prompt_blocks
from ._acp_permissions import CANCELLED, Permissions
from ._acp_terminal import Terminals
from ._options import STANDARD_OPTIONS, LaunchArgs
from ._usage import UsageTotals
from .base import Attachment, BaseAdapter

if TYPE_CHECKING:  # the ACP SDK's pydantic schema loads only when ``init`` is read
    from acp.schema import InitializeResponse

_TURN_TIMEOUT = 3600.0
_TERMINAL_METHODS = frozenset(
    {
        "terminal/create",
        "terminal/output",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/release",
    }
)


class AcpAdapter(BaseAdapter, abstract=True):
    """Base of every ACP vendor adapter; see the module docstring."""

    cli_binary: ClassVar[str | None]
    acp_args: ClassVar[tuple[str, ...]] = ("--acp",)
    model_flags: ClassVar[tuple[str, ...]] = ()
    """Command-line flags that choose the model (first one used); empty: the agent's own
    configuration picks it (``set_model()`` can change it in a running session)."""
    auth_methods: ClassVar[tuple[str, ...]] = ()
    """``authenticate`` method ids to try, in order, when the agent says auth is required."""
    default_env: ClassVar[dict[str, str]] = {}
    """Environment the vendor needs under ACP; the caller's ``env`` wins over it."""
    serve_fs_read: ClassVar[bool] = True
    serve_fs_write: ClassVar[bool] = True
    serve_terminal: ClassVar[bool] = True
    start_timeout: ClassVar[float] = 90.0
    restart_after_cancel: ClassVar[bool] = False
    """A prompt cancelled with an error leaves the agent unable to take another (Hermes 0.19.0
    keeps its session "running" for good): corral restarts it and resumes the session."""
    cancel_wait: ClassVar[float] = CANCEL_WAIT
    """Seconds ``session/cancel`` gets to end the turn before corral signals the agent."""
    transport_factory: TransportFactory = DEFAULT_TRANSPORT
    """Builds the agent's line transport; a test plugs in :class:`corral.testing.Recording`."""

    # No ``effort``: ACP has no reasoning-effort setting.
    supported_options = STANDARD_OPTIONS - {"effort"}

    def __init__(
        self,
        *,
        tap: Tap | None = None,
        **launch: Unpack[LaunchArgs],
    ) -> None:
        self.take_options(launch)
        self.tap = tap
        self.parser = AcpParser()
        self.files = ProjectFiles(self.cwd)
        self.terminals: Terminals | None = None
        self.session_id: str | None = None
        self.init_raw: dict[str, Any] = {}
        self._init_typed: tuple[dict[str, Any], InitializeResponse | None] | None = None
        self.session_raw: dict[str, Any] = {}
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._prompts: asyncio.Queue[tuple[list[dict[str, Any]], Callable[[], None] | None]] = (
            asyncio.Queue()
        )
        self._client: JsonRpcClient | None = None
        self._transport: LineTransport | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.permissions = Permissions()
        self._in_turn = False
        self._replaying = False
        self._stopping = False
        self._ended = False
        self._usage = UsageTotals()
        self._cancelling = False
        self._restarting = False
        self._turn_mark = TurnMark()

    # ── launch ──
    def build_launch(self) -> AcpLaunch:
        return build_launch(
            self.binary,
            self.acp_args,
            model=self.model,
            model_flags=self.model_flags,
            extra_args=self.extra_args,
            env={**self.default_env, **self.env},
        )

    # ── the four coroutines ──
    async def start(self, session_id: str) -> AgentInfo:
        await self._spawn()
        self._tasks = [
            asyncio.create_task(self._prompt_loop(), name=f"{self.agent_id}-prompts"),
            asyncio.create_task(self._watch_exit(), name=f"{self.agent_id}-exit"),
        ]
        info = self.make_agent_info(
            name=agent_field(self.init_raw, "title") or agent_field(self.init_raw, "name"),
            version=agent_field(self.init_raw, "version"),
            model=self.model,
            slash_commands=self.parser.commands,
            agent_session_id=self.session_id,
        )
        self._emit(SessionStarted(agent=info, cwd=self.cwd, raw=self.session_raw or None))
        return info

    async def _spawn(self) -> None:
        """Start the agent process and open (or resume) the ACP session; nothing outlives a
        failure."""
        launch = self.build_launch()
        environ = launch.environ()
        self.terminals = Terminals(self.files, environ)
        self._transport = self.transport_factory(
            launch.argv, env=environ, cwd=self.cwd, tap=self.tap
        )
        await self._transport.start()
        self._client = JsonRpcClient(
            self._transport,
            on_request=self._on_request,
            on_notification=self._on_notification,
            on_other=self._on_other,
            default_timeout=self.start_timeout,
        )
        self._client.start()
        try:
            await self._handshake()
        except (ProcessError, JsonRpcError, TimeoutError) as exc:
            await self._close_process()
            raise SpawnError(launch.argv, f"ACP handshake failed: {exc}") from exc
        except BaseException:
            await self._close_process()
            raise

    async def _restart(self, why: str) -> bool:
        """Replace the agent process after a cancelled turn, resuming the same ACP session.

        Runs in the prompt loop. ``False`` (and the session ended ``failed``) when the agent
        cannot be resumed."""
        self._restarting = True
        try:
            watcher = self._tasks[1] if len(self._tasks) > 1 else None
            if watcher is not None and watcher is not asyncio.current_task():
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await watcher
            reap_turn(self._transport, self._turn_mark)  # the cancelled turn's tools first
            await self._close_process()
            self.resume_session_id = self.session_id or self.resume_session_id
            try:
                await self._spawn()
            except Exception as exc:
                self._emit(
                    ErrorEvent(
                        message=f"could not restart the agent after a cancel ({why}): {exc}",
                        code="restart_failed",
                        fatal=True,
                    )
                )
                self._end(EndReason.FAILED, message=f"restart after cancel failed: {exc}")
                return False
            self._emit(StatusChanged(status="restarted", message=why))
            self._tasks[1:] = [
                asyncio.create_task(self._watch_exit(), name=f"{self.agent_id}-exit")
            ]
            return True
        finally:
            self._restarting = False

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        await self._prompts.put((self._blocks(text, attachments), None))

    async def send_acknowledged(
        self,
        text: str,
        attachments: Sequence[Attachment] | None,
        *,
        ack: Callable[[], None],
    ) -> None:
        """ACP has no receipt before the turn ends: ``ack`` runs as ``session/prompt`` goes out."""
        await self._prompts.put((self._blocks(text, attachments), ack))

    def _blocks(self, text: str, attachments: Sequence[Attachment] | None) -> list[dict[str, Any]]:
        caps = (self.init_raw.get("agentCapabilities") or {}).get("promptCapabilities") or {}
        return prompt_blocks(
            text,
            attachments or (),
            image=bool(caps.get("image")),
            embedded_context=bool(caps.get("embeddedContext")),
        )

    async def stream(self) -> AsyncIterator[Event]:
        if self._ended and self._events.empty():
            return
        while True:
            event = await self._events.get()
            yield event
            if isinstance(event, SessionEnded):
                return

    async def stop(self) -> None:
        self._stopping = True
        self.permissions.cancel_all()
        code = await self._teardown()
        killed = self._transport is not None and self._transport.killed_by_us
        self._end(
            EndReason.KILLED if killed else EndReason.COMPLETED,
            exit_code=code,
            message="stopped",
        )

    # ── interaction ──
    async def interrupt(self) -> None:
        if self._client is None or self.session_id is None:
            raise UnsupportedOperation(self.agent_id, "interrupt")
        client, session_id = self._client, self.session_id

        async def cancel() -> None:
            self._cancelling = True
            self.permissions.cancel_all()
            await client.notify("session/cancel", {"sessionId": session_id})
            self.permissions.cancel_all()

        await end_turn(
            transport=self._transport,
            cancel=cancel,
            turn_over=lambda: not self._in_turn,
            before_escalate=lambda: setattr(self, "_restarting", self.cap_resume),
            mark=self._turn_mark,
            cancel_wait=self.cancel_wait,
        )

    async def respond_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        *,
        option_id: str | None = None,
        updated_input: Any = None,
        message: str | None = None,
    ) -> None:
        self.permissions.answer(request_id, decision, option_id)

    async def set_permission_mode(self, mode: str) -> None:
        """``session/set_mode`` (ids from the session's ``modes``), else the ``mode`` config option."""
        if not self.session_raw.get("modes") and self._config_option("mode"):
            await self._session_request(
                "session/set_config_option", {"configId": "mode", "value": mode}
            )
            return
        await self._session_request("session/set_mode", {"modeId": mode})

    async def set_model(self, model: str) -> None:
        """The ``model`` config option when offered, else the unstable ``session/set_model``."""
        if self._config_option("model"):
            await self._session_request(
                "session/set_config_option", {"configId": "model", "value": model}
            )
        else:
            await self._session_request("session/set_model", {"modelId": model})
        self.model = model

    async def list_models(self) -> list[str]:
        """The models the agent offered when the session opened (see :func:`session_models`)."""
        return session_models(self.session_raw)

    def _config_option(self, option_id: str) -> bool:
        options = self.session_raw.get("configOptions") or []
        return any(isinstance(o, dict) and o.get("id") == option_id for o in options)

    async def _session_request(self, method: str, params: dict[str, Any]) -> Any:
        if self._client is None or self.session_id is None:
            raise UnsupportedOperation(self.agent_id, method)
        try:
            return await self._client.request(method, {"sessionId": self.session_id, **params})
        except JsonRpcError as exc:
            if exc.code == -32601:
                raise UnsupportedOperation(self.agent_id, method) from exc
            raise

    # ── handshake ──
    def client_capabilities(self) -> dict[str, Any]:
        """What corral serves the agent, as the ``clientCapabilities`` of ``initialize``."""
        return client_capabilities(
            read=self.serve_fs_read, write=self.serve_fs_write, terminal=self.serve_terminal
        )

    @property
    def init(self) -> InitializeResponse | None:
        """The ``initialize`` answer as the SDK's type (``None``: none yet, or it does not
        validate). Parsed on first use: the SDK's pydantic schema costs about a second to import,
        which no run pays unless it asks (decision 039)."""
        if not self.init_raw:
            return None
        if self._init_typed is None or self._init_typed[0] is not self.init_raw:
            from acp.schema import InitializeResponse
            from pydantic import ValidationError

            try:
                typed: InitializeResponse | None = InitializeResponse.model_validate(self.init_raw)
            except ValidationError:
                typed = None
            self._init_typed = (self.init_raw, typed)
        return self._init_typed[1]

    async def _handshake(self) -> None:
        assert self._client is not None
        self.init_raw = await initialize(self._client, self.client_capabilities())

        async def open_() -> None:
            assert self._client is not None
            self.session_id, self.session_raw = await open_session(
                self._client,
                self.init_raw,
                cwd=self.cwd,
                resume_session_id=self.resume_session_id,
                agent_id=self.agent_id,
                # The history replay may trail the response (gemini streams it afterwards); it
                # is dropped until the first prompt goes out.
                before_load=lambda: setattr(self, "_replaying", True),
            )

        try:
            await open_()
        except JsonRpcError as exc:
            if exc.code != AUTH_REQUIRED or not await authenticate(
                self._client, self.init_raw, self.auth_methods
            ):
                raise
            await open_()
        if self.session_id and self.on_session_id is not None:
            self.on_session_id(self.session_id)
        await self.after_session()

    async def after_session(self) -> None:
        """Hook for vendors: runs once the session is open (e.g. choose a model)."""

    # ── turns ──
    async def _prompt_loop(self) -> None:
        assert self._client is not None
        while True:
            blocks, ack = await self._prompts.get()
            self._in_turn = True
            self._replaying = False
            self._cancelling = False
            self._turn_mark.mark()
            if ack is not None:
                ack()
            try:
                result = await self._client.request(
                    "session/prompt",
                    {"sessionId": self.session_id, "prompt": blocks},
                    timeout=_TURN_TIMEOUT,
                )
            except JsonRpcError as exc:
                raw = {"code": exc.code, "message": exc.rpc_message, "data": exc.data}
                if self._cancelling:
                    # Some agents (Hermes 0.19.0) answer a prompt cancelled during a tool with an
                    # error: the turn still ended because we cancelled it.
                    self._emit_all(self.parser.prompt_cancelled(raw))
                    if self.restart_after_cancel and not await self._restart(exc.rpc_message):
                        return
                else:
                    self._emit_all(self.parser.prompt_failed(exc.rpc_message, raw))
            except ProcessError as exc:
                if not self._cancelling:
                    self._emit_all(self.parser.prompt_failed(f"agent exited mid-turn: {exc}"))
                    return
                # corral's stop ladder had to end the agent: the turn was cancelled, and the
                # session goes on in a new process where the agent can resume it.
                self._emit_all(self.parser.prompt_cancelled({"corral": "agent stopped"}))
                if not self._restarting or not await self._restart("stopped by corral"):
                    return
            else:
                self._emit_all(self.parser.prompt_result(result))
            finally:
                self._in_turn = False

    async def _watch_exit(self) -> None:
        assert self._client is not None and self._transport is not None
        await self._client.eof.wait()
        if self._stopping or self._restarting:
            return
        if self._in_turn:
            # Let the prompt loop report the broken turn first.
            with contextlib.suppress(TimeoutError, ProcessError):
                await asyncio.wait_for(asyncio.shield(self._tasks[0]), 2.0)
        code: int | None
        try:
            code = await self._transport.wait(5.0)
        except TimeoutError:
            code = await self._transport.kill()
        tail = self._transport.stderr_tail[-2000:] or None
        self._emit(
            ErrorEvent(message=f"the agent exited (code {code})", code="agent_exited", fatal=True)
        )
        self._end(
            EndReason.FAILED, exit_code=code, message="the agent process exited", stderr_tail=tail
        )

    # ── incoming ──
    def _on_notification(self, method: str, params: Any) -> None:
        if method == "session/update":
            events = self.parser.update(
                (params or {}).get("update") if isinstance(params, dict) else None
            )
            if not self._replaying:
                self._emit_all(events)
            return
        self._emit(
            ErrorEvent(
                message=f"unexpected notification {method!r} from the agent",
                code="unknown_method",
                raw={"method": method, "params": params},
            )
        )

    async def _on_request(self, method: str, params: Any) -> Any:
        params = params if isinstance(params, dict) else {}
        if method == "session/request_permission":
            return {"outcome": await self._ask_permission(params)}
        if method == "fs/read_text_file" and self.serve_fs_read:
            return self.files.read(str(params.get("path")), params.get("line"), params.get("limit"))
        if method == "fs/write_text_file" and self.serve_fs_write:
            return self.files.write(str(params.get("path")), params.get("content"))
        if method in _TERMINAL_METHODS and self.serve_terminal and self.terminals is not None:
            return await self.terminals.handle(method, params)
        self._emit(
            ErrorEvent(
                message=f"the agent called {method!r}, which corral does not serve",
                code="unknown_method",
                raw={"method": method, "params": params},
            )
        )
        return METHOD_NOT_FOUND

    async def _ask_permission(self, params: dict[str, Any]) -> dict[str, Any]:
        if self._stopping:
            return dict(CANCELLED)
        request_id, future = self.permissions.open(params)
        self._emit_all(self.parser.permission(request_id, params))
        try:
            outcome = await future
        finally:
            self.permissions.close(request_id)
        decision = None if outcome.get("outcome") == "selected" else ApprovalDecision.CANCEL
        self._emit_all(self.parser.resolved(request_id, outcome, decision))
        return outcome

    def _on_other(self, line: bytes | OverlongLine) -> None:
        if isinstance(line, OverlongLine):
            text = f"an over-long line ({line.size} bytes) from the agent was dropped"
            head = line.head.decode("utf-8", "replace")
        else:
            head = line.decode("utf-8", "replace")
            if not head.strip():
                return
            text = "the agent wrote a line that is not JSON-RPC"
        self._emit(ErrorEvent(message=text, code="invalid_jsonrpc", raw={"line": head[:2000]}))

    # ── emitting and ending ──
    def _emit(self, event: Event) -> None:
        if self._ended:
            return
        event = storable(event)  # the driver's own events carry vendor payloads too
        if isinstance(event, Usage):
            self._usage.add(event)
        self._events.put_nowait(event)

    async def get_usage(self) -> UsageTotals:
        return self._usage.copy()

    def _emit_all(self, events: list[Event]) -> None:
        for event in events:
            self._emit(event)

    def _end(self, reason: EndReason, **fields: Any) -> None:
        if self._ended:
            return
        if self._in_turn:
            self._emit_all(self.parser.prompt_failed("the session ended during the turn"))
        self._emit(SessionEnded(reason=reason, **fields))
        self._ended = True

    async def _close_process(self) -> int | None:
        code: int | None = None
        if self._client is not None:
            code = await self._client.close(grace=3.0)
        elif self._transport is not None:
            code = await self._transport.kill()
        if self.terminals is not None:
            await self.terminals.close()
        return code

    async def _teardown(self) -> int | None:
        code = await self._close_process()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        return code


def session_models(result: dict[str, Any]) -> list[str]:
    """Model ids from a ``session/new`` result: ``models.availableModels[].modelId`` (Gemini,
    Qwen, Hermes), else the options of the ``model`` config option (OpenCode). Anything malformed
    is skipped; an agent that offers neither yields ``[]``."""
    block = result.get("models")
    listed = block.get("availableModels") if isinstance(block, dict) else None
    if isinstance(listed, list):
        return [
            m["modelId"]
            for m in listed
            if isinstance(m, dict) and isinstance(m.get("modelId"), str)
        ]
    for option in result.get("configOptions") or []:
        if isinstance(option, dict) and option.get("id") == "model":
            values = option.get("options")
            if isinstance(values, list):
                return [
                    o["value"]
                    for o in values
                    if isinstance(o, dict) and isinstance(o.get("value"), str)
                ]
    return []
