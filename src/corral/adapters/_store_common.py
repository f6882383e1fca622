"""What every vendor store reader shares: where things live, and reading heads of files cheaply.

A store reader answers "which sessions are there" from **headers only**: ``stat`` first (the mtime
filter needs nothing else), then the first lines of a transcript, read in small chunks and never
past a per-vendor byte budget. Every byte is agent output, so nothing here raises on content: a
line that does not decode is skipped, a file that cannot be opened yields nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._process._decode import BadJson, loads
from ..events import Event, StatusChanged
from ._handoff import ExternalSession

FIRST_READ = 16 * 1024
"""The first read of a header: most vendors' headers fit."""
CHUNK = 64 * 1024
"""Later reads (Codex's first line carries its instructions: tens of KB)."""
HEAD_BUDGET = 256 * 1024
"""Default limit on the bytes a header read may consume."""
TITLE_CHARS = 120


def environ(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def home(env: Mapping[str, str] | None) -> Path:
    """``HOME`` of ``env`` (the CLI's home); this process's home when unset."""
    value = environ(env).get("HOME")
    return Path(value) if value else Path.home()


def env_dir(env: Mapping[str, str] | None, var: str, default: Path) -> Path:
    """``$var`` from ``env`` when set and absolute, else ``default``."""
    value = environ(env).get(var)
    return Path(value) if value and os.path.isabs(value) else default


def xdg(env: Mapping[str, str] | None, var: str, fallback: str) -> Path:
    """An XDG base directory (``XDG_DATA_HOME`` …) as the CLI would resolve it."""
    return env_dir(env, var, home(env) / fallback)


@dataclass(frozen=True, slots=True)
class FileStat:
    path: str
    mtime: float
    size: int
    inode: int


def walk(
    root: Path,
    *,
    accept: Callable[[str], bool],
    since: float | None = None,
    max_depth: int = 6,
) -> Iterator[FileStat]:
    """Regular files under ``root`` whose name ``accept``s, changed after ``since``: stat only.

    Symbolic links are not followed (a store is never a reason to leave it). Unreadable
    directories are skipped.
    """
    stack: list[tuple[str, int]] = [(str(root), 0)]
    while stack:
        directory, depth = stack.pop()
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if depth < max_depth:
                            stack.append((entry.path, depth + 1))
                        continue
                    if not entry.is_file(follow_symlinks=False) or not accept(entry.name):
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if since is not None and st.st_mtime <= since:
                    continue
                yield FileStat(entry.path, st.st_mtime, st.st_size, st.st_ino)


def head_lines(path: str | Path, budget: int = HEAD_BUDGET) -> Iterator[bytes]:
    """Complete lines from the start of ``path``, reading at most ``budget`` bytes.

    The first read is :data:`FIRST_READ` bytes (most headers fit), later ones :data:`CHUNK`;
    lines are cut out one at a time, so a consumer that stops early pays for what it used. A
    line cut by the budget is not yielded.
    """
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed in finally, read lazily
    except OSError:
        return
    try:
        buffer = b""
        pos = 0
        consumed = 0
        size = FIRST_READ
        while consumed < budget:
            try:
                chunk = handle.read(min(size, budget - consumed))
            except OSError:
                return
            size = CHUNK
            if not chunk:
                rest = buffer[pos:]
                if rest and not rest.isspace():
                    yield rest
                return
            consumed += len(chunk)
            buffer = buffer[pos:] + chunk
            pos = 0
            while True:
                end = buffer.find(b"\n", pos)
                if end < 0:
                    break
                line = buffer[pos:end]
                pos = end + 1
                if line and not line.isspace():
                    yield line
    finally:
        handle.close()


def records(lines: Iterator[bytes], *, worth: tuple[bytes, ...] = ()) -> Iterator[dict[str, Any]]:
    """The JSON objects among ``lines``; anything else is skipped.

    With ``worth``, only lines containing one of those byte strings are decoded: a header reader
    passes strings every line it needs must contain (a key or a value), so skipping the others
    (long context records) changes nothing but the time spent.
    """
    for line in lines:
        if worth and not any(w in line for w in worth):
            continue
        try:
            value = loads(line)
        except BadJson:
            continue
        if isinstance(value, dict):
            yield value


def read_json(path: str | Path, budget: int) -> Any:
    """One JSON document of at most ``budget`` bytes, or ``None`` (too big, unreadable, bad)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(budget + 1)
    except OSError:
        return None
    if len(data) > budget:
        return None
    try:
        return loads(data)
    except BadJson:
        return None


def one_line(text: object, limit: int = TITLE_CHARS) -> str | None:
    """``text`` on one line, shortened to ``limit`` characters; ``None`` for no text."""
    if not isinstance(text, str):
        return None
    flat = " ".join(text.split())
    if not flat:
        return None
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def text_parts(content: object, kinds: tuple[str, ...] = ("text",)) -> str:
    """The text of a message's content: a string, or a list of ``{type, text}`` parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    out = []
    for part in content:
        if isinstance(part, dict) and part.get("type") in kinds:
            text = part.get("text")
            if isinstance(text, str):
                out.append(text)
    return "".join(out)


def prompt_event(text: str) -> Event:
    """A user prompt seen in a transcript (the prompt events' ``status`` family, ``external``)."""
    return StatusChanged(status="prompt.external", message=one_line(text), raw={"text": text})


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def jsonl_records(path: Path, budget: int = 256 << 20) -> Iterator[dict[str, Any]]:
    """Every JSON object of a JSON-lines transcript (at most ``budget`` bytes are read)."""
    return records(head_lines(path, budget))


def same_dir(a: str | None, b: str) -> bool:
    """Whether two directory names are the same directory (symbolic links resolved)."""
    return a is not None and os.path.realpath(a) == os.path.realpath(b)


def safe_sid(sid: str) -> bool:
    """A session id that can be part of a file name without leaving its directory."""
    return bool(sid) and "/" not in sid and "\\" not in sid and not sid.startswith(".")


def newest_first(stats: Iterator[FileStat]) -> list[FileStat]:
    return sorted(stats, key=lambda s: s.mtime, reverse=True)


def stat_of(path: Path) -> FileStat | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return FileStat(str(path), st.st_mtime, st.st_size, st.st_ino) if os.path.isfile(path) else None


def entry(
    agent: str, stat: FileStat, sid: str, cwd: str | None, title: str | None, *, missing: str
) -> ExternalSession:
    """The listing entry of one transcript; ``missing`` says why, when no cwd was found."""
    return ExternalSession(
        agent_id=agent,
        sid=sid,
        cwd=cwd,
        path=stat.path,
        mtime=stat.mtime,
        size=stat.size,
        title=title,
        problem=None if cwd else missing,
    )


def headers(
    stats: Iterable[FileStat], header: Callable[[FileStat], ExternalSession | None]
) -> Iterator[ExternalSession]:
    """``header`` of each file, skipping the files that hold no session."""
    for stat in stats:
        found = header(stat)
        if found is not None:
            yield found
