"""The live-session emitter ``corral wire`` installs: one hook call in, one v1 board event out.

Run as a script by an agent's hook (stdlib only, so it starts fast and needs no corral import)::

    python3 emit.py claude --url http://127.0.0.1:8765 --token-file ~/.config/corral/token

It reads the hook's JSON from stdin, classifies it into a seed-002 v1 kind, and POSTs it with the
``BOARD_AGENT_ID`` / ``BOARD_TASK`` environment forwarded (``BOARD_PORT`` overrides the URL's
port, ``BOARD_URL`` the whole URL). It never blocks or slows the agent: the hook process spools
the event and forks, the parent exits at once with status 0 and no output, and the detached child
posts the session's spooled events, each once with a 2 s timeout and no retry; a board that is
down costs the agent nothing.

``emit.py watch --pid P --session S --name opencode`` (started detached by the opencode plugin)
posts the session's ``end`` once process ``P`` is gone: opencode tells its plugins nothing when
it exits.

Agents: ``claude`` and ``qwen`` (PreToolUse / PostToolUse / PostToolUseFailure / Stop /
SessionStart / SessionEnd / SubagentStop), ``gemini`` (BeforeTool / AfterTool / AfterAgent /
SessionStart / SessionEnd) and ``codex`` (its Claude-style hooks.json events).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import sys
import time
from typing import Any

TIMEOUT = 2.0
"""Seconds the detached child waits for the board, once (the agent never waits for it)."""
SESSION_WAIT = 2.0
"""Longest a session's first poster waits for the session's start to be spooled (see
:func:`_await_start`)."""
DETACH_WAIT = 0.2
"""Longest the hook waits for its child to detach (it takes well under a millisecond)."""

_TEST_CMD = re.compile(
    r"^\s*(pytest|python3? -m (pytest|unittest)|npm (run )?test|yarn test|pnpm test|go test|"
    r"cargo test|make test|tox|nox|jest|vitest|mvn test|gradle test)\b"
)
_CHECK_CMD = re.compile(r"^\s*(ruff|mypy|pyright|eslint|tsc|flake8|black --check|cargo clippy)\b")
_GIT_CMD = re.compile(r"^\s*(git|gh)\s")

TOOL_KINDS: dict[str, str] = {
    # Claude Code
    "Edit": "edit", "MultiEdit": "edit", "Write": "edit", "NotebookEdit": "edit",
    "Read": "read", "Grep": "search", "Glob": "search", "LS": "search",
    "Bash": "command", "BashOutput": "command", "KillShell": "command",
    "WebFetch": "web", "WebSearch": "web", "Task": "subagent", "Agent": "subagent",
    "TodoWrite": "plan", "ExitPlanMode": "plan",
    # Gemini CLI / Qwen Code
    "write_file": "edit", "replace": "edit", "edit": "edit",
    "read_file": "read", "read_many_files": "read",
    "glob": "search", "grep_search": "search", "search_file_content": "search",
    "list_directory": "search",
    "run_shell_command": "command",
    "web_fetch": "web", "google_web_search": "web",
    "write_todos": "plan", "todo_write": "plan",
    "agent": "subagent", "invoke_agent": "subagent",
    # Codex
    "shell": "command", "exec_command": "command", "apply_patch": "edit", "web_search": "web",
    "update_plan": "plan",
}  # fmt: skip

_START = {"PreToolUse", "BeforeTool"}
_END = {"PostToolUse", "AfterTool"}
_FAILED = {"PostToolUseFailure"}


def command_kind(cmd: str) -> str:
    if _GIT_CMD.match(cmd):
        return "git"
    if _TEST_CMD.match(cmd):
        return "test"
    if _CHECK_CMD.match(cmd):
        return "check"
    return "command"


def _text(value: Any, cap: int) -> str | None:
    if isinstance(value, str) and value:
        return value[:cap]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return " ".join(value)[:cap]
    return None


def _tool_fields(tool: str, args: Any) -> tuple[str, str | None, str | None]:
    """(kind, file, cmd) of one tool call."""
    args = args if isinstance(args, dict) else {}
    kind = TOOL_KINDS.get(tool, "other")
    if tool.startswith("mcp__"):
        kind = "other"
    cmd = _text(args.get("command") or args.get("cmd"), 2000)
    file = _text(
        args.get("file_path") or args.get("filePath") or args.get("path")
        or args.get("absolute_path") or args.get("notebook_path"),
        1000,
    )  # fmt: skip
    if kind == "command" and cmd:
        kind = command_kind(cmd)
    return kind, file, cmd


def _summary(tool: str, file: str | None, cmd: str | None, args: Any) -> str:
    if cmd:
        return f"{tool}: {cmd}"[:300]
    if file:
        return f"{tool} {file}"[:300]
    if isinstance(args, dict):
        for key in ("pattern", "url", "query", "description", "prompt"):
            if isinstance(args.get(key), str) and args[key]:
                return f"{tool}: {args[key]}"[:300]
    return tool or "tool"


def _failed(response: Any) -> bool:
    if isinstance(response, dict):
        if response.get("is_error") is True or response.get("interrupted") is True:
            return True
        if response.get("success") is False or response.get("error"):
            return True
        code = response.get("exit_code", response.get("exitCode"))
        return isinstance(code, int) and code != 0
    return False


def classify(agent: str, hook: dict[str, Any]) -> dict[str, Any] | None:
    """The v1 event of one hook call (``None`` when the call is not board material)."""
    name = str(hook.get("hook_event_name") or hook.get("hookEventName") or "")
    session = str(hook.get("session_id") or hook.get("sessionId") or "unknown")[:200]
    event: dict[str, Any]
    if name == "SessionStart":
        event = {"kind": "session", "summary": f"{agent} session started"}
        source = hook.get("source")
        if isinstance(source, str) and source:
            event["detail"] = source
    elif name == "SessionEnd":
        event = {"kind": "end", "summary": f"{agent} session ended"}
        reason = hook.get("reason")
        if isinstance(reason, str) and reason:
            event["detail"] = reason
    elif name in ("Stop", "AfterAgent"):
        event = {"kind": "idle", "summary": "finished responding"}
    elif name == "SubagentStop":
        event = {"kind": "subagent", "summary": "subagent finished"}
    elif name in _START | _END | _FAILED:
        tool = str(hook.get("tool_name") or hook.get("toolName") or "tool")[:200]
        args = hook.get("tool_input", hook.get("toolInput"))
        kind, file, cmd = _tool_fields(tool, args)
        event = {"kind": kind, "summary": _summary(tool, file, cmd, args)}
        if file:
            event["file"] = file
        if cmd:
            event["cmd"] = cmd
        if name in _START:
            event["running"] = True
        else:
            response = hook.get("tool_response", hook.get("toolResponse"))
            failed = name in _FAILED or _failed(response)
            event["ok"] = not failed
            error = hook.get("error")
            if isinstance(error, str) and error:
                event["detail"] = error[:2000]
    else:
        return None
    event = {"v": 1, "session": session, **event}
    for key, env in (("agent", "BOARD_AGENT_ID"), ("task", "BOARD_TASK")):
        value = os.environ.get(env)
        if value:
            event[key] = value[:200]
    return event


def board_url(default: str) -> str:
    if os.environ.get("BOARD_URL"):
        return os.environ["BOARD_URL"].rstrip("/")
    port = os.environ.get("BOARD_PORT", "")
    if port.isdigit():
        return f"http://127.0.0.1:{port}"
    return default.rstrip("/")


def read_token(token_file: str | None) -> str | None:
    if os.environ.get("CORRAL_TOKEN"):
        return os.environ["CORRAL_TOKEN"]
    if not token_file:
        return None
    try:
        with open(os.path.expanduser(token_file), encoding="utf-8") as fh:
            return fh.read().strip() or None
    except OSError:
        return None


def post(url: str, event: dict[str, Any], token: str | None, timeout: float = TIMEOUT) -> None:
    import urllib.request  # here, in the detached child: the hook itself never pays for it

    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        f"{url}/api/events", data=json.dumps(event).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
    except Exception:  # fire and forget: the board being down is not an error
        pass


def _detach() -> bool:
    """Fork; the parent returns ``False`` (and exits), the detached child ``True``.

    The parent waits (at most :data:`DETACH_WAIT`) until the child has left the agent's process
    group: an agent that kills its hook's group as soon as the hook exits (Qwen Code at its end)
    would otherwise take the child with it before it ever ran.
    """
    if not hasattr(os, "fork"):
        return True
    ready_r, ready_w = os.pipe()
    if os.fork() > 0:
        os.close(ready_w)
        with contextlib.suppress(OSError):
            select.select([ready_r], [], [], DETACH_WAIT)
        os.close(ready_r)
        return False
    os.close(ready_r)
    os.setsid()
    os.write(ready_w, b"1")
    os.close(ready_w)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    return True


WATCH_POLL = 0.5
WATCH_LIMIT = 24 * 3600.0
"""A watcher gives up after a day: an end that late is not worth a process."""


def _args(argv: list[str]) -> tuple[str, dict[str, str]]:
    """``(agent or "watch", options)``; unknown flags (such as ``--tag``) are ignored."""
    agent, options = "claude", {"url": "http://127.0.0.1:8765"}
    rest = list(argv)
    if rest and not rest[0].startswith("-"):
        agent = rest.pop(0)
    while rest:
        flag = rest.pop(0)
        if flag == "--foreground":
            options["foreground"] = "1"
        elif flag.startswith("--") and rest and not rest[0].startswith("--"):
            options[flag[2:]] = rest.pop(0)
    return agent, options


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def watch(pid: int, event: dict[str, Any], url: str, token_file: str | None) -> None:
    """Wait (polling, bounded) for ``pid`` to end, then post ``event``."""
    deadline = time.monotonic() + WATCH_LIMIT
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(WATCH_POLL)
    post(board_url(url), event, read_token(token_file))


def main(argv: list[str] | None = None) -> int:
    with contextlib.suppress(AttributeError, ValueError):  # no SIGHUP on Windows; not main thread
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the agent's terminal may hang up as it exits
    agent, options = _args(sys.argv[1:] if argv is None else argv)
    url, token_file = options["url"], options.get("token-file")
    if agent == "watch":
        pid = options.get("pid", "")
        if not pid.isdigit():
            return 0
        name = options.get("name", "agent")[:50]
        session = options.get("session", "unknown")[:200]
        end = {"v": 1, "session": session, "kind": "end", "summary": f"{name} session ended"}
        for key, env in (("agent", "BOARD_AGENT_ID"), ("task", "BOARD_TASK")):
            if os.environ.get(env):
                end[key] = os.environ[env][:200]
        watch(int(pid), end, url, token_file)
        return 0
    foreground = "foreground" in options
    try:
        hook = json.loads(sys.stdin.buffer.read(1 << 20) or b"{}")
    except (ValueError, OSError):
        return 0
    event = classify(agent, hook) if isinstance(hook, dict) else None
    if event is None:
        return 0
    if foreground:
        post(board_url(url), event, read_token(token_file))
        return 0
    spool = _spool(event)
    if spool is None or not _detach():
        return 0
    _drain_spool(spool, board_url(url), read_token(token_file))
    return 0


def _spool_root() -> str:
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"corral-board-{os.getuid()}")


def _spool(event: dict[str, Any]) -> str | None:
    """Queue ``event`` for its session (in hook order); returns the session's spool directory.

    The detached children of two hooks can run in either order; spooling in the hook itself and
    posting from the spool under a lock keeps a session's events in the order they happened
    (a running line before its completed event). A session's start sorts before the rest
    (``0-`` against ``1-``): see :func:`_await_start`."""
    import hashlib

    key = hashlib.sha256(str(event["session"]).encode()).hexdigest()[:24]
    directory = os.path.join(_spool_root(), key)
    rank = 0 if event.get("kind") == "session" else 1
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        name = os.path.join(directory, f"{rank}-{time.time_ns():020d}-{os.getpid()}.json")
        with open(name + ".tmp", "w", encoding="utf-8") as fh:
            json.dump(event, fh)
        os.replace(name + ".tmp", name)
    except OSError:
        return None
    return directory


STARTED = ".started"
"""Marks a spool directory whose session's start was posted, or waited for in vain."""


def _await_start(directory: str) -> None:
    """Hold a session's first post (at most :data:`SESSION_WAIT`) until its start is spooled.

    Qwen Code 0.15 fires its TUI's SessionStart hook without awaiting it and goes on with the
    first prompt: with a fast model, the first tool call's hook ran 250 ms after SessionStart's,
    and on a loaded machine its emitter spooled first (the board showed the edit before the
    session). Only a session's first drain waits, and only while its start is missing; a session
    whose start never comes (wired mid-session) costs one wait, then the marker lets it through.
    """
    marker = os.path.join(directory, STARTED)
    if os.path.exists(marker):
        return
    deadline = time.monotonic() + SESSION_WAIT
    while time.monotonic() < deadline:
        try:
            if any(n.startswith("0-") and n.endswith(".json") for n in os.listdir(directory)):
                break
        except OSError:
            break
        time.sleep(0.02)
    with contextlib.suppress(OSError):
        os.close(os.open(marker, os.O_CREAT | os.O_WRONLY, 0o600))


DRAIN_PASSES = 100
"""Bound on the poster's re-reads of the spool (each pass posts at least one event)."""


def _drain_spool(directory: str, url: str, token: str | None) -> None:
    """Post the session's spooled events, the start first and then oldest first, one poster at a
    time (a bounded lock wait); each file is removed before its POST: at most once, no retry.

    The poster reads the spool again until it is empty, so an event spooled while it posted is
    not left behind by a poster that gave up waiting for the lock."""
    import fcntl

    try:
        lock = os.open(os.path.join(directory, ".lock"), os.O_CREAT | os.O_RDWR, 0o600)
    except OSError:
        return
    deadline = time.monotonic() + 5 * TIMEOUT
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if time.monotonic() > deadline:
                os.close(lock)
                return  # another poster holds it and will post ours too
            time.sleep(0.01)
    try:
        _await_start(directory)
        for _ in range(DRAIN_PASSES):
            try:
                names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
            except OSError:
                return
            if not names:
                return
            for name in names:
                path = os.path.join(directory, name)
                try:
                    with open(path, encoding="utf-8") as fh:
                        event = json.load(fh)
                    os.unlink(path)
                except (OSError, ValueError):
                    with contextlib.suppress(OSError):
                        os.unlink(path)  # unreadable: dropped, so the next pass ends
                    continue
                post(url, event, token)
    finally:
        os.close(lock)


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)
