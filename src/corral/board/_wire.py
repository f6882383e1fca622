"""``corral wire``: install live-session reporting into a project, and take it out byte for byte.

:func:`plan` computes, without touching anything, the files an agent's observer needs (Claude Code
and Qwen Code hooks, Gemini CLI hooks, Codex ``hooks.json``, an opencode plugin) from the files as
they are now; an agent with no way to observe its sessions gets an empty plan with an honest
message. :func:`apply` writes the plan and records every edit — the path, the SHA-256 before and
after, and a backup of the original bytes — under ``home_dir()/wire/``. :func:`unwire` restores
each recorded file exactly (or removes it, when wire created it), refusing a file that changed
since it was wired unless forced. Planning is a pure function of the current files, so wiring twice
changes nothing the second time.

Only our own hook entries are touched (they carry :data:`TAG`); the rest of a settings file is kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._paths import home_dir
from ..errors import ConfigError

TAG = "corral-board"
"""Marks the hook entries and files corral wrote (the emitter ignores the flag)."""

EMITTER = Path(__file__).with_name("emit.py")
PLUGIN_TEMPLATE = Path(__file__).with_name("opencode_plugin.js")

_CLAUDE_EVENTS = {
    "PreToolUse": "*",
    "PostToolUse": "*",
    "PostToolUseFailure": "*",
    "Stop": None,
    "SubagentStop": None,
    "SessionStart": None,
    "SessionEnd": None,
}
_GEMINI_EVENTS = {
    "BeforeTool": ".*",
    "AfterTool": ".*",
    "AfterAgent": None,
    "SessionStart": None,
    "SessionEnd": None,
}
_CODEX_EVENTS = {
    "PreToolUse": "*",
    "PostToolUse": "*",
    "SessionStart": None,
    "Stop": None,
    "SessionEnd": None,
}

HOOK_TIMEOUT = {"claude": 5, "codex": 3, "gemini": 5000, "qwen": 5000}
"""The hook entry's ``timeout``, in each runner's unit: seconds for Claude Code and Codex (3:
a larger SessionEnd timeout is reported to be capped at 3 s with a start-up warning),
**milliseconds** for Gemini CLI 0.61 and its fork Qwen Code 0.15 (both runners SIGTERM the hook's
shell after that many ms: a ``5`` there killed the emitter before, or while, it spooled its
event — Gemini showed "hook failed", Qwen lost an event now and then)."""

ALIASES = {
    "claude": "claude",
    "claude-code": "claude",
    "qwen": "qwen",
    "qwen-acp": "qwen",
    "gemini": "gemini",
    "codex": "codex",
    "opencode": "opencode",
    "opencode-acp": "opencode",
    "pi": "pi",
    "hermes": "hermes",
    "kilo": "kilo",
}

UNOBSERVABLE = {
    "pi": "pi 0.73 has no hook or plugin mechanism a project can configure",
    "hermes": "hermes 0.19 exposes no session hooks to a project",
    "kilo": "kilo 7.7 is not wired yet (its plugin folder was not verified)",
}
"""Agents whose interactive sessions cannot be observed: ``wire`` says so and changes nothing."""

NOTES = {
    "codex": "codex runs project hooks only once the project is trusted (its trust prompt, or "
    "projects.<path>.trust_level in ~/.codex/config.toml) and the hooks are reviewed and trusted "
    "in /hooks",
    "gemini": "gemini runs project hooks only in a trusted folder (its trust dialog, "
    "~/.gemini/trustedFolders.json, or --skip-trust); it warns once about the new hooks",
}
"""What a person must do before the agent runs the project's hooks (checked on the pinned CLIs)."""


@dataclass(frozen=True)
class FileEdit:
    path: Path
    before: bytes | None
    after: bytes


@dataclass(frozen=True)
class WirePlan:
    agent: str
    project: Path
    edits: tuple[FileEdit, ...]
    message: str
    observable: bool = True
    unchanged: tuple[Path, ...] = field(default_factory=tuple)


def canonical(agent: str) -> str:
    try:
        return ALIASES[agent]
    except KeyError:
        raise ConfigError(
            f"unknown agent {agent!r} for wire (known: {', '.join(sorted(ALIASES))})"
        ) from None


def emitter_command(agent: str, *, url: str, token_file: Path) -> str:
    argv = [sys.executable, str(EMITTER), agent, "--url", url]
    argv += ["--token-file", str(token_file), "--tag", TAG]
    # ``trap '' HUP``: when an agent on a terminal is ended by a signal, its SessionEnd hook can
    # still be starting as the terminal hangs up; the hook's shell was seen dying of that SIGHUP
    # (Qwen Code 0.15.10 on a PTY, exit status 129). An ignored signal stays ignored across exec,
    # so the emitter starts immune to it (and ignores it itself). Every hook runner here runs
    # the command through a POSIX shell.
    return "trap '' HUP; " + " ".join(shlex.quote(a) for a in argv) + " 2>/dev/null"


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _load_object(path: Path, raw: bytes | None) -> dict[str, Any]:
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it before wiring") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{path} does not hold a JSON object; refusing to rewrite it")
    return value


def _is_ours(entry: Any) -> bool:
    hooks = entry.get("hooks") if isinstance(entry, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(h, dict) and TAG in str(h.get("command", "")) for h in hooks
    )


def merge_hooks(
    settings: dict[str, Any], events: dict[str, str | None], command: str, *, timeout: int = 5
) -> dict[str, Any]:
    """``settings`` with our hook entry under each event (replacing an older one of ours)."""
    out = dict(settings)
    hooks = out.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError("the settings' 'hooks' key is not an object; refusing to rewrite it")
    hooks = dict(hooks)
    for event, matcher in events.items():
        current = hooks.get(event, [])
        if not isinstance(current, list):
            raise ConfigError(f"hooks.{event} is not a list; refusing to rewrite it")
        hook = {"type": "command", "command": command, "timeout": timeout}
        entry: dict[str, Any] = {"hooks": [hook]}
        if matcher is not None:
            entry = {"matcher": matcher, **entry}
        hooks[event] = [e for e in current if not _is_ours(e)] + [entry]
    out["hooks"] = hooks
    return out


QWEN_SETTINGS_VERSION = 4
"""Qwen Code 0.15.10 rewrites a project settings file without ``$version`` (adding it, keeping a
``.orig``); writing it ourselves keeps the file as wire left it, so unwire can restore it."""


def _json_edit(
    path: Path,
    events: dict[str, str | None],
    command: str,
    *,
    timeout: int,
    extra: dict[str, Any] | None = None,
) -> FileEdit:
    before = _read(path)
    settings = _load_object(path, before)
    merged = merge_hooks(settings, events, command, timeout=timeout)
    for key, value in (extra or {}).items():
        merged.setdefault(key, value)
    after = (json.dumps(merged, indent=2) + "\n").encode()
    if before is not None and _load_object(path, before) == merged:
        after = before  # already wired: keep the bytes as they are
    return FileEdit(path, before, after)


def plugin_source(*, url: str, token_file: Path) -> bytes:
    text = PLUGIN_TEMPLATE.read_text(encoding="utf-8")
    text = text.replace("__CORRAL_BOARD_URL__", json.dumps(url.rstrip("/")))
    text = text.replace("__CORRAL_TOKEN_FILE__", json.dumps(str(token_file)))
    text = text.replace("__CORRAL_PYTHON__", json.dumps(sys.executable))
    text = text.replace("__CORRAL_EMITTER__", json.dumps(str(EMITTER)))
    return text.encode()


def plan(
    agent: str, project: Path, *, url: str = "http://127.0.0.1:8765", token_file: Path | None = None
) -> WirePlan:
    """What wiring ``agent`` into ``project`` would change (nothing is written)."""
    name = canonical(agent)
    root = project.resolve()
    if not root.is_dir():
        raise ConfigError(f"no such project directory: {project}")
    token = token_file or home_dir() / "token"
    if name in UNOBSERVABLE:
        return WirePlan(
            name,
            root,
            (),
            f"{name}: no live visibility — {UNOBSERVABLE[name]}; headless jobs still report "
            "through `corral job`",
            observable=False,
        )
    command = emitter_command(name, url=url, token_file=token)
    timeout = HOOK_TIMEOUT.get(name, 5)
    if name == "claude":
        edit = _json_edit(
            root / ".claude" / "settings.json", _CLAUDE_EVENTS, command, timeout=timeout
        )
    elif name == "qwen":
        edit = _json_edit(
            root / ".qwen" / "settings.json",
            _CLAUDE_EVENTS,
            command,
            timeout=timeout,
            extra={"$version": QWEN_SETTINGS_VERSION},
        )
    elif name == "gemini":
        edit = _json_edit(
            root / ".gemini" / "settings.json", _GEMINI_EVENTS, command, timeout=timeout
        )
    elif name == "codex":
        edit = _json_edit(root / ".codex" / "hooks.json", _CODEX_EVENTS, command, timeout=timeout)
    else:  # opencode
        path = root / ".opencode" / "plugin" / f"{TAG}.js"
        edit = FileEdit(path, _read(path), plugin_source(url=url, token_file=token))
    changed = tuple(e for e in (edit,) if e.before != e.after)
    unchanged = tuple(e.path for e in (edit,) if e.before == e.after)
    note = f" ({NOTES[name]})" if name in NOTES else ""
    verb = "would report" if changed else "already reports"
    return WirePlan(name, root, changed, f"{name}: {verb} to {url}{note}", unchanged=unchanged)


# ── the record ──────────────────────────────────────────────────────────────────────────────────


def _sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def record_dir(agent: str, project: Path) -> Path:
    key = hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:16]
    return home_dir() / "wire" / f"{key}-{canonical(agent)}"


def load_record(agent: str, project: Path) -> dict[str, Any] | None:
    path = record_dir(agent, project) / "record.json"
    raw = _read(path)
    if raw is None:
        return None
    value = json.loads(raw)
    return value if isinstance(value, dict) else None


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _make_parents(path: Path, root: Path) -> list[str]:
    created: list[str] = []
    missing = [p for p in reversed(path.parents) if p.is_relative_to(root) and not p.exists()]
    for parent in missing:
        parent.mkdir()
        created.append(str(parent.relative_to(root)))
    return created


def apply(wire_plan: WirePlan) -> list[dict[str, Any]]:
    """Write the plan's edits and record them; returns the record's entries that changed."""
    if not wire_plan.edits:
        return []
    rdir = record_dir(wire_plan.agent, wire_plan.project)
    rdir.mkdir(parents=True, exist_ok=True)
    record = load_record(wire_plan.agent, wire_plan.project) or {
        "agent": wire_plan.agent,
        "project": str(wire_plan.project),
        "edits": [],
    }
    by_path = {e["path"]: e for e in record["edits"]}
    changed = []
    for edit in wire_plan.edits:
        rel = str(edit.path.relative_to(wire_plan.project))
        entry = by_path.get(rel)
        if entry is None:
            backup = None
            if edit.before is not None:
                backup = f"{len(by_path)}.bak"
                (rdir / backup).write_bytes(edit.before)
            entry = {
                "path": rel,
                "existed": edit.before is not None,
                "before_sha256": _sha(edit.before),
                "backup": backup,
                "created_dirs": [],
            }
            by_path[rel] = entry
            record["edits"].append(entry)
        entry["created_dirs"] = entry["created_dirs"] + _make_parents(edit.path, wire_plan.project)
        _write_atomic(edit.path, edit.after)
        entry["after_sha256"] = _sha(edit.after)
        changed.append(entry)
    _write_atomic(rdir / "record.json", (json.dumps(record, indent=2) + "\n").encode())
    return changed


@dataclass(frozen=True)
class Restored:
    path: str
    action: str
    """``restored`` (original bytes back), ``removed`` (wire created it), or ``refused``."""
    reason: str | None = None


def unwire(agent: str, project: Path, *, force: bool = False) -> list[Restored]:
    """Undo what :func:`apply` recorded for ``agent`` in ``project``."""
    root = project.resolve()
    record = load_record(agent, root)
    if record is None:
        return []
    rdir = record_dir(agent, root)
    results: list[Restored] = []
    remaining = []
    for entry in reversed(record["edits"]):
        path = root / entry["path"]
        current = _read(path)
        if _sha(current) != entry["after_sha256"] and not force:
            results.append(Restored(entry["path"], "refused", "changed since it was wired"))
            remaining.append(entry)
            continue
        if entry["existed"]:
            original = (rdir / entry["backup"]).read_bytes()
            if _sha(original) != entry["before_sha256"]:
                results.append(Restored(entry["path"], "refused", "the backup is damaged"))
                remaining.append(entry)
                continue
            _write_atomic(path, original)
            results.append(Restored(entry["path"], "restored"))
        else:
            path.unlink(missing_ok=True)
            results.append(Restored(entry["path"], "removed"))
        for rel in reversed(entry["created_dirs"]):
            directory = root / rel
            if directory.is_dir() and not any(directory.iterdir()):
                directory.rmdir()
    if remaining:
        record["edits"] = list(reversed(remaining))
        _write_atomic(rdir / "record.json", (json.dumps(record, indent=2) + "\n").encode())
    else:
        for child in rdir.iterdir():
            child.unlink()
        rdir.rmdir()
    return results
