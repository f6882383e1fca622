"""One ``opencode serve`` process on a free loopback port, behind a generated password.

* ``build_serve_launch`` is pure: argv and env for the server (tested without a process).
* :func:`wait_ready` waits until the server answers, through the driver's
  :class:`~corral._process.HttpTransport` (the process itself, its requests, events and stop are
  the transport's: :class:`~corral._process.ServerTransport` live, a recorded exchange in a replay).

Readiness: a fresh ``opencode serve`` leaves unanswered, for good, a request whose connection it
accepted before it printed ``opencode server listening on …`` (seen with 1.18.33 on
``/global/health``, ``/doc``, ``/event`` and ``POST /session``: the port is bound 0.2–0.3 s before
that line; a request sent after it is answered in 10–60 ms). So readiness is a loop of probes of
``GET /global/health``, then one project-scoped request (``GET /session?directory=…``, which boots
the project instance), all under an overall ``deadline``. Until the server prints that line
(:data:`LISTENING`, watched through the transport's ``printed``), a health probe is abandoned
after ``first_probe_timeout`` (the first ``SHORT_PROBES`` that time out, which cover that
window), then after twice as long for each further one that timed out, up to ``probe_timeout``:
a probe lost in the window costs a tenth of a second, not the whole ``probe_timeout`` (it had
cost every start about 2 s, issue 20), and a server slow to answer still gets the full
``probe_timeout``. When the line comes while a probe waits, that probe is dropped and the next
one goes out at once, with the whole ``probe_timeout`` (a probe lost in the window had cost the
rest of its short timeout, 0.1–0.2 s after the line). A server that never prints the line (a
replay, another version) is probed as before. The project request gets ``probe_timeout``. When
the deadline passes, :class:`~corral.errors.ServerStartTimeout` says what was tried and carries
the server's stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._process import HttpTransport, RequestFailed
from ..errors import ServerStartTimeout

USERNAME = "opencode"

LISTENING = b"opencode server listening on"
"""What ``opencode serve`` prints once it answers (1.18.33): ``opencode server listening on
http://127.0.0.1:PORT``."""

SHORT_PROBES = 3
"""Health probes that may time out at ``first_probe_timeout`` before the timeout starts doubling
(0.3 s of them cover the 0.2–0.3 s between the bind and the "listening" line)."""


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


async def wait_ready(
    server: HttpTransport,
    *,
    directory: str,
    deadline: float = 60.0,
    probe_timeout: float = 2.0,
    first_probe_timeout: float = 0.1,
    interval: float = 0.1,
) -> str:
    """Probe until the server and the project instance answer; returns the server version."""
    started = time.monotonic()
    listening = asyncio.ensure_future(server.printed(LISTENING, deadline))
    try:
        return await _probe(
            server,
            listening,
            started=started,
            directory=directory,
            deadline=deadline,
            probe_timeout=probe_timeout,
            first_probe_timeout=first_probe_timeout,
            interval=interval,
        )
    finally:
        listening.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await listening


def _quiet(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: a probe nobody awaits any more may have failed


def _heard(listening: asyncio.Future[bool]) -> bool:
    return (
        listening.done()
        and not listening.cancelled()
        and listening.exception() is None
        and listening.result()
    )


async def _probe(
    server: HttpTransport,
    listening: asyncio.Future[bool],
    *,
    started: float,
    directory: str,
    deadline: float,
    probe_timeout: float,
    first_probe_timeout: float,
    interval: float,
) -> str:
    tries = 0
    last = "no answer yet"
    version = ""
    stages = [("/global/health", None), ("/session", {"directory": directory, "limit": "1"})]
    stage = 0
    lost = 0
    while True:
        if server.returncode is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait(), 2.0)  # its last words
            raise ServerStartTimeout(
                server.url,
                time.monotonic() - started,
                f"the server exited with code {server.returncode}",
                tries,
                server.stderr_tail,
            )
        elapsed = time.monotonic() - started
        if elapsed >= deadline:
            raise ServerStartTimeout(server.url, elapsed, last, tries, server.stderr_tail)
        path, params = stages[stage]
        timeout = probe_timeout
        if stage == 0 and not _heard(listening):
            timeout = min(first_probe_timeout * 2 ** max(0, lost - SHORT_PROBES + 1), timeout)
        tries += 1
        probe = asyncio.ensure_future(server.request("GET", path, params=params, timeout=timeout))
        if stage == 0 and not listening.done():
            try:
                await asyncio.wait((probe, listening), return_when=asyncio.FIRST_COMPLETED)
            except BaseException:  # cancelled from outside: the probe goes with it
                probe.cancel()
                probe.add_done_callback(_quiet)
                raise
            if not probe.done() and _heard(listening):
                # The line came while this probe waits: its connection may be one the booting
                # server took and will never answer, so ask again at once.
                probe.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await probe
                last = f"GET {path}: asked again once the server said it listens"
                continue
        try:
            reply = await probe
        except RequestFailed as exc:
            cause = exc.__cause__
            last = f"GET {path}: {type(cause).__name__ if cause else exc}"
            if stage == 0 and exc.timed_out:
                lost += 1
            await asyncio.sleep(interval)
            continue
        if reply.status != 200:
            last = f"GET {path}: HTTP {reply.status}"
            await asyncio.sleep(2 * interval)
            continue
        if stage == 0 and isinstance(reply.payload, dict):
            version = str(reply.payload.get("version") or "")
        stage += 1
        if stage == len(stages):
            return version
