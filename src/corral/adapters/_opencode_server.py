"""One ``opencode serve`` process on a free loopback port, behind a generated password.

* ``build_serve_launch`` is pure: argv and env for the server (tested without a process).
* :class:`OpenCodeServer` starts it in its own process group, waits until it answers, and stops it
  by PID: SIGTERM, a grace period, then SIGKILL (SIGINT does not always stop it). It is also the
  process :func:`corral._process.end_turn` climbs on (``pid``, ``returncode``, ``signal_group``,
  ``kill``) when an abort does not end a turn.

Readiness: a fresh ``opencode serve`` sometimes leaves its first HTTP request(s) unanswered for
minutes (seen with 1.18.33 on ``/doc``, ``/event`` and ``POST /session``). So readiness is a loop of
short-timeout probes of ``GET /global/health`` followed by one project-scoped request (``GET
/session?directory=…``, which boots the project instance), each probe abandoned after
``probe_timeout``, all under an overall ``deadline``. When the deadline passes,
:class:`~corral.errors.ServerStartTimeout` says what was tried and carries the server's stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import httpx

from .._process._lifecycle import child_setup
from .._redact import redact
from ..errors import ServerStartTimeout, SpawnError

USERNAME = "opencode"


@dataclass(frozen=True)
class ServeLaunch:
    argv: list[str]
    env: dict[str, str]
    url: str
    password: str


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def build_serve_launch(
    *,
    binary: str,
    port: int,
    password: str,
    env: Mapping[str, str],
    extra_args: Sequence[str] = (),
) -> ServeLaunch:
    """argv/env of ``opencode serve`` on ``127.0.0.1:port`` with basic auth."""
    argv = [binary, "serve", "--hostname", "127.0.0.1", "--port", str(port), *extra_args]
    full_env = dict(env)
    full_env["OPENCODE_SERVER_PASSWORD"] = password
    full_env["OPENCODE_SERVER_USERNAME"] = USERNAME
    # The question tool is only offered to some clients; corral answers questions, so ask for it.
    full_env.setdefault("OPENCODE_ENABLE_QUESTION_TOOL", "1")
    return ServeLaunch(argv=argv, env=full_env, url=f"http://127.0.0.1:{port}", password=password)


def new_password() -> str:
    return secrets.token_urlsafe(24)


class OpenCodeServer:
    """The server process. ``await start()``, use ``url``/``auth``, ``await stop()``."""

    def __init__(self, launch: ServeLaunch, *, cwd: str) -> None:
        self.launch = launch
        self.cwd = cwd
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr: deque[bytes] = deque(maxlen=200)
        self._drain: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return self.launch.url

    @property
    def auth(self) -> httpx.BasicAuth:
        return httpx.BasicAuth(USERNAME, self.launch.password)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc else None

    @property
    def stderr_tail(self) -> str:
        return redact(
            b"".join(self._stderr).decode("utf-8", errors="replace")[-8000:], self.launch.env
        )

    async def start(self) -> None:
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.launch.argv,
                cwd=self.cwd,
                env=self.launch.env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=child_setup,
            )
        except OSError as exc:
            raise SpawnError(self.launch.argv, str(exc)) from exc
        self._drain = asyncio.create_task(self._drain_output(), name="opencode-serve-output")

    async def _drain_output(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        while chunk := await self._proc.stdout.read(65536):
            self._stderr.append(chunk)

    async def wait_ready(
        self,
        client: httpx.AsyncClient,
        *,
        directory: str,
        deadline: float = 60.0,
        probe_timeout: float = 2.0,
    ) -> str:
        """Probe until the server and the project instance answer; returns the server version."""
        started = time.monotonic()
        tries = 0
        last = "no answer yet"
        version = ""
        stages = [("/global/health", None), ("/session", {"directory": directory, "limit": "1"})]
        stage = 0
        while True:
            if self._proc is not None and self._proc.returncode is not None:
                await self._finish_drain()
                raise ServerStartTimeout(
                    self.url,
                    time.monotonic() - started,
                    f"the server exited with code {self._proc.returncode}",
                    tries,
                    self.stderr_tail,
                )
            elapsed = time.monotonic() - started
            if elapsed >= deadline:
                raise ServerStartTimeout(self.url, elapsed, last, tries, self.stderr_tail)
            path, params = stages[stage]
            tries += 1
            try:
                resp = await asyncio.wait_for(
                    client.get(self.url + path, params=params, timeout=probe_timeout),
                    probe_timeout + 0.5,
                )
            except (httpx.HTTPError, TimeoutError) as exc:
                last = f"GET {path}: {type(exc).__name__}"
                await asyncio.sleep(0.1)
                continue
            if resp.status_code != 200:
                last = f"GET {path}: HTTP {resp.status_code}"
                await asyncio.sleep(0.2)
                continue
            if stage == 0:
                with contextlib.suppress(ValueError, AttributeError):
                    version = str(resp.json().get("version") or "")
            stage += 1
            if stage == len(stages):
                return version

    async def wait(self) -> int:
        """Wait for the server process to exit (however it ends)."""
        if self._proc is None:
            raise RuntimeError("the server was not started")
        return await self._proc.wait()

    async def stop(self, grace: float = 5.0) -> int | None:
        """SIGTERM the process group, wait ``grace``, then SIGKILL. Idempotent."""
        proc = self._proc
        if proc is None:
            return None
        if proc.returncode is None:
            self._signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), grace)
            except TimeoutError:
                self._signal(signal.SIGKILL)
                await proc.wait()
        else:
            self._signal(signal.SIGKILL)
        await self._finish_drain()
        return proc.returncode

    async def kill(self, grace: float = 3.0) -> int | None:
        """The stop ladder's last step (:func:`corral._process.end_turn`): :meth:`stop`."""
        return await self.stop(grace)

    def signal_group(self, sig: signal.Signals) -> None:
        """Signal the server's process group (the ladder's SIGINT step)."""
        if self._proc is not None and self._proc.returncode is None:
            self._signal(sig)

    async def drained(self) -> None:
        """After the process exited: wait (bounded) until its last output is read."""
        await self._finish_drain()

    async def _finish_drain(self) -> None:
        """Read what the process printed last (bounded: a grandchild may hold the pipe open)."""
        if self._drain is None or self._drain.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._drain), 1.0)
        except (TimeoutError, Exception):
            self._drain.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._drain

    def _signal(self, sig: signal.Signals) -> None:
        proc = self._proc
        if proc is None:
            return
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                if proc.returncode is None:
                    proc.send_signal(sig)
