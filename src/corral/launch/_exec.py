"""The fast path of step 7: corral's process becomes the harness (``execve``), decision 025.

Once the plan is resolved, a launch that needs nothing of corral while the harness runs — no
proxy to stop afterwards, no ``--observe`` copy of its output, no ``--json`` lifecycle events
after it exits — has corral replace itself with the harness instead of supervising a child.
The harness then is exactly what running it bare would be: the same pid (a signal sent to
"corral" reaches the harness itself; Ctrl-C at a terminal reaches its foreground group), the
terminal itself rather than a PTY copied through corral, and its exit status is the status of
the process (a shell shows 128 + N when signal N killed it). Nothing of corral stays in memory.

Python sets SIGPIPE (and SIGXFSZ) to "ignore" at start-up, and an ignored signal stays ignored
across ``execve``: both are restored to their default first, as ``subprocess`` does for a child
(``restore_signals``). Python's own file descriptors are close-on-exec; 0, 1 and 2 stay.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

from ._env import HarnessLaunch
from ._errors import LaunchError

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from typing import NoReturn

_RESTORED = ("SIGPIPE", "SIGXFZ", "SIGXFSZ")


def can_exec() -> bool:
    """Whether this platform replaces a process image (POSIX ``execve``)."""
    return os.name == "posix" and hasattr(os, "execvpe")


def harness_env(launch: HarnessLaunch, base_env: Mapping[str, str]) -> dict[str, str]:
    """The harness's environment: the caller's, less ``unset``, plus (winning) ``env``."""
    return {k: v for k, v in base_env.items() if k not in launch.unset} | launch.env


def exec_harness(
    launch: HarnessLaunch, base_env: Mapping[str, str], *, cwd: Path | None = None
) -> NoReturn:
    """Replace this process with the harness; returns only by raising ``HARNESS_LAUNCH_FAILED``
    (the binary is missing or not executable, the directory is gone)."""
    env = harness_env(launch, base_env)
    argv = [launch.command, *launch.args]
    sys.stdout.flush()
    sys.stderr.flush()
    previous = {}
    for name in _RESTORED:
        sig = getattr(signal, name, None)
        if sig is not None:
            previous[sig] = signal.signal(sig, signal.SIG_DFL)
    here = os.getcwd() if cwd is not None else None
    try:
        if cwd is not None:
            os.chdir(cwd)
        os.execvpe(launch.command, argv, env)
    except OSError as exc:
        for sig, handler in previous.items():
            if handler is not None:
                signal.signal(sig, handler)
        if here is not None:
            os.chdir(here)
        raise LaunchError("HARNESS_LAUNCH_FAILED", harness=launch.command, error=str(exc)) from exc
