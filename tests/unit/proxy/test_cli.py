"""``corral proxy serve`` as a process: announces its URL and token, serves, stops on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from corral.testing import FakeModelServer


def test_serve_prints_url_and_token_and_stops_on_sigterm(tmp_path: Path) -> None:
    with FakeModelServer(
        {"steps": [{"match": {"kind": "any"}, "reply": {"text": "via cli"}}]}
    ) as fake:
        env = dict(os.environ, CORRAL_HOME=str(tmp_path), CORRAL_PROXY_TOKEN="cli-token")
        with subprocess.Popen(
            [
                sys.executable,
                "-m",
                "corral",
                "proxy",
                "serve",
                "--provider",
                "openai-compatible",
                "--base-url",
                fake.base_url + "/v1",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        ) as proc:
            _drive(proc)
    usage = [json.loads(line) for line in (tmp_path / "proxy-usage.jsonl").read_text().splitlines()]
    assert usage[-1]["client_wire"] == "anthropic" and usage[-1]["target_wire"] == "openai-chat"


def _drive(proc: subprocess.Popen[str]) -> None:
    """Use the announced proxy, then stop it with SIGTERM (killed if it overstays)."""
    try:
        assert proc.stdout is not None
        announced = json.loads(proc.stdout.readline())
        assert announced["token"] == "cli-token"
        assert announced["base_url"].startswith("http://127.0.0.1:")
        url = announced["base_url"]
        assert httpx.get(url + "/health", timeout=10).json() == {"status": "ok"}
        answer = httpx.post(
            url + "/v1/messages",
            json={"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
            headers={"x-api-key": "cli-token"},
            timeout=10,
        )
        assert answer.json()["content"] == [{"type": "text", "text": "via cli"}]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def test_serve_refuses_a_non_loopback_host_and_a_bad_profile(tmp_path: Path) -> None:
    env = dict(os.environ, CORRAL_HOME=str(tmp_path))
    base = [sys.executable, "-m", "corral", "proxy", "serve"]
    remote = subprocess.run(
        [*base, "--provider", "ollama", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert remote.returncode == 2 and "loopback" in remote.stderr
    missing = subprocess.run(
        [*base, "--profile", "nope"], capture_output=True, text=True, env=env, timeout=60
    )
    assert missing.returncode == 2 and "nope" in missing.stderr
    (tmp_path / "providers.json").write_text(
        json.dumps({"profiles": {"c": {"provider": "openai-compatible"}}})
    )
    unusable = subprocess.run(
        [*base, "--profile", "c"], capture_output=True, text=True, env=env, timeout=60
    )
    assert unusable.returncode == 2 and "base_url" in unusable.stderr
    listing = subprocess.run(
        [sys.executable, "-m", "corral", "proxy", "profiles", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert json.loads(listing.stdout) == [
        {
            "name": "c",
            "provider": "openai-compatible",
            "model": None,
            "base_url": None,
            "credentials": [],
        }
    ]
