"""The ``terminal/*`` side of an ACP client: commands run as corral-managed processes.

``terminal/create`` starts ``command args…`` in its own process group, with its working
directory confined to the project root (see :mod:`._acp_fs`), stdin closed, and stdout and
stderr merged into one buffer that keeps at most ``outputByteLimit`` bytes (default 1 MiB): when
output exceeds it, the *oldest* bytes are dropped at a UTF-8 character boundary and ``truncated``
is reported, as the ACP spec asks. ``terminal/kill`` ends the group (SIGTERM, grace, SIGKILL);
``terminal/release`` kills and forgets the terminal; closing the manager releases them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
from typing import Any

from .._process._lifecycle import child_setup
from ..errors import JsonRpcError
from ._acp_fs import INVALID_PARAMS, ProjectFiles

DEFAULT_OUTPUT_LIMIT = 1024 * 1024
_KILL_GRACE = 2.0


class Terminal:
    def __init__(self, proc: asyncio.subprocess.Process, limit: int) -> None:
        self.proc = proc
        self.limit = limit
        self.buffer = bytearray()
        self.truncated = False
        self.reader = asyncio.create_task(self._read(), name="acp-terminal-output")

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self.buffer += chunk
            if len(self.buffer) > self.limit:
                cut = len(self.buffer) - self.limit
                while cut < len(self.buffer) and (self.buffer[cut] & 0xC0) == 0x80:
                    cut += 1  # never start inside a UTF-8 sequence
                del self.buffer[:cut]
                self.truncated = True

    def exit_status(self) -> dict[str, Any] | None:
        code = self.proc.returncode
        if code is None:
            return None
        if code < 0:
            return {"exitCode": None, "signal": signal.Signals(-code).name}
        return {"exitCode": code, "signal": None}

    async def wait(self) -> dict[str, Any]:
        await self.proc.wait()
        with contextlib.suppress(asyncio.CancelledError):
            await self.reader
        status = self.exit_status()
        assert status is not None
        return status

    async def kill(self) -> None:
        if self.proc.returncode is None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, sig)
                try:
                    await asyncio.wait_for(self.proc.wait(), _KILL_GRACE)
                    break
                except TimeoutError:
                    continue
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        if not self.reader.done():
            self.reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.reader


class Terminals:
    """The terminals of one session."""

    def __init__(self, files: ProjectFiles, base_env: dict[str, str] | None = None) -> None:
        self.files = files
        self.base_env = dict(os.environ if base_env is None else base_env)
        self._ids = itertools.count(1)
        self._terms: dict[str, Terminal] = {}

    def _get(self, terminal_id: Any) -> Terminal:
        term = self._terms.get(str(terminal_id))
        if term is None:
            raise JsonRpcError(INVALID_PARAMS, f"unknown terminal: {terminal_id}")
        return term

    async def create(self, params: dict[str, Any]) -> dict[str, Any]:
        command = params.get("command")
        args = params.get("args") or []
        if not isinstance(command, str) or not command:
            raise JsonRpcError(INVALID_PARAMS, "terminal/create needs a command")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise JsonRpcError(INVALID_PARAMS, "args must be a list of strings")
        cwd = self.files.resolve(params.get("cwd") or str(self.files.root))
        env = dict(self.base_env)
        for item in params.get("env") or []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                env[item["name"]] = str(item.get("value", ""))
        limit = params.get("outputByteLimit")
        limit = int(limit) if isinstance(limit, int) and limit >= 0 else DEFAULT_OUTPUT_LIMIT
        try:
            proc = await asyncio.create_subprocess_exec(
                command,
                *args,
                cwd=str(cwd),
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=child_setup,
            )
        except OSError as exc:
            raise JsonRpcError(-32603, f"could not start {command}: {exc}") from exc
        terminal_id = f"term_{next(self._ids)}"
        self._terms[terminal_id] = Terminal(proc, limit)
        return {"terminalId": terminal_id}

    async def output(self, params: dict[str, Any]) -> dict[str, Any]:
        term = self._get(params.get("terminalId"))
        if term.proc.returncode is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await term.reader  # the last bytes are in once the pipe is drained
        reply: dict[str, Any] = {
            "output": term.buffer.decode("utf-8", errors="replace"),
            "truncated": term.truncated,
        }
        status = term.exit_status()
        if status is not None:
            reply["exitStatus"] = status
        return reply

    async def wait_for_exit(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self._get(params.get("terminalId")).wait()

    async def kill(self, params: dict[str, Any]) -> dict[str, Any]:
        await self._get(params.get("terminalId")).kill()
        return {}

    async def release(self, params: dict[str, Any]) -> dict[str, Any]:
        term = self._get(params.get("terminalId"))
        del self._terms[str(params.get("terminalId"))]
        await term.kill()
        return {}

    async def close(self) -> None:
        terms, self._terms = list(self._terms.values()), {}
        for term in terms:
            await term.kill()

    async def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        handler = {
            "terminal/create": self.create,
            "terminal/output": self.output,
            "terminal/wait_for_exit": self.wait_for_exit,
            "terminal/kill": self.kill,
            "terminal/release": self.release,
        }[method]
        return await handler(params)
