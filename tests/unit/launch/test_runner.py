"""``corral launch`` as a process with a stand-in harness: exit codes, signals forwarded, the
proxy cleaned up on every way out (checked by pid), a PTY with window-size changes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from corral.testing import FakeModelServer

HERE = Path(__file__).parent
PROXIED = [
    "claude",
    "custom",
    "-t",
    "openai-chat",
    "-m",
    "fake-model",
    "--with-proxy-if-needed",
    "--json",
]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def fake_env(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text(
        f"#!{sys.executable}\nimport runpy\nrunpy.run_path({str(HERE / 'fake_harness.py')!r}, run_name='__main__')\n"
    )
    exe.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "CORRAL_HOME": str(tmp_path / "home"),
        "CORRAL_AGENTS_DIR": str(tmp_path / "no-agents"),
        "FAKE_HARNESS_REPORT": str(tmp_path / "report.json"),
        "PYTHONUNBUFFERED": "1",
    }
    return env


def start(args: list[str], env: dict[str, str], **kw: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "corral", "launch", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        **kw,
    )


def events(stderr: bytes) -> list[dict[str, Any]]:
    out = []
    for line in stderr.decode().splitlines():
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def report(env: dict[str, str], seconds: float = 30.0) -> dict[str, Any]:
    path = Path(env["FAKE_HARNESS_REPORT"])
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, "the harness never started"
        time.sleep(0.05)
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def proxy_pid(proc: subprocess.Popen[bytes], env: dict[str, str]) -> int:
    """The proxy's pid: the launcher's child that runs the proxy module."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmd = (entry / "cmdline").read_bytes().split(b"\0")
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if b"corral.launch._proxy_child" in cmd and int(stat[1]) == proc.pid:
                return int(entry.name)
        time.sleep(0.05)
    raise AssertionError("no proxy process")


@pytest.mark.timeout(90)
def test_exit_code_passes_through_and_the_proxy_is_stopped(fake_env: dict[str, str]) -> None:
    proc = start(
        [*PROXIED, "--api-base", "http://127.0.0.1:9/v1", "-p", "hi", "--", "--mode", "exit:7"],
        fake_env,
    )
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 7, err.decode()
    got = events(err)
    started = next(e for e in got if e["event"] == "proxy_started")
    assert any(e["event"] == "proxy_stopped" for e in got)
    assert wait_gone(started["pid"])
    seen = report(fake_env)
    assert seen["env"]["ANTHROPIC_BASE_URL"] == started["url"]
    assert seen["argv"][-2:] == ["-p", "hi"]


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    ("sig", "expected"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
)
def test_signals_are_forwarded_and_the_proxy_cleaned_up(
    fake_env: dict[str, str], sig: int, expected: int
) -> None:
    proc = start(
        [*PROXIED, "--api-base", "http://127.0.0.1:9/v1", "-p", "hi", "--", "--mode", "sleep"],
        fake_env,
    )
    harness = report(fake_env)["pid"]
    proxy = proxy_pid(proc, fake_env)
    assert alive(proxy)
    proc.send_signal(sig)
    proc.communicate(timeout=30)
    assert proc.returncode == expected
    assert wait_gone(harness)
    assert wait_gone(proxy)


@pytest.mark.timeout(90)
def test_harness_crash(fake_env: dict[str, str]) -> None:
    proc = start(
        [*PROXIED, "--api-base", "http://127.0.0.1:9/v1", "-p", "hi", "--", "--mode", "crash"],
        fake_env,
    )
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGKILL
    started = next(e for e in events(err) if e["event"] == "proxy_started")
    assert wait_gone(started["pid"])


@pytest.mark.timeout(90)
def test_corral_killed_takes_the_proxy_and_the_harness_with_it(fake_env: dict[str, str]) -> None:
    proc = start(
        [*PROXIED, "--api-base", "http://127.0.0.1:9/v1", "-p", "hi", "--", "--mode", "sleep"],
        fake_env,
    )
    harness = report(fake_env)["pid"]
    proxy = proxy_pid(proc, fake_env)
    proc.kill()
    proc.communicate(timeout=10)
    assert wait_gone(proxy), "the proxy outlived corral"
    assert wait_gone(harness), "the harness outlived corral"


@pytest.mark.timeout(90)
def test_cross_protocol_call_through_the_launched_proxy(fake_env: dict[str, str]) -> None:
    """The stand-in harness speaks Anthropic Messages to the proxy corral started; the
    scripted model behind it speaks Chat Completions."""
    with FakeModelServer() as fake:
        proc = start(
            [*PROXIED, "--api-base", fake.base_url + "/v1", "-p", "hi", "--", "--mode", "call"],
            fake_env,
        )
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
        answer = json.loads(out.decode().strip().splitlines()[-1])
        assert answer["type"] == "message"
        assert [r.wire_api for r in fake.requests.model_calls()] == ["openai-chat"]


@pytest.mark.timeout(60)
def test_interactive_gets_a_pty_and_window_size_changes(fake_env: dict[str, str]) -> None:
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "corral", "launch", "claude", "--", "--mode", "winch"],
        env=fake_env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    buf = b""

    def read_until(token: bytes, seconds: float = 30) -> None:
        nonlocal buf
        import select

        deadline = time.monotonic() + seconds
        while token not in buf:
            assert time.monotonic() < deadline, buf
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    buf += os.read(master, 4096)
                except OSError:
                    break

    read_until(b"ready")
    assert b"ready [30, 100]" in buf
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    os.kill(proc.pid, signal.SIGWINCH)
    read_until(b"resized")
    assert b"resized [40, 120]" in buf
    assert proc.wait(20) == 0
    os.close(master)
    seen = report(fake_env)
    assert seen["tty"] is True
    assert seen["pid"] == proc.pid  # native: the harness has the terminal itself (exec)


# --- the exec fast path (decision 025): no proxy, no --observe, no --json ---


@pytest.mark.timeout(60)
def test_a_native_launch_becomes_the_harness(fake_env: dict[str, str]) -> None:
    proc = start(["claude", "-p", "hi", "--", "--mode", "exit:7"], fake_env)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 7, err.decode()
    seen = report(fake_env)
    assert seen["pid"] == proc.pid  # corral's process became the harness: nothing in between
    assert seen["argv"][-3:] == ["exit:7", "-p", "hi"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_an_exec_launch_reaches_the_harness_itself(
    fake_env: dict[str, str], sig: int
) -> None:
    proc = start(["claude", "-p", "hi", "--", "--mode", "sleep"], fake_env)
    assert report(fake_env)["pid"] == proc.pid
    proc.send_signal(sig)
    proc.communicate(timeout=30)
    assert proc.returncode == -sig  # died of the signal, as the bare harness would


@pytest.mark.timeout(60)
def test_json_keeps_corral_supervising(fake_env: dict[str, str]) -> None:
    proc = start(["claude", "--json", "-p", "hi", "--", "--mode", "sleep"], fake_env)
    harness = report(fake_env)["pid"]
    assert harness != proc.pid
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143
    assert [e["event"] for e in events(err)] == ["harness_starting", "harness_exited"]
    assert wait_gone(harness)


@pytest.mark.timeout(60)
def test_the_exec_harness_gets_default_signal_dispositions(tmp_path: Path) -> None:
    """Python ignores SIGPIPE; an ignored signal would stay ignored across execve."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    out = tmp_path / "status"
    exe.write_text(f"#!/bin/sh\ngrep SigIgn /proc/$$/status > {out}\n")
    exe.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "CORRAL_HOME": str(tmp_path / "home"),
        "CORRAL_AGENTS_DIR": str(tmp_path / "no-agents"),
    }
    proc = start(["claude", "-p", "hi"], env)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()
    ignored = int(out.read_text().split()[1], 16)
    assert not ignored & (1 << (signal.SIGPIPE - 1))
    assert not ignored & (1 << (signal.SIGXFSZ - 1))


@pytest.mark.timeout(60)
def test_an_exec_launch_of_a_missing_binary_is_the_catalog_error(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text("#!/no/such/interpreter\n")
    exe.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "CORRAL_HOME": str(tmp_path / "home"),
        "CORRAL_AGENTS_DIR": str(tmp_path / "no-agents"),
    }
    proc = start(["claude", "-p", "hi"], env)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 76, err.decode()
    assert "[HARNESS_LAUNCH_FAILED]" in err.decode()
