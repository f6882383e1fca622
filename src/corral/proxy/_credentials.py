"""Credential resolution and rotation: which key to use now, and what to do after a 429.

Resolution is kept off the hot path: an env var is read once, an ``auth_command`` runs with a
bound (30 s) and its output is reused for ``ttl`` seconds. Rotation: a credential that got a 429
or quota error is benched until its ``retry-after`` has passed; ``pick`` returns the first one
not benched, or, when all are, the one that frees up soonest with the seconds to wait.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable

from ..errors import ConfigError
from ._config import Credential

_COMMAND_TIMEOUT = 30.0
_DEFAULT_BENCH = 30.0


class Secret:
    """One resolved credential value (a key or token) and the credential it came from."""

    def __init__(self, index: int, credential: Credential, value: str | None) -> None:
        self.index = index
        self.credential = credential
        self.value = value

    @property
    def label(self) -> str:
        return self.credential.label or f"#{self.index}"


class CredentialPool:
    def __init__(
        self, credentials: list[Credential], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.credentials = credentials or [Credential()]
        self._clock = clock
        self._benched: dict[int, float] = {}
        self._cache: dict[int, tuple[str, float]] = {}
        self._locks = [asyncio.Lock() for _ in self.credentials]

    def pick(self, exclude: set[int] | frozenset[int] = frozenset()) -> tuple[int, float]:
        """(index to use, seconds to wait first)."""
        now = self._clock()
        best, best_wait = -1, float("inf")
        for index in range(len(self.credentials)):
            if index in exclude:
                continue
            wait = max(0.0, self._benched.get(index, 0.0) - now)
            if wait == 0.0:
                return index, 0.0
            if wait < best_wait:
                best, best_wait = index, wait
        return best, best_wait

    def bench(self, index: int, retry_after: float | None) -> None:
        seconds = retry_after if retry_after is not None and retry_after >= 0 else _DEFAULT_BENCH
        self._benched[index] = self._clock() + seconds

    async def secret(self, index: int) -> Secret:
        credential = self.credentials[index]
        return Secret(index, credential, await self._value(index, credential))

    async def _value(self, index: int, credential: Credential) -> str | None:
        if credential.api_key is not None:
            return credential.api_key
        if credential.api_key_env is not None:
            value = os.environ.get(credential.api_key_env)
            if not value:
                raise ConfigError(
                    f"credential {credential.label or index}: ${credential.api_key_env} is not set"
                )
            return value
        if credential.auth_command is None:
            return None
        cached = self._cache.get(index)
        if cached is not None and cached[1] > self._clock():
            return cached[0]
        async with self._locks[index]:
            cached = self._cache.get(index)
            if cached is not None and cached[1] > self._clock():
                return cached[0]
            value = await run_auth_command(credential.auth_command)
            self._cache[index] = (value, self._clock() + credential.ttl)
            return value


async def run_auth_command(command: str, timeout: float = _COMMAND_TIMEOUT) -> str:
    """Run ``command`` in a shell and return its stripped stdout; the process dies on timeout."""
    proc = await asyncio.create_subprocess_shell(
        command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise ConfigError(f"auth command timed out after {timeout:.0f}s") from None
    if proc.returncode != 0:
        raise ConfigError(
            f"auth command exited {proc.returncode}: {err.decode('utf-8', 'replace')[-300:]}"
        )
    value = out.decode("utf-8", "replace").strip()
    if not value:
        raise ConfigError("auth command printed nothing")
    return value
