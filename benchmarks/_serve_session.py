"""A ``corral serve`` child for a benchmark, and one text turn through a session in it as an SSE
observer sees it (issue 20 part 1: the serve columns of ``bench_overhead``, and ``bench_live_path``).

:func:`serve_child` starts ``python -m corral serve`` on 127.0.0.1 (a free port) with a temporary
``CORRAL_HOME``, a token, and the built-in adapters of ``targets`` redirected as
:mod:`benchmarks._serve_targets` describes; it waits (bounded) until ``/api/health`` answers and
stops the service on exit. :func:`one_turn` creates a session, follows its SSE stream on a raw
socket (:class:`SseLines` frames it), posts one prompt and times, on ``time.monotonic_ns``:

* ready       from sending ``POST /api/sessions`` to its 201: the manager has started the adapter
              (its CLI spawned and, for a long-lived protocol, its handshake answered) and stored
              ``session.started``; the session is idle and takes prompts
* first text  from sending ``POST …/prompts`` to the observer reading the first ``text.delta``
              (or ``text.complete``, for a CLI that does not stream)
* turn end    …to the observer reading ``turn.completed``
* RSS         the highest VmRSS of the service process, and of its database writer process
              (decision 051; 0 on the writer thread), each sampled every 20 ms meanwhile

and kills the session. A turn that does not end within the timeout is a failed sample (``ok``
false), as a bare run that times out is; a refused session create raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from . import _serve_targets
from .bench_serve_scale import TOKEN, _free_port, _rss_kib, _writer_pids

REPO = Path(__file__).resolve().parents[1]
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


@dataclass(frozen=True)
class ServeChild:
    pid: int
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextlib.contextmanager
def serve_child(
    root: Path, targets: Mapping[str, Mapping[str, Any]], *, ready_timeout: float = 60.0
) -> Iterator[ServeChild]:
    """``corral serve`` in a child process whose adapters ``targets`` are redirected."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        CORRAL_HOME=str(root / "corral-home"),
        CORRAL_TOKEN=TOKEN,
        NO_COLOR="1",
    )
    if targets:
        env[_serve_targets.TARGETS_ENV] = json.dumps(targets)
        env["CORRAL_EXTRA_ADAPTERS"] = _serve_targets.extra_adapters(targets)
    log_path = root / "serve.log"
    with log_path.open("wb") as log:
        # cwd: the repository, so the service imports ``benchmarks._serve_targets`` (``-m``
        # puts the working directory first on sys.path).
        server = subprocess.Popen(
            [sys.executable, "-m", "corral", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            _wait_healthy(server, port, ready_timeout)
            yield ServeChild(server.pid, port)
        except BaseException:
            log.flush()
            tail = log_path.read_bytes()[-3000:].decode(errors="replace")
            print(f"the service's output (tail):\n{tail}", file=sys.stderr)
            raise
        finally:
            server.terminate()
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _wait_healthy(server: subprocess.Popen[bytes], port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"corral serve exited with {server.returncode}")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code == 200:
                return
        time.sleep(0.05)
    raise TimeoutError(f"corral serve did not answer /api/health within {timeout:g} s")


class SseLines:
    """Frames a ``text/event-stream`` body: :meth:`feed` takes raw bytes (an HTTP head first is
    skipped) and returns each complete ``data`` line with the ``event`` type before it."""

    def __init__(self) -> None:
        self._rest = b""
        self._head = True
        self._type = b"message"

    @property
    def attached(self) -> bool:
        """Whether the HTTP head has been read (the stream is open)."""
        return not self._head

    def feed(self, chunk: bytes) -> list[tuple[bytes, bytes]]:
        data = self._rest + chunk
        if self._head:
            end = data.find(b"\r\n\r\n")
            if end < 0:
                self._rest = data
                return []
            data, self._head = data[end + 4 :], False
        lines = data.split(b"\n")
        self._rest = lines.pop()
        out: list[tuple[bytes, bytes]] = []
        for line in lines:
            line = line.rstrip(b"\r")
            if line.startswith(b"event: "):
                self._type = line[7:]
            elif line.startswith(b"data: "):
                out.append((self._type, line[6:]))
            elif not line:
                self._type = b"message"
        return out


async def sse_events(
    port: int, session_id: str, after: int = 0
) -> AsyncGenerator[tuple[bytes, bytes, int]]:
    """``(event type, data, monotonic ns when its bytes were read)`` of one session's stream,
    from the stored event after ``after`` on, until the caller stops iterating. The first item is
    ``(b"", b"", ns)`` when the response's head has arrived: the observer is attached."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        (
            f"GET /api/sessions/{session_id}/stream?after={after} HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Accept: text/event-stream\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    frames = SseLines()
    attached = False
    try:
        while chunk := await reader.read(1 << 16):
            now = time.monotonic_ns()
            found = frames.feed(chunk)
            if not attached and frames.attached:
                attached = True
                yield b"", b"", now
            for kind, data in found:
                yield kind, data, now
    finally:
        writer.close()


@dataclass
class ServeSample:
    ready: float
    first_text: float | None
    end: float | None
    peak_rss_kib: int
    ok: bool
    peak_writer_rss_kib: int = 0


async def _sample_rss(pid: int, peak: list[int], writer_peak: list[int]) -> None:
    writers = _writer_pids(pid)  # found once: the writer lives as long as the service
    while True:
        with contextlib.suppress(OSError, RuntimeError):
            peak.append(_rss_kib(pid))
            writer_peak.append(sum(_rss_kib(w) for w in writers))
        await asyncio.sleep(0.02)


async def one_turn(
    child: ServeChild, body: Mapping[str, Any], prompt: str, timeout: float
) -> ServeSample:
    """A new session of ``body`` (``POST /api/sessions``), one prompt, timed; then killed."""
    peak: list[int] = []
    writer_peak: list[int] = []
    sampler = asyncio.create_task(_sample_rss(child.pid, peak, writer_peak))
    # idle connections dropped before the service's 5 s keep-alive closes them under a request
    limits = httpx.Limits(keepalive_expiry=2.0)
    async with httpx.AsyncClient(
        base_url=child.base_url, headers=HEADERS, timeout=timeout, limits=limits
    ) as api:
        try:
            t0 = time.monotonic_ns()
            created = await api.post("/api/sessions", json=dict(body))
            ready = (time.monotonic_ns() - t0) / 1e9
            if created.status_code != 201:
                raise RuntimeError(f"session refused: {created.status_code} {created.text[:300]}")
            sid = str(created.json()["id"])
            try:
                try:
                    sample = await asyncio.wait_for(
                        _turn(api, child, sid, prompt, ready, peak), timeout
                    )
                except TimeoutError:  # counted as a failed run, as a bare run that times out is
                    sample = ServeSample(ready, None, None, max(peak, default=0), False)
                sample.peak_writer_rss_kib = max(writer_peak, default=0)
                return sample
            finally:  # a kill stops the CLI first: its own, longer bound
                await api.post(f"/api/sessions/{sid}/kill", json={}, timeout=max(30.0, timeout))
        finally:
            sampler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sampler


async def _turn(
    api: httpx.AsyncClient, child: ServeChild, sid: str, prompt: str, ready: float, peak: list[int]
) -> ServeSample:
    first: float | None = None
    end: float | None = None
    ok = False
    events = sse_events(child.port, sid)
    try:
        async for kind, _, _ in events:
            if kind == b"session.started":  # replayed: the observer is attached
                break
        t0 = time.monotonic_ns()
        sent = await api.post(f"/api/sessions/{sid}/prompts", json={"text": prompt})
        sent.raise_for_status()
        async for kind, data, at in events:
            if first is None and kind in (b"text.delta", b"text.complete"):
                first = (at - t0) / 1e9
            elif kind == b"turn.completed":
                end = (at - t0) / 1e9
                ok = b'"stop_reason":"error"' not in data
                break
            elif kind == b"session.ended":
                break
    finally:
        await events.aclose()
    return ServeSample(ready, first, end, max(peak, default=0), ok)
