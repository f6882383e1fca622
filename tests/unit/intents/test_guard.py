"""corral's own approval guard: every (intent, action) decided from the table, no process."""

from __future__ import annotations

import pytest

from corral.events import ApprovalRequested, ToolKind
from corral.intents import ApprovalGuard, Intent, check_command, check_tool, is_force_push

ASK, REVIEW, WORK, ACT_PR, FULL = (
    Intent.ASK,
    Intent.REVIEW,
    Intent.WORK,
    Intent.ACT_PR,
    Intent.FULL,
)
ALLOWED = ("python3 -m unittest", "npm test")

# (command, intents that allow it)
COMMANDS: list[tuple[str, set[Intent]]] = [
    ("ls -la", {ASK, REVIEW, WORK, ACT_PR, FULL}),
    ("git status", {ASK, REVIEW, WORK, ACT_PR, FULL}),
    ("git log --oneline -5", {ASK, REVIEW, WORK, ACT_PR, FULL}),
    ("git diff --output=patch.txt", {FULL}),
    ("git log -o x", {FULL}),
    ("rg --pre ./evil pattern", {FULL}),
    ("touch x", {FULL}),
    ("echo hi > x", {FULL}),
    ("sh -c 'echo hi > x'", {FULL}),
    ("bash -lc 'git status'", {ASK, REVIEW, WORK, ACT_PR, FULL}),
    ("/bin/bash -lc 'touch x'", {FULL}),
    ("python3 -c \"open('x','w')\"", {FULL}),
    ("sed -i s/a/b/ f", {FULL}),
    ("ls; rm -rf /", {FULL}),
    ("ls && touch x", {FULL}),
    ("cat $(touch x)", {FULL}),
    ("FOO=1 ls", {FULL}),
    ("git -C /elsewhere commit -m x", {FULL}),
    ("git commit -m x", {WORK, ACT_PR, FULL}),
    ("git commit-tree abc", {FULL}),
    ("git add .", {WORK, ACT_PR, FULL}),
    ("python3 -m unittest test_x", {WORK, ACT_PR, FULL}),
    ("python3 -m unittestx", {FULL}),
    ("npm test -- --watch", {WORK, ACT_PR, FULL}),
    ("npm install", {FULL}),
    ("gh pr view 3", {REVIEW, ACT_PR, FULL}),
    ("gh pr review 3 --approve", {REVIEW, FULL}),
    ("gh pr comment 3 -b ok", {REVIEW, FULL}),
    ("gh api repos/o/r/pulls/3/comments", {ACT_PR, FULL}),
    ("git fetch origin", {ACT_PR, FULL}),
    ("git merge origin/main", {ACT_PR, FULL}),
    ("git push origin main", {ACT_PR, FULL}),
    ("git push -u origin feature", {ACT_PR, FULL}),
    ("git push", {ACT_PR, FULL}),
    ("git rebase origin/main", {FULL}),
    ("git rebase -i HEAD~3", {FULL}),
    ("git push --force origin main", {FULL}),
    ("git push -f origin main", {FULL}),
    ("git push origin -f main", {FULL}),
    ("git push -uf origin main", {FULL}),
    ("git push --force-with-lease origin main", {FULL}),
    ("git push --force-with-lease=main:abc origin main", {FULL}),
    ("git push --force-if-includes origin main", {FULL}),
    ("git push origin +main", {FULL}),
    ("git push origin +HEAD:main", {FULL}),
    ("git push origin HEAD:+main", {FULL}),
    ("git push origin :main", {FULL}),
    ("git push --delete origin main", {FULL}),
    ("git push --mirror", {FULL}),
    ("git push --prune origin", {FULL}),
    ("", {FULL}),
    ("'unterminated", {FULL}),
]


@pytest.mark.parametrize("intent", list(Intent))
@pytest.mark.parametrize(("command", "allowed_by"), COMMANDS)
def test_every_command_under_every_intent(
    intent: Intent, command: str, allowed_by: set[Intent]
) -> None:
    verdict = check_command(intent, ALLOWED, command)
    assert verdict.allowed is (intent in allowed_by), (intent, command, verdict.reason)
    assert verdict.reason


def test_argv_lists_are_checked_like_strings() -> None:
    assert check_command(ACT_PR, (), ["git", "push", "origin", "main"]).allowed
    assert not check_command(ACT_PR, (), ["git", "push", "-f", "origin", "main"]).allowed
    assert not check_command(ACT_PR, (), ["/bin/sh", "-c", "git push origin +main"]).allowed
    assert not check_command(WORK, (), ["echo", "a;b"]).allowed


@pytest.mark.parametrize(
    "words",
    [
        "git push --force",
        "git push -f",
        "git push --force-with-lease",
        "git push --force-if-includes",
        "git push origin +main",
        "git push origin +refs/heads/a:refs/heads/a",
    ],
)
def test_every_force_push_spelling_is_recognised(words: str) -> None:
    assert is_force_push(words.split())


def test_plain_pushes_are_not_force_pushes() -> None:
    assert not is_force_push(["git", "push", "origin", "main"])
    assert not is_force_push(["git", "push", "-u", "origin", "feature"])
    assert not is_force_push(["git", "status"])


@pytest.mark.parametrize(
    ("tool", "kind", "allowed_by"),
    [
        ("Write", ToolKind.OTHER, {WORK, ACT_PR, FULL}),
        ("Edit", ToolKind.EDIT, {WORK, ACT_PR, FULL}),
        ("mcp__ide__apply_patch", ToolKind.OTHER, {WORK, ACT_PR, FULL}),
        ("Read", ToolKind.READ, set(Intent)),
        ("Grep", ToolKind.SEARCH, set(Intent)),
        ("WebFetch", ToolKind.WEB, {WORK, ACT_PR, FULL}),
        ("Task", ToolKind.SUBAGENT, set(Intent)),
        ("ExitPlanMode", ToolKind.OTHER, {FULL}),
        ("mcp__db__drop", ToolKind.MCP, {FULL}),
    ],
)
def test_tools_by_kind_and_name(tool: str, kind: ToolKind, allowed_by: set[Intent]) -> None:
    for intent in Intent:
        verdict = check_tool(intent, (), tool_name=tool, kind=kind)
        assert verdict.allowed is (intent in allowed_by), (intent, tool)


def test_a_shell_call_is_checked_by_its_command_from_cmd_or_input() -> None:
    assert check_tool(WORK, (), tool_name="Bash", tool_input={"command": "git commit -m x"}).allowed
    assert not check_tool(WORK, (), tool_name="Bash", tool_input={"command": "git push"}).allowed
    assert not check_tool(WORK, (), tool_name="Bash", tool_input={"nothing": 1}).allowed
    assert check_tool(
        ASK, (), tool_name="shell", kind=ToolKind.COMMAND, cmd="/bin/bash -lc 'ls'"
    ).allowed


def test_the_guard_checks_approval_events_and_explains_denials() -> None:
    guard = ApprovalGuard(intent=ASK)
    event = ApprovalRequested(
        request_id="r1", tool_name="Write", kind=ToolKind.EDIT, file="/repo/hello.txt"
    )
    verdict = guard.check(event)
    assert not verdict.allowed
    message = guard.denial_message(event, verdict)
    assert "ask" in message and "/repo/hello.txt" in message and "Denied" in message
