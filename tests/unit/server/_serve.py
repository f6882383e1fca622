"""A real ``corral serve`` process for tests: port 0, a temp ``CORRAL_HOME``, the URL from its output.

``corral serve`` prints the URL it really listens on and a one-time login link before it serves;
:func:`serve_process` reads both from its stderr, and the token from the home's token file, like
the CLI does. The process is terminated (then killed) when the context ends.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

START_TIMEOUT = 30.0
_URL = re.compile(r"corral serving on (http://\S+)")
_LOGIN = re.compile(r"one-time link\): (http://\S+)")


@dataclass
class Served:
    url: str
    login_url: str
    home: Path
    log: Path
    proc: subprocess.Popen[bytes]

    @property
    def token(self) -> str:
        return (self.home / "token").read_text().strip()

    def client(self, headers: Mapping[str, str] | None = None) -> httpx.Client:
        """Authenticated like the CLI: the bearer token from the token file."""
        auth = {"Authorization": f"Bearer {self.token}", **(headers or {})}
        return httpx.Client(base_url=self.url, headers=auth, timeout=10)


@contextlib.contextmanager
def serve_process(home: Path, *args: str, env: Mapping[str, str] | None = None) -> Iterator[Served]:
    full_env = {k: v for k, v in os.environ.items() if k != "CORRAL_TOKEN"}
    full_env.update({"CORRAL_HOME": str(home), **(env or {})})
    log = home.parent / f"{home.name}-serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "corral", "serve", "--port", "0", *args],
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            text = log.read_text(errors="replace")
            url, login = _URL.search(text), _LOGIN.search(text)
            if url and login:
                break
            assert proc.poll() is None, f"corral serve exited:\n{text}"
            assert time.monotonic() < deadline, f"corral serve printed no URL:\n{text}"
            time.sleep(0.05)
        yield Served(url.group(1), login.group(1), home, log, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
