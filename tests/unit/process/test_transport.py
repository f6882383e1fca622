"""ProcessTransport: framing, the line limit, the tap, stderr tail, process-group kill."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from corral._process import OverlongLine, ProcessTransport
from corral.errors import ProcessError, SpawnError


def child(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


async def collect(t: ProcessTransport) -> list[bytes | OverlongLine]:
    return [line async for line in t.lines()]


@pytest.fixture
async def cleanup() -> AsyncIterator[list[ProcessTransport]]:
    started: list[ProcessTransport] = []
    yield started
    for t in started:
        await t.kill(grace=1)


async def test_frames_on_lf_only_and_keeps_unterminated_tail(
    cleanup: list[ProcessTransport],
) -> None:
    t = ProcessTransport(
        child(
            r"""
            import sys
            sys.stdout.buffer.write("a\nb\r\nc\u2028d\nlast".encode())
            """
        )
    )
    cleanup.append(t)
    await t.start()
    lines = await collect(t)
    assert lines == [b"a", b"b\r", "c\u2028d".encode(), b"last"]
    assert await t.wait(5) == 0


async def test_lines_split_across_reads_are_joined(cleanup: list[ProcessTransport]) -> None:
    t = ProcessTransport(
        child(
            """
            import sys, time
            for part in (b'{"a":', b'1}\\n{"b"', b':2}\\n'):
                sys.stdout.buffer.write(part); sys.stdout.flush(); time.sleep(0.05)
            """
        )
    )
    cleanup.append(t)
    await t.start()
    assert await collect(t) == [b'{"a":1}', b'{"b":2}']


@pytest.mark.parametrize("terminated", [True, False])
async def test_overlong_line_is_reported_never_cut(
    terminated: bool, cleanup: list[ProcessTransport]
) -> None:
    end = "\\n" if terminated else ""
    t = ProcessTransport(
        child(
            f"""
            import sys
            sys.stdout.write("ok1\\n" + "x" * 300000 + "{end}")
            if {terminated}:
                sys.stdout.write("ok2\\n")
            """
        ),
        max_line=1000,
    )
    cleanup.append(t)
    await t.start()
    lines = await collect(t)
    assert lines[0] == b"ok1"
    assert isinstance(lines[1], OverlongLine)
    assert lines[1].size == 300000
    assert lines[1].head.startswith(b"xxx")
    assert lines[2:] == ([b"ok2"] if terminated else [])


async def test_tap_sees_both_directions(cleanup: list[ProcessTransport]) -> None:
    seen: list[tuple[str, bytes]] = []
    t = ProcessTransport(
        child(
            """
            import sys
            for line in sys.stdin:
                print("echo:" + line.strip(), flush=True)
            """
        ),
        tap=lambda d, line: seen.append((d, line)),
    )
    cleanup.append(t)
    await t.start()
    await t.write_line(b"one")
    await t.write_line(b"two")
    await t.close_stdin()
    assert await collect(t) == [b"echo:one", b"echo:two"]
    assert seen == [("in", b"one"), ("in", b"two"), ("out", b"echo:one"), ("out", b"echo:two")]
    await t.wait(5)
    await t.kill()
    assert seen[4:] == [("exit", b"0")]  # reaped once, reported once


async def test_a_raising_tap_does_not_break_the_stream(cleanup: list[ProcessTransport]) -> None:
    def tap(direction: str, line: bytes) -> None:
        raise RuntimeError("boom")

    t = ProcessTransport(child("print('x')"), tap=tap)
    cleanup.append(t)
    await t.start()
    assert await collect(t) == [b"x"]


async def test_stderr_tail_is_bounded_and_keeps_the_end(cleanup: list[ProcessTransport]) -> None:
    t = ProcessTransport(
        child(
            """
            import sys
            sys.stderr.write("noise " * 50000)
            sys.stderr.write("THE END")
            sys.exit(3)
            """
        )
    )
    cleanup.append(t)
    await t.start()
    assert await collect(t) == []
    assert await t.wait(5) == 3
    tail = t.stderr_tail
    assert tail.endswith("THE END")
    assert len(tail) <= 16 * 1024


async def test_kill_escalates_to_sigkill_and_takes_the_group(
    tmp_path: Path, cleanup: list[ProcessTransport]
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    t = ProcessTransport(
        child(
            f"""
            import signal, subprocess, sys, time
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
            open({str(pidfile)!r}, "w").write(str(g.pid))
            print("ready", flush=True)
            time.sleep(60)
            """
        )
    )
    cleanup.append(t)
    await t.start()
    lines = t.lines()
    assert await anext(lines) == b"ready"
    code = await t.kill(grace=0.5)
    assert code == -9
    assert t.killed_by_us
    # The grandchild was in the same process group: it dies too (a zombie until its reaper runs).
    assert await _gone(int(pidfile.read_text()))


async def _gone(pid: int, timeout: float = 5.0) -> bool:
    """Poll /proc until ``pid`` is dead or a zombie (delivery of SIGKILL is not instantaneous)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:  # noqa: ASYNC230 - a /proc read never blocks
                state = f.read().split()[2]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        await asyncio.sleep(0.02)
    return False


async def test_kill_uses_sigterm_first(cleanup: list[ProcessTransport]) -> None:
    t = ProcessTransport(child("import time; print('ready', flush=True); time.sleep(60)"))
    cleanup.append(t)
    await t.start()
    assert await anext(t.lines()) == b"ready"
    assert await t.kill(grace=5) == -15


async def test_write_after_exit_raises_process_error(cleanup: list[ProcessTransport]) -> None:
    t = ProcessTransport(child("import sys; sys.stderr.write('bye'); sys.exit(2)"))
    cleanup.append(t)
    await t.start()
    await t.wait(5)
    with pytest.raises(ProcessError):  # noqa: PT012 - the pipe may take some bytes before it breaks
        for _ in range(50):
            await t.write_line(b"x" * 65536)


async def test_missing_binary_is_a_spawn_error(cleanup: list[ProcessTransport]) -> None:
    t = ProcessTransport(["/nonexistent/agent-cli"])
    with pytest.raises(SpawnError) as info:
        await t.start()
    assert info.value.argv == ["/nonexistent/agent-cli"]
