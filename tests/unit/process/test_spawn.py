"""The early spawn's own ``fork`` and ``exec`` (``_process/_spawn.py``): what ``subprocess.Popen``
would have given the child, and every way the start can fail."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from corral._process._lifecycle import child_setup
from corral._process._spawn import Child, find_executable, spawn

# What the kernel says of a process: the signals it ignores and blocks, its session and group
# leadership, and the descriptors it holds (listed by the shell, whose own are the same each way).
STATE = (
    'grep -E "^Sig(Ign|Blk)" /proc/self/status; '
    'echo "leader=$(( $(cut -d" " -f6 /proc/self/stat) == $$ ))"; '
    "ls /proc/self/fd | sort -n | tr '\\n' ' '"
)


def _output(child: Child) -> bytes:
    try:
        out = child.stdout.read()
        child.wait(10)
    finally:
        child.close()
    return out


def test_the_child_starts_as_subprocess_would_start_it(tmp_path: Path) -> None:
    leaked = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(leaked, True)  # ``close_fds``: not passed on either way
    try:
        argv = ["/bin/sh", "-c", STATE]
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"PATH": "/usr/bin:/bin"},
            cwd=tmp_path,
            start_new_session=True,
            preexec_fn=child_setup,
        )
        expected, _ = popen.communicate(timeout=10)
        ours = _output(spawn(argv, {"PATH": "/usr/bin:/bin"}, str(tmp_path), setup=child_setup))
    finally:
        os.close(leaked)
    assert b"leader=1" in ours
    assert b"SigIgn" in ours
    assert ours == expected


def test_sigpipe_and_sigxfsz_are_not_ignored_in_the_child(tmp_path: Path) -> None:
    assert signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN  # Python's own setting
    child = spawn(["grep", "^SigIgn", "/proc/self/status"], dict(os.environ), str(tmp_path))
    ignored = int(_output(child).split()[1], 16)
    assert not ignored & (1 << (signal.SIGPIPE - 1))
    assert not ignored & (1 << (signal.SIGXFSZ - 1))


def test_the_pipes_env_and_cwd_are_the_childs(tmp_path: Path) -> None:
    code = (
        "import os, sys; print(os.getcwd(), os.environ['X_SPAWN'], sys.stdin.read()); sys.exit(4)"
    )
    child = spawn([sys.executable, "-c", code], {"X_SPAWN": "yes"}, str(tmp_path))
    child.stdin.write(b"from stdin")
    child.stdin.flush()
    child.stdin.close()
    assert _output(child) == f"{tmp_path} yes from stdin\n".encode()
    assert child.returncode == 4


def test_the_executable_is_found_on_the_path_the_child_gets(tmp_path: Path) -> None:
    tool = tmp_path / "corral-spawn-tool"
    tool.write_text("#!/bin/sh\necho found\n")
    tool.chmod(0o755)
    (tmp_path / "sub").mkdir()
    env = {"PATH": f"{tmp_path / 'sub'}:{tmp_path}"}
    assert find_executable("corral-spawn-tool", env) == str(tool)
    assert _output(spawn(["corral-spawn-tool"], env, str(tmp_path))) == b"found\n"
    with pytest.raises(FileNotFoundError):
        find_executable("corral-spawn-tool", {"PATH": str(tmp_path / "sub")})


def test_each_failure_to_start_is_the_oserror_it_was(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as missing:
        spawn([str(tmp_path / "nothing")], {}, str(tmp_path))
    assert missing.value.filename == str(tmp_path / "nothing")
    plain = tmp_path / "plain.txt"
    plain.write_text("not a program\n")
    plain.chmod(0o644)
    with pytest.raises(PermissionError):
        spawn([str(plain)], {}, str(tmp_path))
    with pytest.raises(FileNotFoundError) as no_dir:
        spawn(["/bin/true"], {}, str(tmp_path / "no-dir"))
    assert no_dir.value.filename == str(tmp_path / "no-dir")
    with pytest.raises(ValueError):
        spawn([], {}, str(tmp_path))


def test_no_descriptor_is_left_open_by_a_failed_start(tmp_path: Path) -> None:
    before = sorted(os.listdir("/proc/self/fd"))
    for _ in range(3):
        with pytest.raises(OSError):
            spawn(["/bin/true"], {}, str(tmp_path / "no-dir"))
    assert sorted(os.listdir("/proc/self/fd")) == before


def test_wait_is_bounded_and_kill_ends_the_child(tmp_path: Path) -> None:
    child = spawn(["/bin/sleep", "60"], {}, str(tmp_path))
    assert child.poll() is None
    with pytest.raises(TimeoutError):
        child.wait(0.05)
    child.kill()
    assert child.wait(10) == -signal.SIGKILL
    assert child.poll() == -signal.SIGKILL
    child.kill()  # a no-op once reaped: the pid may be someone else's by now
    child.close()
    child.close()


def test_a_process_without_a_standard_descriptor_refuses_to_spawn(tmp_path: Path) -> None:
    # A pipe would take descriptor 0 and the moves onto 0, 1, 2 would overwrite it: refused, and
    # ``corral run`` then starts the agent on its ordinary path.
    code = textwrap.dedent(
        f"""
        import os
        os.close(0)
        from corral._process._spawn import spawn
        try:
            spawn(["/bin/true"], {{}}, {str(tmp_path)!r})
        except OSError as exc:
            print("refused", exc.errno)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "refused 9"


def test_without_fork_the_start_is_refused_for_the_ordinary_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Windows has no fork: ``spawn_early`` turns the OSError into "no early process".
    monkeypatch.delattr(os, "fork")
    with pytest.raises(OSError, match="no fork"):
        spawn(["/bin/true"], {}, str(tmp_path))
    from corral._process._early import spawn_early

    assert spawn_early(["/bin/true"], {}, str(tmp_path)) is None
