"""``corral launch`` on the pinned real CLIs: each harness against a scripted provider of another
wire API, through the proxy the launcher starts; exit codes and cleanup (by pid) checked.

The scripted model server is the *provider* (``custom`` with ``--transport`` = its wire);
``--with-proxy-if-needed`` makes corral start the translating proxy, because the harness cannot
speak that wire. Scenario ``write-file``: the harness writes ``hello.txt`` with its own tool.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.agents import agents_root
from corral.testing import FakeModelServer

MODEL = "fake-model"
PROMPT = "Create a file named hello.txt in the current directory containing exactly: hi"
# harness → (args after `--`, timeout)
HARNESS_ARGS: dict[str, tuple[list[str], float]] = {
    "claude": (
        ["--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits"],
        150,
    ),
    "codex": (["--json", "--dangerously-bypass-approvals-and-sandbox"], 150),
    "opencode": (["--format", "json"], 200),
    "gemini": (["--output-format", "stream-json", "--yolo", "--skip-trust"], 180),
    "qwen": (["--output-format", "stream-json", "--yolo"], 180),
}
PAIRS = [
    ("claude", "openai-chat"),
    ("codex", "anthropic"),
    ("gemini", "openai-chat"),
    ("opencode", "google"),
    ("qwen", "anthropic"),
]
_LOGGED = {"openai-chat": "openai-chat", "anthropic": "anthropic", "google": "gemini"}


def api_base(wire: str, fake: FakeModelServer) -> str:
    return fake.base_url + "/v1" if wire.startswith("openai") else fake.base_url


def launch_argv(agent: str, wire: str, fake: FakeModelServer, home: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "corral",
        "launch",
        agent,
        "custom",
        "--transport",
        wire,
        "--api-base",
        api_base(wire, fake),
        "-m",
        MODEL,
        "--with-proxy-if-needed",
        "--home",
        str(home),
        "--json",
        *extra,
    ]


def corral_env(clean_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {
        **clean_env,
        "CORRAL_HOME": str(tmp_path / "corral-home"),
        "CORRAL_AGENTS_DIR": str(agents_root()),
    }


def lifecycle(stderr: str) -> list[dict[str, Any]]:
    out = []
    for line in stderr.splitlines():
        if line.startswith('{"event"'):
            out.append(json.loads(line))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def proxy_and_harness(corral_pid: int, seconds: float = 60) -> tuple[int, int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        proxy = harness = None
        for child in children(corral_pid):
            try:
                cmd = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            if b"corral.launch._proxy_child" in cmd:
                proxy = child
            else:
                harness = child
        if proxy and harness:
            return proxy, harness
        time.sleep(0.05)
    raise AssertionError("corral launch never had both a proxy and a harness child")


@pytest.mark.parametrize(
    ("agent", "upstream"),
    [pytest.param(a, u, marks=pytest.mark.realcli(a), id=f"{a}->{u}") for a, u in PAIRS],
)
@pytest.mark.timeout(260)
def test_launch_one_shot_through_the_proxy(
    agent: str,
    upstream: str,
    fake_model: FakeModelServer,
    isolated_home: Path,
    git_repo: Path,
    agent_bin: Callable[[str], Path],
    run_agent: Callable[..., Any],
    clean_env: dict[str, str],
    tmp_path: Path,
) -> None:
    agent_bin(agent)
    extra, timeout = HARNESS_ARGS[agent]
    argv = launch_argv(agent, upstream, fake_model, isolated_home, "-p", PROMPT, "--", *extra)
    env = corral_env(clean_env, tmp_path)
    run = run_agent(argv, env=env, cwd=git_repo, timeout=timeout, label=f"launch {agent}")
    assert run.returncode == 0, run.describe()
    assert (git_repo / "hello.txt").read_text().strip() == "hi", run.describe()
    calls = fake_model.requests.model_calls()
    assert {r.wire_api for r in calls} == {_LOGGED[upstream]}, [r.wire_api for r in calls]
    assert fake_model.requests.with_tool_result()
    events = lifecycle(run.stderr)
    started = next(e for e in events if e["event"] == "proxy_started")
    assert any(e["event"] == "proxy_stopped" for e in events)
    assert gone(started["pid"]), "the proxy outlived the launch"
    usage = Path(env["CORRAL_HOME"]) / "proxy-usage.jsonl"
    records = [json.loads(line) for line in usage.read_text().splitlines()]
    assert records and all(r["target_wire"] == upstream for r in records)


SLOW = "slow-text"


@pytest.mark.realcli("claude")
@pytest.mark.timeout(200)
@pytest.mark.parametrize(
    ("how", "expected"),
    [("SIGINT", 130), ("SIGTERM", 143), ("crash", 128 + signal.SIGKILL)],
)
def test_launch_cleanup_after_signal_or_crash(
    how: str,
    expected: int,
    isolated_home: Path,
    git_repo: Path,
    agent_bin: Callable[[str], Path],
    clean_env: dict[str, str],
    tmp_path: Path,
) -> None:
    """Mid-turn (the scripted model streams slowly): SIGINT / SIGTERM to corral, or the harness
    killed outright; corral's exit status, and neither proxy nor harness left (by pid)."""
    agent_bin("claude")
    with FakeModelServer(SLOW) as fake:
        argv = launch_argv("claude", "openai-chat", fake, isolated_home, "-p", "hi")
        argv += ["--", "--output-format", "stream-json", "--verbose"]
        proc = subprocess.Popen(
            argv,
            env=corral_env(clean_env, tmp_path),
            cwd=git_repo,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            proxy, harness = proxy_and_harness(proc.pid)
            deadline = time.monotonic() + 90
            while not fake.requests.model_calls():
                assert time.monotonic() < deadline, "the harness never called the model"
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.1)
            time.sleep(1.0)
            assert proc.poll() is None, "the turn ended before the signal"
            if how == "crash":
                os.kill(harness, signal.SIGKILL)
            else:
                proc.send_signal(getattr(signal, how))
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    assert proc.returncode == expected, err.decode()[-2000:]
    assert gone(proxy), "proxy left behind"
    assert gone(harness), "harness left behind"


def _seed_claude_config(home: Path, repo: Path) -> None:
    """Claude Code's first-run dialogs answered: onboarding done, the folder trusted."""
    config = home / ".claude"
    config.mkdir(parents=True, exist_ok=True)
    state = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "projects": {str(repo): {"hasTrustDialogAccepted": True, "allowedTools": []}},
    }
    (config / ".claude.json").write_text(json.dumps(state))


@pytest.mark.realcli("claude")
@pytest.mark.timeout(240)
def test_launch_claude_interactive_under_a_pty(
    fake_model: FakeModelServer,
    isolated_home: Path,
    git_repo: Path,
    agent_bin: Callable[[str], Path],
    clean_env: dict[str, str],
    tmp_path: Path,
) -> None:
    """Claude Code's TUI through ``corral launch`` (no ``-p``), in a terminal, against an
    OpenAI Chat provider through the proxy: a typed prompt makes it write hello.txt."""
    import fcntl
    import pty
    import struct
    import termios

    agent_bin("claude")
    _seed_claude_config(isolated_home, git_repo)
    argv = launch_argv("claude", "openai-chat", fake_model, isolated_home)
    argv += ["--", "--permission-mode", "acceptEdits"]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**corral_env(clean_env, tmp_path), "TERM": "xterm-256color"}
    proc = subprocess.Popen(
        argv, env=env, cwd=git_repo, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    screen = b""

    def pump(until: Callable[[], bool], seconds: float) -> bool:
        nonlocal screen
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if until():
                return True
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    screen += os.read(master, 65536)
                except OSError:  # EIO: every process on the terminal has closed it
                    time.sleep(0.2)
        return until()

    try:
        proxy, harness = proxy_and_harness(proc.pid)
        # the TUI is up once it has drawn its input box and stopped drawing
        assert pump(lambda: len(screen) > 200 and b"\x1b[" in screen, 90), screen[-2000:]
        pump(lambda: False, 3)
        for ch in PROMPT:
            os.write(master, ch.encode())
            time.sleep(0.01)
        pump(lambda: False, 1)
        os.write(master, b"\r")
        hello = git_repo / "hello.txt"
        assert pump(hello.exists, 120), screen[-3000:].decode(errors="replace")
        assert pump(lambda: bool(fake_model.requests.with_tool_result()), 60)
        assert hello.read_text().strip() == "hi"
        # leave the way a user does: Ctrl-C twice through the terminal
        pump(lambda: False, 2)
        os.write(master, b"\x03")
        time.sleep(0.3)
        os.write(master, b"\x03")
        assert pump(lambda: proc.poll() is not None, 30), screen[-2000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        os.close(master)
    assert proc.returncode == 0, screen[-2000:]
    assert {r.wire_api for r in fake_model.requests.model_calls()} == {"openai-chat"}
    assert gone(proxy) and gone(harness)


@pytest.mark.realcli("claude")
@pytest.mark.timeout(200)
def test_launch_observe_records_usage_without_changing_the_output(
    fake_model: FakeModelServer,
    isolated_home: Path,
    git_repo: Path,
    agent_bin: Callable[[str], Path],
    run_agent: Callable[..., Any],
    clean_env: dict[str, str],
    tmp_path: Path,
) -> None:
    """``--observe``: the user still gets Claude Code's own stream-json on stdout, byte for byte
    what it printed (every line its JSON), and corral writes a session record with the usage."""
    agent_bin("claude")
    extra, timeout = HARNESS_ARGS["claude"]
    argv = launch_argv(
        "claude", "openai-chat", fake_model, isolated_home, "--observe", "-p", PROMPT, "--", *extra
    )
    run = run_agent(argv, env=corral_env(clean_env, tmp_path), cwd=git_repo, timeout=timeout)
    assert run.returncode == 0, run.describe()
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert lines[0]["type"] == "system" and lines[-1]["type"] == "result"
    observed = next(e for e in lifecycle(run.stderr) if e["event"] == "observed")
    # Claude Code counts input tokens from the stream's message_start, where a Chat upstream's
    # count is not known yet (the proxy has it only at the end): output tokens are what it sees.
    assert observed["outputTokens"] > 0, (observed, lines[-1])
    assert observed["outputTokens"] == lines[-1]["usage"]["output_tokens"]
    assert observed["exitCode"] == 0
    record = Path(observed["record"]).read_text().splitlines()
    assert json.loads(record[-1])["type"] == "summary"
    assert len(record) == observed["events"] + 1
