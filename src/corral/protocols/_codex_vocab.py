"""Codex's wire vocabularies, shared by the app-server and exec parsers and the driver.

Spellings differ per surface and per release (protocols.md §2.3): the CLI and config say
``untrusted`` / ``workspace-write``, app-server v2 says the same in kebab-case for modes and
camelCase for policy objects (``workspaceWrite``), older app-server builds said ``unlessTrusted``.
The ``normalize_*`` helpers accept all of them and return the current kebab-case.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from ..events import ApprovalDecision, ToolKind

COMMAND_APPROVAL = "item/commandExecution/requestApproval"
FILE_APPROVAL = "item/fileChange/requestApproval"
LEGACY_COMMAND_APPROVAL = "execCommandApproval"
LEGACY_PATCH_APPROVAL = "applyPatchApproval"
USER_INPUT_REQUEST = "item/tool/requestUserInput"
"""codex 0.171 sends it only with ``--enable default_mode_request_user_input`` or in plan mode."""

ApprovalPolicy = Literal["untrusted", "on-failure", "on-request", "never"]
"""When codex asks before running something (``on-failure`` is deprecated, gone from 0.171's
schema, still accepted here for older configs)."""
SandboxMode = Literal["read-only", "workspace-write", "danger-full-access"]
"""What a command may touch: nothing, the workspace, or everything."""

_POLICY_ALIASES: dict[str, ApprovalPolicy] = {
    "untrusted": "untrusted",
    "unlesstrusted": "untrusted",
    "unless-trusted": "untrusted",
    "on-failure": "on-failure",
    "onfailure": "on-failure",
    "on-request": "on-request",
    "onrequest": "on-request",
    "never": "never",
}
_SANDBOX_ALIASES: dict[str, SandboxMode] = {
    "read-only": "read-only",
    "readonly": "read-only",
    "workspace-write": "workspace-write",
    "workspacewrite": "workspace-write",
    "danger-full-access": "danger-full-access",
    "dangerfullaccess": "danger-full-access",
}


def normalize_approval_policy(value: str) -> ApprovalPolicy:
    """``"unlessTrusted"``, ``"on_request"``… → the current spelling; ``ValueError`` if unknown."""
    key = value.strip().replace("_", "-").lower()
    found = _POLICY_ALIASES.get(key) or _POLICY_ALIASES.get(key.replace("-", ""))
    if found is None:
        raise ValueError(f"unknown codex approval policy {value!r}: {get_args(ApprovalPolicy)}")
    return found


def normalize_sandbox(value: str | dict[str, Any]) -> SandboxMode:
    """A mode string in any spelling, or a ``SandboxPolicy`` object (``{"type": …}``) → the mode."""
    if isinstance(value, dict):
        value = str(value.get("type", ""))
        if value == "externalSandbox":
            return "danger-full-access"  # codex itself does not sandbox; the host does
    key = value.strip().replace("_", "-").lower()
    found = _SANDBOX_ALIASES.get(key) or _SANDBOX_ALIASES.get(key.replace("-", ""))
    if found is None:
        raise ValueError(f"unknown codex sandbox mode {value!r}: {get_args(SandboxMode)}")
    return found


# ── approvals ──────────────────────────────────────────────────────────────────────────────────

_V2_MEANING = {
    "accept": ("Allow", ApprovalDecision.ALLOW),
    "acceptForSession": ("Allow for this session", ApprovalDecision.ALLOW_ALWAYS),
    "acceptWithExecpolicyAmendment": ("Always allow this command", ApprovalDecision.ALLOW_ALWAYS),
    "applyNetworkPolicyAmendment": ("Allow this host", ApprovalDecision.ALLOW_ALWAYS),
    "decline": ("Deny", ApprovalDecision.DENY),
    "cancel": ("Deny and stop the turn", ApprovalDecision.CANCEL),
}
_LEGACY_MEANING = {
    "approved": ("Allow", ApprovalDecision.ALLOW),
    "approved_for_session": ("Allow for this session", ApprovalDecision.ALLOW_ALWAYS),
    "approved_execpolicy_amendment": ("Always allow this command", ApprovalDecision.ALLOW_ALWAYS),
    "denied": ("Deny", ApprovalDecision.DENY),
    "abort": ("Deny and stop the turn", ApprovalDecision.CANCEL),
}
_FILE_DEFAULT = ("accept", "acceptForSession", "decline", "cancel")
_LEGACY_DEFAULT = ("approved", "approved_for_session", "denied", "abort")
_DEFAULT_WIRE = {
    ApprovalDecision.ALLOW: "accept",
    ApprovalDecision.ALLOW_ALWAYS: "acceptForSession",
    ApprovalDecision.DENY: "decline",
    ApprovalDecision.CANCEL: "cancel",
}
_LEGACY_WIRE = {
    ApprovalDecision.ALLOW: "approved",
    ApprovalDecision.ALLOW_ALWAYS: "approved_for_session",
    ApprovalDecision.DENY: "denied",
    ApprovalDecision.CANCEL: "abort",
}


def _is_legacy(method: str) -> bool:
    return method in (LEGACY_COMMAND_APPROVAL, LEGACY_PATCH_APPROVAL)


def _offered(method: str, params: dict[str, Any]) -> list[tuple[str, Any]]:
    """(option id, wire value) for every decision the request offers, in the server's order."""
    if _is_legacy(method):
        return [(v, v) for v in _LEGACY_DEFAULT]
    offered = params.get("availableDecisions")
    if not isinstance(offered, list) or not offered:
        offered = list(_FILE_DEFAULT)
    out: list[tuple[str, Any]] = []
    for value in offered:
        if isinstance(value, str):
            out.append((value, value))
        elif isinstance(value, dict) and len(value) == 1:
            out.append((next(iter(value)), value))
    return out


def approval_options(
    method: str, params: dict[str, Any]
) -> list[tuple[str, str, ApprovalDecision]]:
    """(id, label, meaning) of each offered decision; unknown ones are skipped."""
    table = _LEGACY_MEANING if _is_legacy(method) else _V2_MEANING
    return [(oid, *table[oid]) for oid, _ in _offered(method, params) if oid in table]


def decision_value(
    method: str, params: dict[str, Any], decision: ApprovalDecision, option_id: str | None
) -> Any:
    """The wire value of ``decision`` (or of the offered option ``option_id``)."""
    offered = _offered(method, params)
    if option_id is not None:
        for oid, value in offered:
            if oid == option_id:
                return value
    table = _LEGACY_MEANING if _is_legacy(method) else _V2_MEANING
    for oid, value in offered:
        if oid in table and table[oid][1] is decision:
            return value
    return (_LEGACY_WIRE if _is_legacy(method) else _DEFAULT_WIRE)[decision]


# ── tools and errors ───────────────────────────────────────────────────────────────────────────

_TEST_RE = re.compile(
    r"(python3? -m pytest|pytest|py\.test|tox|nox|npx jest|jest|vitest|mocha|go test|"
    r"cargo test|npm (run )?test|pnpm (run )?test|yarn test|make test|ctest|rspec|phpunit)(\s|$)"
)
_SEGMENTS = re.compile(r"[;&|()'\"]+|\b(?:ba|z)?sh\s+-l?c\b")
_RUNNER_WORDS = re.compile(r"test|tox|nox|jest|mocha|rspec|phpunit")
"""Every alternative of ``_TEST_RE`` contains one of these: a command with none is no test run."""


def command_kind(command: str) -> ToolKind:
    """``test`` when a segment of the command line starts a test runner, else ``command``."""
    if not isinstance(command, str) or _RUNNER_WORDS.search(command) is None:
        return ToolKind.COMMAND
    for segment in _SEGMENTS.split(command):
        first, _, rest = (segment or "").strip().partition(" ")
        words = f"{first.rsplit('/', 1)[-1]} {rest}".strip()  # /usr/bin/pytest → pytest
        if words and _TEST_RE.match(words):
            return ToolKind.TEST
    return ToolKind.COMMAND


def error_code(info: Any) -> str | None:
    """``codexErrorInfo`` (a string, or ``{"httpConnectionFailed": {...}}``) → a short code."""
    if isinstance(info, str):
        return info
    if isinstance(info, dict) and info:
        name = next(iter(info))
        detail = info[name]
        status = detail.get("httpStatusCode") if isinstance(detail, dict) else None
        return f"{name}:{status}" if status is not None else str(name)
    return None
