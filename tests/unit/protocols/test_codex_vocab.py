"""Codex vocabularies, approval answers and launch building: pure functions, table-driven."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corral.adapters import _codex_launch as launch
from corral.events import ApprovalDecision, ToolKind
from corral.protocols import _codex_vocab
from corral.protocols._codex_vocab import (
    COMMAND_APPROVAL,
    FILE_APPROVAL,
    LEGACY_COMMAND_APPROVAL,
    LEGACY_PATCH_APPROVAL,
    approval_options,
    command_kind,
    error_code,
    normalize_approval_policy,
    normalize_sandbox,
)
from corral.protocols.codex_app_server import AppServerParser, approval_result, question_result


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("untrusted", "untrusted"),
        ("unlessTrusted", "untrusted"),  # app-server README of older builds
        ("unless-trusted", "untrusted"),
        ("on-request", "on-request"),
        ("onRequest", "on-request"),
        ("on_request", "on-request"),
        ("on-failure", "on-failure"),
        ("onFailure", "on-failure"),
        ("never", "never"),
        ("NEVER", "never"),
    ],
)
def test_approval_policy_spellings(spelling: str, expected: str) -> None:
    assert normalize_approval_policy(spelling) == expected


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("read-only", "read-only"),
        ("readOnly", "read-only"),
        ("workspace-write", "workspace-write"),
        ("workspaceWrite", "workspace-write"),
        ("workspace_write", "workspace-write"),
        ("danger-full-access", "danger-full-access"),
        ("dangerFullAccess", "danger-full-access"),
        (
            {"type": "workspaceWrite", "writableRoots": [], "networkAccess": False},
            "workspace-write",
        ),
        ({"type": "readOnly"}, "read-only"),
        ({"type": "externalSandbox", "networkAccess": "enabled"}, "danger-full-access"),
    ],
)
def test_sandbox_spellings(spelling: Any, expected: str) -> None:
    assert normalize_sandbox(spelling) == expected


@pytest.mark.parametrize("bad", ["sometimes", "", "ask"])
def test_unknown_policy_raises(bad: str) -> None:
    with pytest.raises(ValueError, match="approval policy"):
        normalize_approval_policy(bad)
    with pytest.raises(ValueError, match="sandbox"):
        normalize_sandbox(bad)


# What codex 0.171 offered for a command in the recorded approval transcripts.
OFFERED = [
    "accept",
    {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["/bin/bash", "-lc", "x"]}},
    "cancel",
]


@pytest.mark.parametrize(
    ("method", "params", "decision", "option_id", "wire"),
    [
        (COMMAND_APPROVAL, {"availableDecisions": OFFERED}, ApprovalDecision.ALLOW, None, "accept"),
        (
            COMMAND_APPROVAL,
            {"availableDecisions": OFFERED},
            ApprovalDecision.ALLOW_ALWAYS,
            None,
            OFFERED[1],
        ),
        # "decline" is not offered by 0.171 yet accepted (verified: the item ends "declined")
        (COMMAND_APPROVAL, {"availableDecisions": OFFERED}, ApprovalDecision.DENY, None, "decline"),
        (
            COMMAND_APPROVAL,
            {"availableDecisions": OFFERED},
            ApprovalDecision.CANCEL,
            None,
            "cancel",
        ),
        (
            COMMAND_APPROVAL,
            {"availableDecisions": OFFERED},
            ApprovalDecision.ALLOW,
            "acceptWithExecpolicyAmendment",
            OFFERED[1],
        ),
        (COMMAND_APPROVAL, {}, ApprovalDecision.ALLOW_ALWAYS, None, "acceptForSession"),
        (FILE_APPROVAL, {}, ApprovalDecision.ALLOW_ALWAYS, None, "acceptForSession"),
        (FILE_APPROVAL, {}, ApprovalDecision.DENY, None, "decline"),
        (LEGACY_COMMAND_APPROVAL, {}, ApprovalDecision.ALLOW, None, "approved"),
        (LEGACY_PATCH_APPROVAL, {}, ApprovalDecision.DENY, None, "denied"),
        (LEGACY_COMMAND_APPROVAL, {}, ApprovalDecision.CANCEL, None, "abort"),
    ],
)
def test_approval_result(
    method: str,
    params: dict[str, Any],
    decision: ApprovalDecision,
    option_id: str | None,
    wire: Any,
) -> None:
    assert approval_result(method, params, decision, option_id) == {"decision": wire}


def test_options_follow_what_codex_offers() -> None:
    opts = approval_options(COMMAND_APPROVAL, {"availableDecisions": [*OFFERED, "futureThing"]})
    assert [(o[0], o[2]) for o in opts] == [
        ("accept", ApprovalDecision.ALLOW),
        ("acceptWithExecpolicyAmendment", ApprovalDecision.ALLOW_ALWAYS),
        ("cancel", ApprovalDecision.CANCEL),
    ]


def test_file_change_request_names_the_file_from_its_item() -> None:
    parser = AppServerParser()
    item = {
        "type": "fileChange",
        "id": "call_1",
        "status": "inProgress",
        "changes": [{"path": "/repo/a.txt", "kind": {"type": "add"}, "diff": "hi\n"}],
    }
    started = parser.feed({"method": "item/started", "params": {"item": item}})
    assert started[0].kind is ToolKind.EDIT and started[0].file == "/repo/a.txt"
    (asked,) = parser.feed(
        {"id": 7, "method": FILE_APPROVAL, "params": {"itemId": "call_1", "reason": None}}
    )
    assert asked.request_id == "7" and asked.file == "/repo/a.txt"
    assert [o.id for o in asked.options] == ["accept", "acceptForSession", "decline", "cancel"]


def test_unknown_method_and_item_are_kept() -> None:
    parser = AppServerParser()
    (unknown,) = parser.feed({"method": "brand/new", "params": {"x": 1}})
    assert unknown.vendor_type == "brand/new" and unknown.raw == {"x": 1}
    (item,) = parser.feed({"method": "item/completed", "params": {"item": {"type": "hologram"}}})
    assert item.vendor_type == "item/completed:hologram"
    assert parser.feed({"id": 3, "result": {}}) == []  # responses are the driver's business
    assert parser.feed({"id": 4, "method": "item/tool/call", "params": {}}) == []


@pytest.mark.parametrize(
    ("cmd", "kind"),
    [
        ("/bin/bash -lc 'pytest -q'", ToolKind.TEST),
        ("npm test", ToolKind.TEST),
        ("cargo test --all", ToolKind.TEST),
        ("/bin/bash -lc 'printf hi > a.txt'", ToolKind.COMMAND),
        ("ls pytest-notes", ToolKind.COMMAND),
        ("/bin/bash -lc 'cd x && /usr/bin/pytest tests'", ToolKind.TEST),
        ("echo pytest", ToolKind.COMMAND),
    ],
)
def test_command_kind(cmd: str, kind: ToolKind) -> None:
    assert command_kind(cmd) is kind


@pytest.mark.parametrize(
    ("info", "code"),
    [
        ("usageLimitExceeded", "usageLimitExceeded"),
        ({"responseStreamDisconnected": {"httpStatusCode": 429}}, "responseStreamDisconnected:429"),
        ({"httpConnectionFailed": {"httpStatusCode": None}}, "httpConnectionFailed"),
        (None, None),
    ],
)
def test_error_code(info: Any, code: str | None) -> None:
    assert error_code(info) == code


# ── launch building ──

REDIRECT = ["--disable", "plugins", "-c", 'model_provider="corral"']


@pytest.mark.parametrize(
    ("extra", "argv_tail", "approval", "sandbox"),
    [
        (REDIRECT, REDIRECT, None, None),
        ([*REDIRECT, "-c", 'approval_policy="untrusted"'], REDIRECT, "untrusted", None),
        (
            ["-c", "sandbox_mode=read-only", *REDIRECT, "--config=approval_policy='never'"],
            REDIRECT,
            "never",
            "read-only",
        ),
        (  # the last occurrence wins, as in codex
            ["-c", 'approval_policy="never"', "-c", 'approval_policy="on-request"'],
            [],
            "on-request",
            None,
        ),
    ],
)
def test_app_server_launch_lifts_policy(
    extra: list[str], argv_tail: list[str], approval: str | None, sandbox: str | None
) -> None:
    plan = launch.app_server_launch(binary="codex", extra_args=extra, env={"A": "1"})
    assert plan.argv == ["codex", "app-server", *argv_tail]
    assert plan.env == {"A": "1"}
    assert launch.lift_policy(extra)[1:] == (approval, sandbox)


def test_thread_params_are_schema_shaped() -> None:
    start = launch.thread_params(
        cwd="/r", model="m", approval="unlessTrusted", sandbox="workspaceWrite", config=None
    )
    assert start == {
        "approvalPolicy": "untrusted",
        "cwd": "/r",
        "model": "m",
        "sandbox": "workspace-write",
    }
    resume = launch.thread_params(
        cwd=None, model=None, approval=None, sandbox=None, thread_id="thr"
    )
    assert resume == {"excludeTurns": True, "threadId": "thr"}


def test_turn_params() -> None:
    items = [{"type": "text", "text": "hi", "text_elements": []}]
    assert launch.turn_params(thread_id="t", items=items) == {"threadId": "t", "input": items}
    params = launch.turn_params(
        thread_id="t", items=items, model="m", effort="high", approval="never", sandbox="read-only"
    )
    assert params["model"] == "m" and params["effort"] == "high"
    assert params["approvalPolicy"] == "never"
    assert params["sandboxPolicy"] == {"type": "readOnly"}


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("full-access", ("never", "danger-full-access")),
        ("auto", ("on-request", "workspace-write")),
        ("read-only", ("on-request", "read-only")),
        ("untrusted", ("untrusted", None)),
        ("workspaceWrite", (None, "workspace-write")),
    ],
)
def test_permission_modes(mode: str, expected: tuple[str | None, str | None]) -> None:
    assert launch.permission_mode(mode) == expected


@pytest.mark.parametrize(
    ("kwargs", "tail"),
    [
        ({}, ["--", "do it"]),
        ({"resume_thread": "thr-1"}, ["resume", "thr-1", "--", "do it"]),
        ({"images": ["/a.png"]}, ["--image", "/a.png", "--", "do it"]),
    ],
)
def test_exec_launch(kwargs: dict[str, Any], tail: list[str]) -> None:
    plan = launch.exec_launch(binary="codex", prompt="do it", extra_args=REDIRECT, **kwargs)
    assert plan.argv[:4] == ["codex", "exec", "--json", "--skip-git-repo-check"]
    assert plan.argv[4:6] == ["-c", 'sandbox_mode="workspace-write"']
    assert plan.argv[6 : 6 + len(REDIRECT)] == REDIRECT
    assert plan.argv[6 + len(REDIRECT) :] == tail


def test_question_result_keys_answers_by_question_id() -> None:
    params = {
        "questions": [
            {"id": "q1", "question": "Colour?", "header": "Q"},
            {"id": "q2", "question": "Size?", "header": "Q"},
            {"id": "q3", "question": "Shape?", "header": "Q"},
        ]
    }
    assert question_result(params, {"Colour?": "blue", "q2": "L"}) == {
        "answers": {"q1": {"answers": ["blue"]}, "q2": {"answers": ["L"]}, "q3": {"answers": []}}
    }


def test_exec_launch_model_and_effort() -> None:
    plan = launch.exec_launch(binary="codex", prompt="p", model="m-1", effort="high")
    assert plan.argv[6:10] == ["-c", 'model="m-1"', "-c", 'model_reasoning_effort="high"']
    assert plan.argv[-2:] == ["--", "p"]


@given(
    st.lists(
        st.sampled_from(
            [
                "pytest",
                "/usr/bin/pytest",
                "go",
                "test",
                "npm",
                "run",
                "tox",
                "x",
                "-q",
                "bash -lc",
                "'",
                ";",
                "&&",
                "|",
                "(",
                "make",
                "cargo",
                "jest",
                "npx",
                "python3 -m",
                "ls",
                "/bin/",
            ]
        ),
        max_size=7,
    ).map(" ".join)
)
def test_command_kind_word_precheck_changes_nothing(command: str) -> None:
    """The quick test for runner words gives what splitting the command line gives."""
    slow = ToolKind.COMMAND
    for segment in _codex_vocab._SEGMENTS.split(command):
        first, _, rest = (segment or "").strip().partition(" ")
        words = f"{first.rsplit('/', 1)[-1]} {rest}".strip()
        if words and _codex_vocab._TEST_RE.match(words):
            slow = ToolKind.TEST
            break
    assert command_kind(command) is slow
