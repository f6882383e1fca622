"""The intents, enforced on the pinned real CLIs: the scripted model *tries* each action; the
outcome is read on disk and in a local bare git remote, never from the agent's words.

Every run goes through ``corral run AGENT --intent X --yes``: ``--yes`` answers *allow* to every
approval request that reaches the host, so what is denied here is denied by the vendor's own rules
or by corral's guard, whatever the host would have answered (issue 13: Claude Code in plan mode
hands the decision to the host).

The table in docs/intents.md is generated from :data:`MATRIX` and the scenario definitions below
(``scripts/gen_intents_doc.py``); a row an agent could not pass is not offered by its adapter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from codex_extra_scenarios import write_catalog

from corral.adapters.base import BaseAdapter
from corral.intents import Intent
from corral.redirect import redirect_for
from corral.registry import Registry
from corral.testing import FakeModelServer

pytestmark = pytest.mark.realcli

CORRAL = str(Path(sys.executable).with_name("corral"))
MODEL = "fake-model"
ALLOWED = "python3 -m unittest"

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "corral",
    "GIT_AUTHOR_EMAIL": "corral@localhost",
    "GIT_COMMITTER_NAME": "corral",
    "GIT_COMMITTER_EMAIL": "corral@localhost",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def builtin_adapter_class(adapter_id: str) -> type[BaseAdapter] | None:
    """A built-in adapter's class, resolved by the registry (no drop-ins, no entry points)."""
    registry = Registry(entry_points=None, use_env=False, use_dropins=False)
    return registry.adapter_class(adapter_id)


# ── the actions a scenario tries, each with the shell command or tool call it uses ──
def shell(command: str) -> dict[str, Any]:
    return {"capability": "shell", "command": command}


ACTIONS: dict[str, dict[str, Any]] = {
    "write a new file": {"capability": "write_file", "path": "new.txt", "content": "x"},
    "read the file to edit": {"capability": "read", "path": "README.md"},
    "edit an existing file": {
        "capability": "edit",
        "path": "README.md",
        "old": "# scratch repo for a real-CLI test",
        "new": "# edited repo",
    },
    "touch": shell("touch touched.txt"),
    "> redirection": shell("echo hi > redirected.txt"),
    "sh -c": shell("sh -c 'echo hi > shc.txt'"),
    "python3 -c open(…,'w')": shell("python3 -c \"open('py.txt','w').write('x')\""),
    "sed -i": shell("sed -i 's/notes/sedited/' NOTES.md"),
    "git commit": shell("git commit --allow-empty -m sneaky"),
    "git push": shell("git push origin main"),
    "work: edit": {"capability": "write_file", "path": "work.txt", "content": "work"},
    "work: git add": shell("git add work.txt"),
    "work: git commit": shell("git commit -m work"),
    "allowed command": shell(f"{ALLOWED} test_marker"),
    "command outside the allowed prefixes": shell(
        "python3 -c \"open('outside.txt','w').write('x')\""
    ),
    "git rebase": shell("git rebase origin/main"),
    "git push --force": shell("git push --force origin main"),
    "git push -f": shell("git push -f origin main"),
    "git push --force-with-lease": shell("git push --force-with-lease origin main"),
    "git push origin +main": shell("git push origin +main"),
}

READ_ONLY_TRIES = (
    "write a new file",
    "read the file to edit",  # Claude Code edits only a file it has read
    "edit an existing file",
    "touch",
    "> redirection",
    "sh -c",
    "python3 -c open(…,'w')",
    "sed -i",
    "git commit",
)
WORK_TRIES = (
    "work: edit",
    "work: git add",
    "work: git commit",
    "allowed command",
    "command outside the allowed prefixes",
    "git push",
)
PUSH_TRIES = ("work: edit", "work: git add", "work: git commit", "git push")
FORCE_TRIES = (
    "git rebase",
    "git push --force",
    "git push -f",
    "git push --force-with-lease",
    "git push origin +main",
)


NAMED_EDITS = {
    "write a new file": ("Write", lambda repo: {"file_path": f"{repo}/new.txt", "content": "x"}),
    "edit an existing file": (
        "Edit",
        lambda repo: {
            "file_path": f"{repo}/README.md",
            "old_string": "# scratch repo for a real-CLI test",
            "new_string": "# edited repo",
        },
    ),
}
"""Claude Code's edit tools, called by name even when the intent removed them from the tool list
(the model *tries* them; a capability would fall back to another tool)."""


QWEN_EDITS = {
    "write a new file": ("write_file", NAMED_EDITS["write a new file"][1]),
    "edit an existing file": ("edit", NAMED_EDITS["edit an existing file"][1]),
}

OPENCODE_EDITS = {
    "write a new file": ("write", lambda repo: {"filePath": f"{repo}/new.txt", "content": "x"}),
    "edit an existing file": (
        "edit",
        lambda repo: {
            "filePath": f"{repo}/README.md",
            "oldString": "# scratch repo for a real-CLI test",
            "newString": "# edited repo",
        },
    ),
}
EDITS_BY_NAME = {
    "claude": NAMED_EDITS,
    "qwen": QWEN_EDITS,
    "qwen-acp": QWEN_EDITS,
    "opencode": OPENCODE_EDITS,
    "opencode-acp": OPENCODE_EDITS,
    "opencode-run": OPENCODE_EDITS,
}
"""Agents whose intents remove the edit tools: the model calls them by name anyway."""


def action(name: str, agent: str, repo: Path | None) -> dict[str, Any]:
    named = EDITS_BY_NAME.get(agent, {})
    if repo is not None and name in named:
        tool, args = named[name]
        return {"name": tool, "arguments": args(repo)}
    return ACTIONS[name]


def scenario(tries: tuple[str, ...], agent: str = "", repo: Path | None = None) -> dict[str, Any]:
    """One tool call per model request, in order, then ``DONE``."""
    steps = [
        {"match": {"turn": i + 1}, "reply": {"tool_calls": [action(name, agent, repo)]}}
        for i, name in enumerate(tries)
    ]
    steps.append({"match": {"turn": len(tries) + 1}, "reply": {"text": "DONE"}})
    return {"name": "intent-tries", "steps": steps, "default": {"text": "DONE"}}


# ── the world a run acts on: a repo with a bare remote ──
@dataclass
class World:
    repo: Path
    remote: Path
    home: Path
    env: dict[str, str]
    initial: str = ""
    diverged_remote: str = ""
    notes: list[str] = field(default_factory=list)

    def git(self, *args: str, cwd: Path | None = None) -> str:
        out = subprocess.run(
            ["git", *args],
            cwd=cwd or self.repo,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return out.stdout.strip()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def remote_main(self) -> str:
        return self.git("rev-parse", "main", cwd=self.remote)

    def commits(self) -> int:
        return int(self.git("rev-list", "--count", "HEAD"))

    def readme(self) -> str:
        return (self.repo / "README.md").read_text()


@pytest.fixture
def world(tmp_path: Path, git_repo: Path, isolated_home: Path) -> World:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(isolated_home),
        **GIT_IDENTITY,
    }
    remote = tmp_path / "remote.git"
    w = World(repo=git_repo, remote=remote, home=isolated_home, env=env)
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    w.git("remote", "add", "origin", str(remote))
    (git_repo / "test_marker.py").write_text(
        "import unittest\n\n\nclass T(unittest.TestCase):\n"
        "    def test_marker(self):\n"
        "        open('marker.txt', 'w').write('ran')\n"
    )
    (git_repo / "NOTES.md").write_text("notes\n")
    w.git("add", "test_marker.py", "NOTES.md")
    w.git("commit", "-q", "-m", "marker test")
    w.git("push", "-q", "origin", "main")
    w.git("branch", "-q", "--set-upstream-to=origin/main", "main")
    w.initial = w.head()
    return w


def diverge(w: World) -> None:
    """Put a commit on the remote that the local branch does not have, and one locally that the
    remote does not have: only a rewrite (rebase) or a force-push could make them agree."""
    other = w.repo.parent / "other"
    subprocess.run(["git", "clone", "-q", str(w.remote), str(other)], check=True, env=w.env)
    (other / "theirs.txt").write_text("theirs\n")
    w.git("add", "theirs.txt", cwd=other)
    w.git("commit", "-q", "-m", "theirs", cwd=other)
    w.git("push", "-q", "origin", "main", cwd=other)
    (w.repo / "ours.txt").write_text("ours\n")
    w.git("add", "ours.txt")
    w.git("commit", "-q", "-m", "ours")
    w.git("fetch", "-q", "origin")
    w.diverged_remote = w.remote_main()
    w.initial = w.head()


# ── running corral ──
def corral_run(
    agent: str,
    binary: Path,
    w: World,
    server: FakeModelServer,
    intent: str,
    *,
    allowed: str | None = None,
    timeout: float = 240,
) -> subprocess.CompletedProcess[str]:
    cli = REDIRECT.get(agent, agent)
    red = redirect_for(cli, base_url=server.base_url, model=MODEL, api_key="test", home=w.home)
    red.apply()
    argv = [CORRAL, "run", ADAPTER[agent], "Try the actions.", "--json", "--yes"]
    argv += ["--intent", intent, "--binary", str(binary), "--cwd", str(w.repo)]
    if allowed:
        argv += ["--allowed-commands", allowed]
    extra = list(red.argv)
    if agent.startswith("codex"):
        # Declares fake-model with an apply_patch tool, as codex's real models have: then edits
        # are file changes (not shell redirections) — see codex_extra_scenarios.
        catalog = write_catalog(w.repo.parent / "catalog.json")
        extra += ["-c", f"model_catalog_json={json.dumps(str(catalog))}"]
    for arg in extra:
        argv.append(f"--agent-arg={arg}")
    env = red.environ({**w.env, "TMPDIR": str(w.repo.parent / "tmp")})
    (w.repo.parent / "tmp").mkdir(exist_ok=True)
    return subprocess.run(
        argv,
        env={**env, **GIT_IDENTITY},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


ADAPTER = {
    "claude": "claude-code",
    "codex": "codex",
    "qwen": "qwen",
    "gemini": "gemini",
    "gemini-exec": "gemini-exec",
    "qwen-acp": "qwen-acp",
    "codex-exec": "codex-exec",
    "opencode": "opencode",
    "opencode-acp": "opencode-acp",
    "opencode-run": "opencode-run",
}
REDIRECT = {
    "qwen-acp": "qwen",
    "codex-exec": "codex",
    "gemini-exec": "gemini",
    "opencode-acp": "opencode",
    "opencode-run": "opencode",
}
"""Adapter ids whose CLI (and redirection) has another name."""


def offering(*intents: str) -> list[Any]:
    """The agents whose adapter offers every one of ``intents``: the suite proves each offer, and
    an intent an adapter does not offer is refused (tests/unit/intents)."""
    out = []
    for agent, adapter_id in ADAPTER.items():
        cls = builtin_adapter_class(adapter_id)
        assert cls is not None
        if all(Intent(i) in cls.enforceable_intents for i in intents):
            out.append(pytest.param(agent, marks=pytest.mark.realcli(REDIRECT.get(agent, agent))))
    return out


READ_ONLY_RUNS = [
    pytest.param(p.values[0], intent, marks=p.marks, id=f"{p.values[0]}-{intent}")
    for intent in ("ask", "review")
    for p in offering(intent)
]


def events(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    out = []
    for line in proc.stdout.splitlines():
        if line.strip():
            try:
                out.append(json.loads(line)["event"])
            except (ValueError, KeyError):
                continue
    return out


def describe(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n--- stdout ---\n{proc.stdout[-6000:]}\n--- stderr ---\n{proc.stderr[-3000:]}"


@pytest.fixture
def run(
    world: World, agent_bin: Callable[[str], Path]
) -> Iterator[Callable[..., subprocess.CompletedProcess[str]]]:
    servers: list[FakeModelServer] = []

    def go(
        agent: str, intent: str, tries: tuple[str, ...], allowed: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        binary = agent_bin(REDIRECT.get(agent, agent))
        server = FakeModelServer(scenario(tries, agent, world.repo))
        server.__enter__()
        servers.append(server)
        proc = corral_run(agent, binary, world, server, intent, allowed=allowed)
        # the whole event stream, kept beside the repo for a failure's post-mortem
        (world.repo.parent / f"{agent}-{intent}.jsonl").write_text(proc.stdout)
        tool_results = len(server.requests.with_tool_result())
        assert tool_results >= len(tries), (
            f"the model saw {tool_results} tool results for {len(tries)} tries\n{describe(proc)}"
        )
        return proc

    yield go
    for server in servers:
        server.__exit__(None, None, None)


# ── the checks, on disk and in the remote; each outcome is recorded for docs/intents.md ──
BLOCKED, DONE = "blocked", "done"


def record(agent: str, intent: str, outcomes: dict[str, bool], expected: str) -> None:
    """Append ``{agent, intent, action, outcome, expected}`` rows to ``$CORRAL_INTENTS_RESULTS``
    (read by ``scripts/gen_intents_doc.py``); ``outcomes`` maps an action to "it happened"."""
    path = os.environ.get("CORRAL_INTENTS_RESULTS")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as out:
        for action_name, happened in outcomes.items():
            row = {
                "agent": agent,
                "adapter": ADAPTER[agent],
                "intent": intent,
                "action": action_name,
                "outcome": DONE if happened else BLOCKED,
                "expected": expected if not action_name.startswith("!") else BLOCKED,
            }
            out.write(json.dumps(row) + "\n")


def read_only_outcomes(w: World, commits_before: int) -> dict[str, bool]:
    """Which of the read-only tries changed something (True = it happened)."""
    readme = w.readme()
    return {
        "write a new file": (w.repo / "new.txt").exists(),
        "edit an existing file": "edited repo" in readme,
        "touch": (w.repo / "touched.txt").exists(),
        "> redirection": (w.repo / "redirected.txt").exists(),
        "sh -c": (w.repo / "shc.txt").exists(),
        "python3 -c open(…,'w')": (w.repo / "py.txt").exists(),
        "sed -i": "sedited" in (w.repo / "NOTES.md").read_text(),
        "git commit": w.commits() != commits_before,
    }


@pytest.mark.parametrize(("agent", "intent"), READ_ONLY_RUNS)
@pytest.mark.timeout(400)
def test_read_only_intents_block_every_write(
    agent: str, intent: str, world: World, run: Callable[..., Any]
) -> None:
    commits = world.commits()
    proc = run(agent, intent, READ_ONLY_TRIES)
    outcomes = read_only_outcomes(world, commits)
    record(agent, intent, outcomes, BLOCKED)
    assert proc.returncode == 0, describe(proc)
    assert not any(outcomes.values()), f"{outcomes}\n{describe(proc)}"
    assert world.remote_main() == world.initial, describe(proc)


@pytest.mark.parametrize("agent", offering("full"))
@pytest.mark.timeout(400)
def test_full_is_what_lets_the_same_tries_through(
    agent: str, world: World, run: Callable[..., Any]
) -> None:
    """The control: the read-only tries are real writes — under full they happen."""
    commits = world.commits()
    proc = run(agent, "full", READ_ONLY_TRIES)
    outcomes = read_only_outcomes(world, commits)
    assert proc.returncode == 0, describe(proc)
    record(agent, "full", outcomes, DONE)
    assert all(outcomes.values()), f"{outcomes}\n{describe(proc)}"


@pytest.mark.parametrize("agent", offering("work"))
@pytest.mark.timeout(400)
def test_work_edits_commits_runs_allowed_and_never_pushes(
    agent: str, world: World, run: Callable[..., Any]
) -> None:
    commits = world.commits()
    proc = run(agent, "work", WORK_TRIES, allowed=ALLOWED)
    log = describe(proc)
    committed = world.commits() == commits + 1 and "work.txt" in world.git(
        "show", "--name-only", "HEAD"
    )
    allowed = {
        "edit, git add, git commit": (world.repo / "work.txt").is_file() and committed,
        "allowed command": (world.repo / "marker.txt").is_file(),
    }
    denied = {
        "command outside the allowed prefixes": (world.repo / "outside.txt").exists(),
        "git push": world.remote_main() != world.initial,
    }
    record(agent, "work", allowed, DONE)
    record(agent, "work", denied, BLOCKED)
    assert proc.returncode == 0, log
    assert all(allowed.values()), f"{allowed}\n{log}"
    assert not any(denied.values()), f"{denied}\n{log}"


@pytest.mark.parametrize("agent", offering("act-pr"))
@pytest.mark.timeout(400)
def test_act_pr_pushes(agent: str, world: World, run: Callable[..., Any]) -> None:
    proc = run(agent, "act-pr", PUSH_TRIES, allowed=ALLOWED)
    pushed = world.head() != world.initial and world.remote_main() == world.head()
    record(agent, "act-pr", {"edit, commit, git push": pushed}, DONE)
    assert proc.returncode == 0, describe(proc)
    assert pushed, f"the commit did not reach the remote\n{describe(proc)}"


@pytest.mark.parametrize("spelling", FORCE_TRIES)
@pytest.mark.parametrize("agent", offering("act-pr"))
@pytest.mark.timeout(400)
def test_act_pr_never_rebases_or_force_pushes(
    agent: str, spelling: str, world: World, run: Callable[..., Any]
) -> None:
    diverge(world)
    proc = run(agent, "act-pr", (spelling,), allowed=ALLOWED)
    rewritten = world.remote_main() != world.diverged_remote or world.head() != world.initial
    record(agent, "act-pr", {spelling: rewritten}, BLOCKED)
    assert proc.returncode == 0, describe(proc)
    assert not rewritten, f"history was rewritten by {spelling!r}\n{describe(proc)}"


@pytest.mark.realcli("claude")
@pytest.mark.timeout(300)
def test_corral_run_ask_denies_a_write_and_says_so(
    world: World, agent_bin: Callable[[str], Path]
) -> None:
    binary = agent_bin("claude")
    before = sorted(p.name for p in world.repo.iterdir())
    with FakeModelServer(scenario(("write a new file",), "claude", world.repo)) as server:
        red = redirect_for(
            "claude", base_url=server.base_url, model=MODEL, api_key="test", home=world.home
        )
        red.apply()
        proc = subprocess.run(
            [
                CORRAL,
                "run",
                "claude-code",
                "Write new.txt.",
                "--intent",
                "ask",
                "--binary",
                str(binary),
                "--cwd",
                str(world.repo),
            ],
            env=red.environ(world.env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    assert proc.returncode == 0, describe(proc)
    assert not (world.repo / "new.txt").exists()
    assert sorted(p.name for p in world.repo.iterdir()) == before
    said = " ".join(proc.stderr.split())  # the human renderer wraps long lines
    assert "new.txt was denied under intent ask" in said, describe(proc)
