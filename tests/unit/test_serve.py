"""`corral serve` starts and answers on 127.0.0.1 (the README's first command)."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_corral_serve_answers_on_loopback(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "CORRAL_HOME": str(tmp_path)}
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "corral", "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "corral serve did not answer within 30 s"
                time.sleep(0.1)
        assert r.status_code == 200
        assert r.json()["ok"] is True
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        assert "corral" in page.text
    finally:
        proc.terminate()
        proc.wait(timeout=10)
