"""Record the on-disk session stores the real CLIs write, as hand-off parser fixtures.

    corral record AGENT store [--out tests/fixtures/transcripts]

Each pinned CLI runs headless, the way a user runs it in a terminal, against the scripted model
server, in a temporary HOME and a fresh git repository: turn 1 asks for ``hello.txt`` and the model
answers with the CLI's write tool, then ``DONE``; turn 2 continues the same session (the CLI's own
continue/resume flag) with a plain question. Every file the CLI left in its session store (the
directories :func:`corral.adapters._stores.store_roots` names) is copied, relative path kept, to

``OUT/<cli>/<version>/store/<path relative to the temporary HOME>``

next to ``OUT/<cli>/<version>/store.meta.json``: the CLI, version, both argvs, the temporary cwd
and home (the files record them), the redirection's environment (so a test rebases it onto the
``store`` directory to find the files where the CLI would), the exit codes and model-request
count, and this command.
Nothing is scrubbed: the parsers are tested on the bytes the CLI wrote.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._version import __version__
from ..adapters import _stores
from ..errors import ConfigError
from ..redirect import redirect_for
from .fake_model import FakeModelServer

SCENARIO = "store"
MODEL = "fake-model"
API_KEY = "corral-test-key"
PROMPTS = ("Please create hello.txt containing hi.", "Now say something else.")
TURN_TIMEOUT = 240.0
MAX_FILE = 8 << 20
_PASSTHROUGH = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")

#: The scripted model: a write-tool call for the first prompt, ``DONE`` after its result, and a
#: plain answer for anything else (side requests included).
MODEL_SCRIPT: dict[str, Any] = {
    "name": "store",
    "steps": [
        {"match": {"last_is_tool_result": True}, "reply": {"text": "DONE"}},
        {
            "match": {"user_text_contains": "hello.txt"},
            "reply": {
                "tool_calls": [{"capability": "write_file", "path": "hello.txt", "content": "hi\n"}]
            },
        },
    ],
    "default": {"text": "Second answer from the scripted model.", "chunks": 2},
}

ArgvFn = Callable[[str, tuple[str, ...], str, bool], list[str]]


def _claude(binary: str, extra: tuple[str, ...], prompt: str, again: bool) -> list[str]:
    argv = [binary, "-p", prompt, "--output-format", "stream-json", "--verbose"]
    argv += ["--permission-mode", "acceptEdits", *extra]
    return argv + (["--continue"] if again else [])


def _codex(binary: str, extra: tuple[str, ...], prompt: str, again: bool) -> list[str]:
    argv = [binary, "exec", "--json", "--skip-git-repo-check"]
    argv += ["--dangerously-bypass-approvals-and-sandbox", *extra]
    return argv + (["resume", "--last"] if again else []) + ["--", prompt]


def _gemini(binary: str, extra: tuple[str, ...], prompt: str, again: bool) -> list[str]:
    argv = [binary, "-p", prompt, "--output-format", "stream-json", "--yolo", "--skip-trust"]
    return argv + list(extra) + (["--resume", "latest"] if again else [])


def _qwen(binary: str, extra: tuple[str, ...], prompt: str, again: bool) -> list[str]:
    argv = [binary, *extra, "-p", prompt, "--output-format", "stream-json", "--yolo"]
    return argv + (["--continue"] if again else [])


def _opencode(binary: str, extra: tuple[str, ...], prompt: str, again: bool) -> list[str]:
    return [binary, "run", "--format", "json", *extra, *(["--continue"] if again else []), prompt]


def _pi(binary: str, extra: tuple[str, ...], prompt: str, again: bool) -> list[str]:
    return [binary, "--mode", "json", *extra, *(["--continue"] if again else []), "-p", prompt]


def _hermes(binary: str, extra: tuple[str, ...], prompt: str, again: bool) -> list[str]:
    return [
        binary,
        "chat",
        "-Q",
        "--yolo",
        *extra,
        *(["--continue"] if again else []),
        "-q",
        prompt,
    ]


#: Adapter id → (pinned CLI, headless argv builder).
TARGETS: dict[str, tuple[str, ArgvFn]] = {
    "claude-code": ("claude", _claude),
    "codex": ("codex", _codex),
    "gemini": ("gemini", _gemini),
    "qwen": ("qwen", _qwen),
    "opencode": ("opencode", _opencode),
    "pi": ("pi", _pi),
    "hermes": ("hermes", _hermes),
}


def _run(argv: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run one turn in its own process group; the group dies on timeout."""
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=TURN_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ConfigError(f"{argv[0]} did not finish a turn in {TURN_TIMEOUT:.0f} s") from None
    return proc.returncode, out.decode("utf-8", errors="replace")[-2000:]


def _dump(db: Path, tables: Sequence[str]) -> str:
    """The schema and rows of ``tables`` as SQL text (SQLite's own ``quote()`` for values)."""
    lines = ["BEGIN;"]
    # ``closing``: a connection's own ``with`` ends a transaction, it does not close.
    with contextlib.closing(sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True)) as conn:
        for table in tables:
            row = conn.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone()
            if row is None:
                continue
            lines.append(f"{row[0]};")
            columns = [c[1] for c in conn.execute(f'PRAGMA table_info("{table}")')]
            values = " || ',' || ".join(f'quote("{c}")' for c in columns)
            for (stmt,) in conn.execute(
                f"SELECT 'INSERT INTO \"{table}\" VALUES(' || {values} || ');' FROM \"{table}\""
            ):
                lines.append(stmt)
    lines.append("COMMIT;")
    return "\n".join(lines) + "\n"


def _copy_store(
    files: Sequence[Path], home: Path, dest: Path, tables: Sequence[str] = ()
) -> list[str]:
    """Copy ``files`` to ``dest``, by their path relative to ``home``.

    A SQLite database (``*.db``) is kept as text, ``<name>.db.sql``: the schema and rows of the
    tables the reader uses (``tables``), so the fixture is reviewable and needs no binary file.
    """
    copied: list[str] = []
    for path in files:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_FILE:
            continue
        rel = path.relative_to(home)
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".db":
            target = target.with_name(target.name + ".sql")
            target.write_text(_dump(path, tables), encoding="utf-8")
            rel = target.relative_to(dest)
        else:
            shutil.copyfile(path, target)
        copied.append(rel.as_posix())
    return copied


def record(agent: str, out: Path, *, binary: str | None = None) -> Path:
    """Run the two store turns on ``agent``'s real CLI and copy its store; returns the meta path."""
    from .. import agents
    from ._record_ocpi import cli_version

    if agent not in TARGETS:
        raise ConfigError(f"no store recording for {agent!r} (one of {', '.join(TARGETS)})")
    cli, argv_for = TARGETS[agent]
    located = binary or agents.locate(cli)
    if located is None:
        raise ConfigError(f"{cli} is not installed (run `corral agents install {cli}`)")
    binary = str(located)
    version = cli_version(binary)
    root = Path(tempfile.mkdtemp(prefix="corral-store-"))
    try:
        home, repo = root / "home", root / "repo"
        home.mkdir()
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        with FakeModelServer(MODEL_SCRIPT) as server:
            redir = redirect_for(
                cli, base_url=server.base_url, model=MODEL, api_key=API_KEY, home=home
            )
            redir.apply()
            base = {k: os.environ[k] for k in _PASSTHROUGH if k in os.environ}
            env = {**base, "NO_COLOR": "1", **redir.env, "PWD": str(repo)}
            argvs, codes = [], []
            for n, prompt in enumerate(PROMPTS):
                argv = argv_for(binary, tuple(redir.argv), prompt, n > 0)
                code, tail = _run(argv, env, repo)
                if code != 0:
                    raise ConfigError(f"{cli} turn {n + 1} exited {code}: {tail}")
                argvs.append(argv)
                codes.append(code)
            requests = len(server.requests.model_calls())
        if not (repo / "hello.txt").is_file():
            raise ConfigError(f"{cli} did not run the write tool (no hello.txt)")
        folder = out / cli / version
        dest = folder / "store"
        shutil.rmtree(dest, ignore_errors=True)
        module = _stores.store_for(agent)
        tables = tuple(getattr(module, "RECORD_TABLES", ()))
        copied = _copy_store(_stores.store_files(agent, env), home, dest, tables)
        if not copied:
            raise ConfigError(f"{cli} left no file in its session store")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    meta = {
        "cli": cli,
        "adapter": agent,
        "version": version,
        "scenario": SCENARIO,
        "prompts": list(PROMPTS),
        "model_script": MODEL_SCRIPT,
        "argv": argvs,
        "exit_codes": codes,
        "cwd": str(repo),
        "home": str(home),
        "env": {k: v for k, v in redir.env.items() if "KEY" not in k},
        "files": copied,
        "model_requests": requests,
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "corral_version": __version__,
        "command": f"corral record {agent} {SCENARIO} --out {out}",
    }
    path = folder / "store.meta.json"
    path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return path
