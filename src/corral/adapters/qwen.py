"""Qwen Code adapter, stream-json mode (adapter id ``qwen``; Qwen's ACP mode is a separate adapter).

Qwen Code 0.15.10 speaks Claude Code's stream-json, so the same driver and parser serve it. What
differs, as observed on the real CLI:

* no ``--permission-prompt-tool`` flag: in stream-json input mode it sends ``can_use_tool`` control
  requests on its own whenever ``--approval-mode default`` asks;
* approval modes are ``plan | default | auto-edit | yolo`` (Claude's names are mapped);
* ``--include-directories`` instead of ``--add-dir``; no ``--settings``, ``--fork-session`` or
  ``--effort`` (asking for them is a ConfigError, not a silent no-op);
* ``system/init`` says ``permission_mode`` and ``qwen_code_version``; ``result`` has no cost;
* the endpoint comes from ``OPENAI_*`` env plus ``--auth-type openai`` (see ``corral.redirect``).
"""

from __future__ import annotations

import functools
import itertools
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from ..errors import UnsupportedOperation
from ..events import ApprovalDecision, ApprovalRequested, Event
from ..intents import Intent
from ..intents import claude as intent_rules
from ._handoff_terminal import TerminalHandoff
from ._launch import Launch, StreamJsonRequest
from ._options import STANDARD_OPTIONS
from ._qwen_launch import APPROVAL_MODES as APPROVAL_MODES
from ._qwen_launch import DEFAULT_BINARY, build_launch
from ._qwen_launch import approval_mode as approval_mode
from ._stores import store_hooks
from ._stream_json import StreamJsonAdapter
from .base import Attachment


def _memory_key(tool_name: str, tool_input: Any) -> tuple[str, str]:
    """What "allow for this session" covers: a command by its first word, any other tool whole."""
    cmd = tool_input.get("command") if isinstance(tool_input, dict) else None
    return (tool_name, cmd.split()[0] if isinstance(cmd, str) and cmd.split() else "")


_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


@store_hooks("_store_qwen")
class QwenAdapter(TerminalHandoff, StreamJsonAdapter):
    agent_id = "qwen"
    display_name = "Qwen Code"
    cli_binary = "qwen"
    # Hand-off (seed 003; adapters/_handoff_terminal.py).
    handoff_kind = "persistent"
    handoff_processes = ("qwen",)
    handoff_session_flags = ("--resume", "-r", "--session-id")
    handoff_resume_args = ("--resume", "{sid}")
    default_binary: ClassVar[str] = DEFAULT_BINARY

    cap_image_input = True
    cap_thinking = True
    cap_permissions = True
    cap_cancel = True
    cap_input_during_turn = True
    cap_resume = True
    # Not claimed, each checked on 0.15.10: answers never reach ask_user_question over
    # stream-json (see answer_question); sub-agents run as background forks whose messages never
    # reach stdout; documents are flattened to text like every non-text block.
    cap_interact = False
    cap_subagents = False
    cap_documents = False

    provides_models = False
    models_unavailable = (
        "Qwen Code's stream-json initialize answer lists no models; the qwen-acp adapter lists them"
    )
    provides_usage = True
    # Qwen Code has no effort flag: refused when options are checked, before anything runs.
    supported_options = (STANDARD_OPTIONS - {"effort"}) | {"vendor_permission_mode"}

    enforceable_intents = frozenset(Intent)
    intent_renderer = intent_rules.render_qwen

    _attach_dir: Path | None = None

    _attach_seq = itertools.count(1)

    def build(self, request: StreamJsonRequest) -> Launch:
        return build_launch(request, base_env=self.base_env)

    def user_content(self, text: str, attachments: Sequence[Attachment]) -> list[dict[str, Any]]:
        """Qwen Code 0.15.10 turns every non-text block into JSON text, so files are written under
        the working directory (it reads ``@path`` references only inside its workspace) and
        referenced as ``@path``; its prompt processor makes images inline image parts of the model
        request. The directory is removed when the session stops."""
        if not attachments:
            return super().user_content(text, attachments)
        if self._attach_dir is None:
            self._attach_dir = Path(
                tempfile.mkdtemp(prefix=".corral-attachments-", dir=self.cwd or None)
            )
        refs = []
        for att in attachments:
            name = _SAFE_NAME.sub("_", att.name or Path(att.path or "file").name) or "file"
            path = self._attach_dir / f"{next(self._attach_seq)}-{name}"
            path.write_bytes(att.read_bytes())
            refs.append(f"@{path}")
        return [{"type": "text", "text": f"{text}\n\n{' '.join(refs)}"}]

    async def respond_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        *,
        option_id: str | None = None,
        updated_input: Any = None,
        message: str | None = None,
    ) -> None:
        """As Claude's, except that "allow for this session" is remembered by corral: Qwen Code
        0.15.10 ignores ``updatedPermissions`` in stream-json mode."""
        if (option_id or decision) == ApprovalDecision.ALLOW_ALWAYS:
            request = self.parser.pending_request(request_id)
            if request is not None:
                self._remembered.add(
                    _memory_key(request.get("tool_name", ""), request.get("input"))
                )
        await super().respond_approval(
            request_id, decision, option_id=option_id, updated_input=updated_input, message=message
        )

    def review(self, events: list[Event]) -> list[Event]:
        kept: list[Event] = []
        for event in events:
            if (
                isinstance(event, ApprovalRequested)
                and _memory_key(event.tool_name, event.input) in self._remembered
            ):
                self._actions.append(
                    functools.partial(
                        self.respond_approval, event.request_id, ApprovalDecision.ALLOW
                    )
                )
                continue
            kept.append(event)
        return kept

    async def stop(self) -> None:
        await super().stop()
        if self._attach_dir is not None:
            shutil.rmtree(self._attach_dir, ignore_errors=True)
            self._attach_dir = None

    interrupt_exits = True
    """Qwen Code 0.15.10 aborts its whole session on ``interrupt`` and exits (code 130): the turn
    is reported ``cancelled`` and the session continues in a new process resumed with
    ``--resume <session id>``; the next :meth:`send` waits for it."""

    async def answer_question(self, request_id: str, answers: dict[str, str]) -> None:
        """Unsupported: in stream-json mode Qwen Code 0.15.10 passes no answers to its
        ``ask_user_question`` tool (it only forwards ``updatedInput`` as the tool's arguments)."""
        raise UnsupportedOperation(self.agent_id, "answer_question")

    async def set_permission_mode(self, mode: str) -> None:
        await super().set_permission_mode(approval_mode(mode))
