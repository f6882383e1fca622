from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest


def test_serve_prints_url_and_stops_on_sigterm(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    argv = [
        sys.executable,
        "-c",
        "from corral.cli import main; main()",
        "fake-model",
        "serve",
        "--port",
        "0",
        "--scenario",
        "write-file",
        "--log",
        str(log),
    ]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            base_url = proc.stdout.readline().strip()
            assert base_url.startswith("http://127.0.0.1:")
            reply = httpx.post(
                f"{base_url}/v1/chat/completions",
                timeout=10,
                json={
                    "model": "m",
                    "messages": [{"role": "user", "content": "go"}],
                    "tools": [
                        {
                            "type": "function",
                            "function": {
                                "name": "write",
                                "parameters": {
                                    "type": "object",
                                    "properties": {
                                        "path": {"type": "string"},
                                        "content": {"type": "string"},
                                    },
                                },
                            },
                        }
                    ],
                },
            )
            call = reply.json()["choices"][0]["message"]["tool_calls"][0]["function"]
            assert call["name"] == "write"
            assert json.loads(call["arguments"])["content"] == "hi"
            assert httpx.get(f"{base_url}/nowhere", timeout=10).status_code == 404
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=15)
    assert code == 0
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["path"], r["status"]) for r in records] == [
        ("/v1/chat/completions", 200),
        ("/nowhere", 404),
    ]


def test_scenario_listing_and_schema() -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "from corral.cli import main; main()",
            "fake-model",
            "scenarios",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "write-file" in [row["name"] for row in json.loads(run.stdout)]
    schema = subprocess.run(
        [sys.executable, "-c", "from corral.cli import main; main()", "fake-model", "schema"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(schema.stdout)["title"] == "Scenario"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_right_after_the_url_is_a_clean_exit(sig: signal.Signals) -> None:
    argv = [sys.executable, "-c", "from corral.cli import main; main()", "fake-model", "serve"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("http://127.0.0.1:")
        proc.send_signal(sig)
        assert proc.wait(timeout=15) == 0
        assert proc.stderr is not None
        assert proc.stderr.read() == ""
