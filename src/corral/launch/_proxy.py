"""Step 5 at run time: start the proxy process, wait for it to be healthy, stop it.

The proxy runs as ``python -m corral.launch._proxy_child`` in a process group of its own, with a
parent-death signal, so it goes away when corral does, whatever way corral ends; stopping it is
SIGTERM, up to 5 s, SIGKILL (seed 004 step 8).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import selectors
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass

from ._children import death_signal_preexec, terminate
from ._env import PROXY_MODULE, ProxyConfig
from ._errors import LaunchError

HEALTH_TIMEOUT = 15.0


@dataclass
class ProxyProcess:
    proc: subprocess.Popen[bytes]
    base_url: str
    port: int
    token: str

    def stop(self) -> int | None:
        rc = terminate(self.proc)
        _close(self.proc)
        return rc


def _close(proc: subprocess.Popen[bytes]) -> None:
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def start_proxy_process(
    config: ProxyConfig,
    base_env: Mapping[str, str],
    timeout: float = HEALTH_TIMEOUT,
    echo: bool = False,
) -> ProxyProcess:
    """Spawn the proxy and wait (at most ``timeout``) for its ready line and ``GET /health``."""
    token = secrets.token_urlsafe(24)
    env = {**base_env, **config.env, "CORRAL_PROXY_TOKEN": token}
    env["CORRAL_PROXY_PARENT"] = str(os.getpid())
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", PROXY_MODULE],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
            preexec_fn=death_signal_preexec(),
        )
    except OSError as exc:
        raise LaunchError("PROXY_LAUNCH_FAILED", error=str(exc)) from exc
    deadline = time.monotonic() + timeout
    try:
        line = _ready_line(proc, deadline, config.port)
        info = json.loads(line)
        base_url, port = str(info["base_url"]), int(info["port"])
        _wait_healthy(proc, base_url, deadline, port)
    except LaunchError:
        terminate(proc)
        _close(proc)
        raise
    except (ValueError, KeyError, TypeError) as exc:
        terminate(proc)
        _close(proc)
        raise LaunchError("PROXY_LAUNCH_FAILED", error=f"bad ready line: {exc}") from exc
    _drain(proc, echo)
    return ProxyProcess(proc, base_url, port, token)


def _drain(proc: subprocess.Popen[bytes], echo: bool) -> None:
    """Read the proxy's stderr for its whole life (so it never blocks on a full pipe); echo it
    to corral's stderr with ``--debug``, else drop it."""
    stream = proc.stderr
    if stream is None:
        return

    def pump() -> None:
        for line in iter(stream.readline, b""):
            if echo:
                sys.stderr.buffer.write(line)
                sys.stderr.flush()

    threading.Thread(target=pump, name="corral-launch-proxy-stderr", daemon=True).start()


def _ready_line(proc: subprocess.Popen[bytes], deadline: float, port: int) -> str:
    assert proc.stdout is not None
    buf = b""
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LaunchError("PROXY_HEALTH_TIMEOUT", port=port)
            if not sel.select(min(left, 0.5)):
                if proc.poll() is not None:
                    raise LaunchError("PROXY_LAUNCH_FAILED", error=_died(proc))
                continue
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                proc.wait(2)
                raise LaunchError("PROXY_LAUNCH_FAILED", error=_died(proc))
            buf += chunk
            if len(buf) > 65536:
                raise LaunchError("PROXY_LAUNCH_FAILED", error="no ready line")
    return buf.split(b"\n", 1)[0].decode("utf-8", "replace")


def _died(proc: subprocess.Popen[bytes]) -> str:
    tail = b""
    if proc.stderr is not None and proc.poll() is not None:
        try:
            tail = proc.stderr.read()[-2000:]
        except (OSError, ValueError):
            tail = b""
    text = tail.decode("utf-8", "replace").strip().splitlines()
    return f"exit {proc.returncode}" + (f": {text[-1]}" if text else "")


def _wait_healthy(proc: subprocess.Popen[bytes], base_url: str, deadline: float, port: int) -> None:
    while True:
        try:
            with urllib.request.urlopen(base_url + "/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if proc.poll() is not None:
            raise LaunchError("PROXY_LAUNCH_FAILED", error=_died(proc))
        if time.monotonic() >= deadline:
            raise LaunchError("PROXY_HEALTH_TIMEOUT", port=port)
        time.sleep(0.05)
