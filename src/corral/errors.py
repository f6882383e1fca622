"""corral's one exception tree.

Library code raises these and never prints or exits; the CLI maps them to a message and an exit code.
Errors carry their data as attributes, so nobody has to parse a message::

    CorralError
    ├── ManifestError              a manifest broke one or more rules (.violations)
    ├── AdapterError
    │   ├── AdapterNotFoundError   no runnable adapter with that id (.adapter_id, .reason)
    │   ├── AdapterContractError   an adapter class breaks the BaseAdapter contract (TypeError too)
    │   ├── UnsupportedOperation   the adapter cannot do that (.adapter_id, .operation)
    │   ├── IntentRefused          the adapter cannot enforce that intent (.adapter_id, .intent, .reason)
    │   └── AdapterUnverified      its profile changed and it does not verify now (.adapter_id, .detail)
    ├── SpawnError                 a process could not be started (.argv)
    │   └── ServerStartTimeout     an agent's server never answered (.url, .seconds, .stderr); also TimeoutError
    ├── ProcessError               a process failed (.exit_code, .stderr)
    ├── ProtocolError              bad bytes on the wire (.line)
    │   ├── JsonRpcError           a JSON-RPC peer answered with an error (.code, .data)
    │   └── RequestTimeout         a request got no answer in time (.method, .timeout); also TimeoutError
    ├── SessionError               a session operation failed (.session_id)
    │   ├── SessionNotFoundError   no session with that id (.session_id)
    │   └── ResumeRefused          the vendor's stored session is not the one expected (.code, .offer)
    ├── QueueError                 the prompt queue refused an operation (.prompt_id)
    │   ├── QueueFullError         the bounded queue is full (.limit)
    │   └── PromptNotFoundError    no prompt with that id (.prompt_id)
    ├── ApiError                   the corral service answered with an error (.status, .kind)
    ├── InstallError               installing a pinned agent CLI failed (.agent, .log_tail)
    └── ConfigError                a setting or an input file is invalid
        └── InvalidPromptError     a prompt refused before it reaches an agent (.reason)
"""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:  # nor ``collections``, before corral run's early spawn (decision 057)
    from collections.abc import Sequence
    from typing import Any


class CorralError(Exception):
    """Root of every error corral raises on purpose."""

    exit_code: int = 1


class ConfigError(CorralError):
    """A setting, argument or input file is invalid."""

    exit_code = 2


class InvalidPromptError(ConfigError):
    """A prompt that must not reach an agent: empty, whitespace only, not text, or unencodable."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"invalid prompt: {reason}")
        self.reason = reason


class ManifestError(CorralError):
    """A manifest violates one or more rules; ``violations`` lists every one of them."""

    exit_code = 3

    def __init__(self, message: str, violations: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.violations = list(violations)


class AdapterError(CorralError):
    """Something about an adapter is wrong."""


class AdapterNotFoundError(AdapterError):
    exit_code = 4

    def __init__(self, adapter_id: str, reason: str | None = None) -> None:
        if reason is None:
            super().__init__(f"no adapter named {adapter_id!r}")
        else:
            super().__init__(f"adapter {adapter_id!r} is listed but cannot run: {reason}")
        self.adapter_id = adapter_id
        self.reason = reason
        """Why a listed adapter cannot run (``None``: no adapter has that id)."""


class AdapterContractError(AdapterError, TypeError):
    """An adapter class breaks the BaseAdapter contract (also a ``TypeError``)."""


class UnsupportedOperation(AdapterError):
    """The adapter does not support this operation; its capabilities say so."""

    def __init__(self, adapter_id: str, operation: str) -> None:
        super().__init__(f"{adapter_id} does not support {operation}")
        self.adapter_id = adapter_id
        self.operation = operation


class IntentRefused(AdapterError):
    """The adapter cannot enforce the intent asked for; refused before any process starts.

    Exit code 5 on the CLI, HTTP 422 with code ``intent_refused`` from the service.
    """

    exit_code = 5

    def __init__(self, adapter_id: str, intent: str, reason: str) -> None:
        super().__init__(f"{adapter_id} cannot enforce intent {intent!r}: {reason}")
        self.adapter_id = adapter_id
        self.intent = intent
        self.reason = reason


class AdapterUnverified(AdapterError):
    """The adapter's profile changed since it was verified and it does not verify now; the
    launch is refused (HTTP 409 ``adapter_unverified``). See ``corral.registry.launch_gate``."""

    def __init__(self, adapter_id: str, detail: str) -> None:
        super().__init__(
            f"{adapter_id} changed since it was verified and does not verify now: {detail}"
        )
        self.adapter_id = adapter_id
        self.detail = detail


class SpawnError(CorralError):
    def __init__(self, argv: Sequence[str], message: str) -> None:
        super().__init__(f"could not start {argv[0] if argv else '?'}: {message}")
        self.argv = list(argv)


class ServerStartTimeout(SpawnError, TimeoutError):
    """An agent's HTTP server was started but did not answer before the deadline."""

    def __init__(
        self, url: str, seconds: float, last: str, tries: int = 0, stderr: str = ""
    ) -> None:
        CorralError.__init__(
            self,
            f"the agent server at {url} was not ready after {seconds:.1f}s "
            f"({tries} probes; last: {last})",
        )
        self.argv: list[str] = []
        self.url = url
        self.seconds = seconds
        self.last = last
        self.tries = tries
        self.stderr = stderr


class ProcessError(CorralError):
    def __init__(self, message: str, exit_code: int | None = None, stderr: str = "") -> None:
        super().__init__(message)
        self.exit_code = exit_code if exit_code is not None else 1
        self.process_exit_code = exit_code
        self.stderr = stderr


class ProtocolError(CorralError):
    def __init__(self, message: str, line: bytes | str | None = None) -> None:
        super().__init__(message)
        self.line = line


class JsonRpcError(ProtocolError):
    """A JSON-RPC error object, received from a peer or about to be sent to one."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code = code
        self.rpc_message = message
        self.data = data


class RequestTimeout(ProtocolError, TimeoutError):
    """A request to an agent got no answer within its timeout."""

    def __init__(self, method: str, timeout: float) -> None:
        super().__init__(f"no answer to {method!r} within {timeout:g}s")
        self.method = method
        self.timeout = timeout


class SessionError(CorralError):
    def __init__(self, message: str, session_id: str | None = None) -> None:
        super().__init__(message)
        self.session_id = session_id


class ResumeRefused(SessionError):
    """Resuming would not continue the conversation corral knows (docs/handoff.md#resume-safety).

    ``code``: ``vendor_session_lost`` (the vendor's store no longer has it),
    ``vendor_session_elsewhere`` (it records another directory), ``vendor_session_diverged`` (the
    last turn corral saw is not in it) or ``vendor_session_unknown`` (corral never learnt its id).
    ``offer`` is what to do instead: a fresh session carrying a summary."""

    def __init__(self, message: str, session_id: str, *, code: str, offer: str) -> None:
        super().__init__(message, session_id)
        self.code = code
        self.offer = offer


class SessionNotFoundError(SessionError):
    exit_code = 4

    def __init__(self, session_id: str) -> None:
        super().__init__(f"no session {session_id!r}", session_id)


class QueueError(CorralError):
    def __init__(self, message: str, prompt_id: str | None = None) -> None:
        super().__init__(message)
        self.prompt_id = prompt_id


class QueueFullError(QueueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the prompt queue is full ({limit} prompts)")
        self.limit = limit


class PromptNotFoundError(QueueError):
    exit_code = 4

    def __init__(self, prompt_id: str) -> None:
        super().__init__(f"no prompt {prompt_id!r}", prompt_id)


class ApiError(CorralError):
    """The corral service refused a request or could not be reached (``status`` 0)."""

    def __init__(self, message: str, status: int = 0, kind: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        # The service's refusals keep their CLI exit codes: 4 not found, 5 intent refused.
        self.exit_code = 4 if status == 404 else 5 if kind == "IntentRefused" else 1


class InstallError(CorralError):
    def __init__(self, agent: str, message: str, log_tail: str = "") -> None:
        super().__init__(f"installing {agent} failed: {message}")
        self.agent = agent
        self.log_tail = log_tail
