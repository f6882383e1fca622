"""An agent process started before the driver is imported: the early spawn of ``corral run``.

A one-shot ``corral run`` spends most of its own time importing the event loop, the event model,
the adapter and its protocol parser: code that only reads the agent's output (issue 20,
decision 044). The agent needs none of it to boot, so the lean run computes the agent's launch
with light code (``corral.adapters._early``), starts it here, and imports the driver while the
agent boots on another core. The driver then asks its transport factory for exactly that launch
and gets this process (:class:`corral._process._adopt.Handover`); any other launch gets a fresh
process and this one is discarded.

What the process gets is what :class:`~corral._process.ProcessTransport` gives every agent: three
pipes (stdin stays a pipe; the agent waits on it until the driver writes), its own process group
(``start_new_session``), and the parent-death signal
(:func:`~corral._process._lifecycle.child_setup`) from the thread that will run the event loop.
It is started by :func:`corral._process._spawn.spawn` (``fork`` and ``exec`` without importing
``subprocess``, decision 056), the same start ``subprocess.Popen`` makes. Until a driver claims
it, :func:`discard` (also an ``atexit`` hook, so every exit path of the interpreter runs it)
SIGKILLs its group and reaps it.

This module imports neither asyncio, ``subprocess`` nor anything of corral above
``_process._lifecycle``.
"""

from __future__ import annotations

import atexit
import os

from ._lifecycle import child_setup
from ._spawn import SIGKILL, Child, spawn

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

_unclaimed: list[EarlyProcess] = []


class EarlyProcess:
    """One agent process started with its launch, waiting to be claimed by its driver."""

    def __init__(
        self,
        child: Child,
        argv: tuple[str, ...],
        env: dict[str, str],
        cwd: str,
        *,
        prompted: bool = False,
    ) -> None:
        self.child = child
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.prompted = prompted
        """The prompt is in its argv (a one-process-per-prompt driver): it is acting already."""
        self.claimed = False

    @property
    def pid(self) -> int:
        return self.child.pid

    def matches(self, argv: Sequence[str], env: Mapping[str, str] | None, cwd: str | None) -> bool:
        """Whether a driver asking for ``argv``/``env``/``cwd`` would start this very process."""
        return tuple(argv) == self.argv and dict(env or {}) == self.env and cwd == self.cwd

    def claim(self) -> Child:
        """The process, now the driver's to end (once only)."""
        if self.claimed:
            raise RuntimeError("the early process was claimed already")
        self.claimed = True
        _forget(self)
        return self.child

    def discard(self) -> None:
        """SIGKILL the process group of an unclaimed process and reap it. Idempotent; a no-op
        once claimed (the driver's transport ends it then)."""
        if self.claimed:
            return
        self.claimed = True
        _forget(self)
        import contextlib  # after the spawn: not loaded before it (decision 057)

        child = self.child
        if child.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                child.kill()
        with contextlib.suppress(TimeoutError):
            child.wait(5.0)  # SIGKILL cannot be refused; the bound is for a stuck kernel
        for pipe in (child.stdin, child.stdout, child.stderr):
            with contextlib.suppress(OSError):
                pipe.close()


def _forget(process: EarlyProcess) -> None:
    if process in _unclaimed:
        _unclaimed.remove(process)


def spawn_early(
    argv: Sequence[str], env: Mapping[str, str], cwd: str, *, prompted: bool = False
) -> EarlyProcess | None:
    """Start ``argv`` as :class:`~corral._process.ProcessTransport` would; ``None`` when it cannot
    be started (a missing binary, say): the driver's own spawn then fails with today's error."""
    try:
        child = spawn(argv, env, cwd, setup=child_setup)
    except (OSError, ValueError):
        return None
    process = EarlyProcess(child, tuple(argv), dict(env), cwd, prompted=prompted)
    _unclaimed.append(process)
    return process


def discard_all() -> None:
    """Discard every unclaimed early process (the ``atexit`` hook)."""
    for process in list(_unclaimed):
        process.discard()


atexit.register(discard_all)
