"""The early spawn (``_process/_early.py``) and its hand-over to the event loop (``_adopt.py``)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from corral._process import ProcessTransport
from corral._process._adopt import Handover, hand_over
from corral._process._early import EarlyProcess, spawn_early
from corral._process._lifecycle import parent_death_supported
from corral._process._transport import Tap
from corral.errors import SpawnError

ECHO = textwrap.dedent(
    """
    import sys
    # Output before anyone reads it: more than a pipe holds, so the child blocks until adopted.
    for i in range(3000):
        sys.stdout.write(f"early {i:05d} " + "x" * 100 + "\\n")
    sys.stdout.flush()
    sys.stderr.write("to stderr\\n")
    sys.stderr.flush()
    for line in sys.stdin:
        sys.stdout.write("echo " + line)
        sys.stdout.flush()
    sys.exit(7)
    """
)


def _early(tmp_path: Path, code: str = ECHO) -> EarlyProcess:
    early = spawn_early([sys.executable, "-c", code], dict(os.environ), str(tmp_path))
    assert early is not None
    return early


def _gone(pid: int, bound: float = 10.0) -> bool:
    """Whether ``pid`` is gone (or a zombie) within ``bound`` seconds."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in (b"Z", b"X"):
            return True
        time.sleep(0.05)
    return False


async def test_the_handed_over_pipes_deliver_every_byte(tmp_path: Path) -> None:
    early = _early(tmp_path)
    seen: list[tuple[str, bytes]] = []
    handover = Handover(early, ProcessTransport)
    transport = handover(
        early.argv, env=early.env, cwd=early.cwd, tap=lambda d, b: seen.append((d, b))
    )
    assert handover.adopted and early.claimed
    await transport.start()
    assert transport.pid == early.pid
    await transport.write_line(b"one")
    await transport.write_line(b"two")
    await transport.close_stdin()
    lines = [line async for line in transport.lines()]
    assert lines == [
        *(f"early {i:05d} ".encode() + b"x" * 100 for i in range(3000)),
        b"echo one",
        b"echo two",
    ]
    assert await transport.wait(10) == 7
    assert transport.returncode == 7
    assert "to stderr" in transport.stderr_tail
    assert ("in", b"one") in seen and ("exit", b"7") in seen


async def test_an_early_process_that_exited_is_adopted_with_its_output_and_code(
    tmp_path: Path,
) -> None:
    early = _early(tmp_path, "print('bye'); raise SystemExit(3)")
    early.child.wait(10)  # reaped before the hand-over
    transport = Handover(early, ProcessTransport)(early.argv, env=early.env, cwd=early.cwd)
    await transport.start()
    assert [line async for line in transport.lines()] == [b"bye"]
    assert await transport.wait(10) == 3


async def test_kill_ends_an_adopted_process_group(tmp_path: Path) -> None:
    early = _early(tmp_path, "import time; time.sleep(60)")
    transport = Handover(early, ProcessTransport)(early.argv, env=early.env, cwd=early.cwd)
    await transport.start()
    assert transport.returncode is None
    assert await transport.kill(grace=5) == -signal.SIGTERM
    assert transport.killed_by_us


async def test_another_launch_gets_the_drivers_own_factory_and_the_early_one_dies(
    tmp_path: Path,
) -> None:
    early = _early(tmp_path, "import time; time.sleep(60)")
    asked: list[list[str]] = []

    def factory(
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        tap: Tap | None = None,
    ) -> ProcessTransport:
        asked.append(list(argv))
        return ProcessTransport(argv, env=env, cwd=cwd, tap=tap)

    handover = Handover(early, factory)
    other = [*early.argv[:-1], "print('fresh')"]
    transport = handover(other, env=early.env, cwd=early.cwd)
    assert asked == [other] and not handover.adopted
    assert early.child.returncode is not None  # killed and reaped
    await transport.start()
    assert [line async for line in transport.lines()] == [b"fresh"]
    await transport.wait(10)
    # The same launch a second time (a restart) is the driver's too: the early one went once.
    again = handover(list(early.argv), env=early.env, cwd=early.cwd)
    assert len(asked) == 2 and isinstance(again, ProcessTransport)


def test_an_early_process_running_its_prompt_is_never_started_twice(tmp_path: Path) -> None:
    early = spawn_early(
        [sys.executable, "-c", "import time; time.sleep(60)", "--prompt=hi"],
        dict(os.environ),
        str(tmp_path),
        prompted=True,
    )
    assert early is not None
    asked: list[object] = []
    handover = Handover(early, lambda *a, **k: asked.append(a))  # type: ignore[arg-type,return-value]
    with pytest.raises(SpawnError, match="not run a second time"):
        handover([*early.argv[:-1], "--prompt=other"], env=early.env, cwd=early.cwd)
    assert asked == [] and early.child.returncode is not None


def test_an_env_or_cwd_that_differs_is_not_a_match(tmp_path: Path) -> None:
    early = _early(tmp_path, "import time; time.sleep(60)")
    try:
        assert early.matches(list(early.argv), dict(early.env), early.cwd)
        assert not early.matches(list(early.argv), {**early.env, "X_EARLY": "1"}, early.cwd)
        assert not early.matches(list(early.argv), early.env, str(tmp_path / "elsewhere"))
    finally:
        early.discard()


def test_a_missing_binary_is_no_early_process(tmp_path: Path) -> None:
    assert spawn_early([str(tmp_path / "no-such-agent")], dict(os.environ), str(tmp_path)) is None
    assert spawn_early([sys.executable], dict(os.environ), str(tmp_path / "no-dir")) is None


def test_discard_kills_the_group_and_is_idempotent(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print(child.pid, flush=True)
        time.sleep(60)
        """
    )
    early = _early(tmp_path, code)
    assert early.child.stdout is not None
    grandchild = int(early.child.stdout.readline())
    early.discard()
    early.discard()
    assert early.child.returncode == -signal.SIGKILL
    assert _gone(grandchild)


def test_a_driver_without_a_transport_factory_gets_nothing(tmp_path: Path) -> None:
    early = _early(tmp_path, "import time; time.sleep(60)")
    assert hand_over(object(), early) is None
    assert early.child.returncode is not None


@pytest.mark.skipif(not parent_death_supported(), reason="PR_SET_PDEATHSIG is Linux-only")
def test_the_early_process_dies_with_corral(tmp_path: Path) -> None:
    # A corral that is SIGKILLed runs no atexit hook: the parent-death signal ends the agent.
    code = textwrap.dedent(
        """
        import os, signal, sys
        from corral._process._early import spawn_early
        early = spawn_early([sys.executable, "-c", "import time; time.sleep(60)"], dict(os.environ), ".")
        print(early.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert proc.returncode == -signal.SIGKILL
    assert _gone(int(proc.stdout))


def test_an_unclaimed_early_process_dies_at_exit(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import os, sys
        from corral._process._early import spawn_early
        early = spawn_early([sys.executable, "-c", "import time; time.sleep(60)"], dict(os.environ), ".")
        print(early.pid, flush=True)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert _gone(int(proc.stdout))


def test_the_light_modules_import_no_event_loop() -> None:
    code = (
        "import sys; import corral._process._early, corral.adapters._early, "
        "corral.adapters._claude_launch, corral.adapters._qwen_launch, corral.adapters._pi_launch, "
        "corral.adapters._acp_argv, corral.cli._run_early; "
        "heavy = {'asyncio', 'corral.events', 'corral.adapters.base', "
        "'corral.protocols.claude_stream_json'} & set(sys.modules); print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_asyncio_sees_the_adopted_exit_without_a_pidfd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(os, "pidfd_open", raising=False)  # the thread that waits instead
    early = _early(tmp_path, "raise SystemExit(5)")

    async def run() -> int:
        transport = Handover(early, ProcessTransport)(early.argv, env=early.env, cwd=early.cwd)
        await transport.start()
        return await transport.wait(10)

    assert asyncio.run(run()) == 5
