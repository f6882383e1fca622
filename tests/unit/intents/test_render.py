"""Every vendor rendering of every intent, table-tested as data (no process is started)."""

from __future__ import annotations

import fnmatch
import json

import pytest

from corral.intents import Intent, acp, claude, codex, opencode, unguarded

ALLOWED = ("python3 -m unittest",)


def claude_settings(intent: Intent) -> dict[str, list[str]]:
    argv = claude.render(intent, ALLOWED, "/repo").argv
    if "--settings" not in argv:
        return {"allow": [], "deny": []}
    perms: dict[str, list[str]] = json.loads(argv[argv.index("--settings") + 1])["permissions"]
    return perms


@pytest.mark.parametrize(
    ("intent", "mode", "edit_tools_removed"),
    [
        (Intent.ASK, "plan", True),
        (Intent.REVIEW, "default", True),
        (Intent.WORK, "acceptEdits", False),
        (Intent.ACT_PR, "acceptEdits", False),
        (Intent.FULL, "bypassPermissions", False),
    ],
)
def test_claude_mode_and_disallowed_tools(
    intent: Intent, mode: str, edit_tools_removed: bool
) -> None:
    rendering = claude.render(intent, ALLOWED, "/repo")
    assert rendering.settings == {"permission_mode": mode}
    if edit_tools_removed:
        i = rendering.argv.index("--disallowedTools")
        assert rendering.argv[i + 1].split(",") == ["Write", "Edit", "MultiEdit", "NotebookEdit"]
    else:
        assert "--disallowedTools" not in rendering.argv


@pytest.mark.parametrize(
    ("intent", "allowed", "denied"),
    [
        (Intent.ASK, [], ["Write", "Edit", "Bash(git push:*)", "Bash(git commit:*)"]),
        (
            Intent.REVIEW,
            ["Bash(gh pr view:*)", "Bash(gh pr review:*)", "Bash(gh pr comment:*)"],
            ["Write", "Bash(git push:*)", "Bash(git commit:*)"],
        ),
        (
            Intent.WORK,
            ["Bash(git add:*)", "Bash(git commit:*)", "Bash(python3 -m unittest:*)"],
            ["Bash(git push:*)", "Bash(git rebase:*)"],
        ),
        (
            Intent.ACT_PR,
            ["Bash(git commit:*)", "Bash(git fetch:*)", "Bash(git merge:*)", "Bash(gh api:*)"],
            [
                "Bash(git rebase:*)",
                "Bash(git push --force:*)",
                "Bash(git push -f:*)",
                "Bash(git push --force-with-lease:*)",
                "Bash(git push --force-if-includes:*)",
            ],
        ),
    ],
)
def test_claude_generated_rules(intent: Intent, allowed: list[str], denied: list[str]) -> None:
    perms = claude_settings(intent)
    for rule in allowed:
        assert rule in perms["allow"], rule
    for rule in denied:
        assert rule in perms["deny"], rule
    # a plain push is never allowed by a prefix rule (it would also cover "git push origin +main");
    # under act-pr it is asked of the host, where corral's guard grants it.
    assert "Bash(git push:*)" not in perms["allow"]
    assert not set(perms["allow"]) & set(perms["deny"])


def test_claude_full_has_no_rules() -> None:
    assert claude_settings(Intent.FULL) == {"allow": [], "deny": []}


@pytest.mark.parametrize(
    ("intent", "mode", "excluded"),
    [
        (Intent.ASK, "plan", True),
        (Intent.REVIEW, "default", True),
        (Intent.WORK, "auto-edit", False),
        (Intent.ACT_PR, "auto-edit", False),
        (Intent.FULL, "yolo", False),
    ],
)
def test_qwen_stream_json(intent: Intent, mode: str, excluded: bool) -> None:
    rendering = claude.render_qwen(intent, ALLOWED, "/repo")
    assert rendering.settings == {"permission_mode": mode}
    assert ("--exclude-tools" in rendering.argv) is excluded


@pytest.mark.parametrize(
    ("intent", "sandbox", "approval"),
    [
        (Intent.ASK, "read-only", "untrusted"),
        (Intent.REVIEW, "read-only", "untrusted"),
        (Intent.WORK, "danger-full-access", "untrusted"),
        (Intent.ACT_PR, "danger-full-access", "untrusted"),
        (Intent.FULL, "danger-full-access", "never"),
    ],
)
def test_codex_app_server(intent: Intent, sandbox: str, approval: str) -> None:
    rendering = codex.render(intent, ALLOWED, "/repo")
    assert rendering.settings == {"sandbox": sandbox, "approval_policy": approval}
    assert rendering.argv == () and rendering.env == {}


@pytest.mark.parametrize("intent", list(Intent))
def test_codex_exec_only_what_its_sandbox_alone_can_hold(intent: Intent) -> None:
    if intent in (Intent.WORK, Intent.ACT_PR):
        with pytest.raises(ValueError, match="cannot enforce"):
            codex.render_exec(intent, ALLOWED, "/repo")
        return
    assert codex.render_exec(intent, ALLOWED, "/repo").settings == {
        "sandbox": codex.SANDBOX[intent]
    }


@pytest.mark.parametrize("render", [acp.render_gemini, acp.render_qwen_acp])
@pytest.mark.parametrize("intent", list(Intent))
def test_acp_approval_modes(render: object, intent: Intent) -> None:
    rendering = render(intent, ALLOWED, "/repo")  # type: ignore[operator]
    expected = "yolo" if intent is Intent.FULL else "default"
    assert rendering.argv == ("--approval-mode", expected)


def opencode_decision(rules: dict[str, str], command: str) -> str:
    """OpenCode's rule: the last matching wildcard pattern wins."""
    decision = "ask"
    for pattern, value in rules.items():
        if fnmatch.fnmatchcase(command, pattern):
            decision = value
    return decision


@pytest.mark.parametrize(
    ("intent", "command", "expected"),
    [
        (Intent.ASK, "git status", "allow"),
        (Intent.ASK, "touch x", "deny"),
        (Intent.ASK, "git commit -m x", "deny"),
        (Intent.WORK, "git commit -m x", "allow"),
        (Intent.WORK, "python3 -m unittest discover", "allow"),
        (Intent.WORK, "git push origin main", "deny"),
        (Intent.WORK, "npm install", "deny"),
        (Intent.ACT_PR, "git push origin main", "allow"),
        (Intent.ACT_PR, "git push --force origin main", "deny"),
        (Intent.ACT_PR, "git push -f origin main", "deny"),
        (Intent.ACT_PR, "git push origin -f main", "deny"),
        (Intent.ACT_PR, "git push --force-with-lease origin main", "deny"),
        (Intent.ACT_PR, "git push origin +main", "deny"),
        (Intent.ACT_PR, "git rebase origin/main", "deny"),
    ],
)
def test_opencode_rules_last_match_wins(intent: Intent, command: str, expected: str) -> None:
    rendering = opencode.render(intent, ALLOWED, "/repo")
    permission = json.loads(rendering.env["OPENCODE_PERMISSION"])
    assert opencode_decision(permission["bash"], command) == expected
    assert permission["edit"] == ("allow" if intent in (Intent.WORK, Intent.ACT_PR) else "deny")


def test_opencode_full_allows_everything() -> None:
    permission = json.loads(opencode.render(Intent.FULL, (), "/r").env["OPENCODE_PERMISSION"])
    assert permission == {"edit": "allow", "bash": "allow", "webfetch": "allow"}


@pytest.mark.parametrize("intent", list(Intent))
def test_pi_and_hermes_take_full_only(intent: Intent) -> None:
    if intent is Intent.FULL:
        assert unguarded.render(intent, (), "/r").argv == ()
    else:
        with pytest.raises(ValueError, match="cannot be enforced"):
            unguarded.render(intent, (), "/r")
