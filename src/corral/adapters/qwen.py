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

import contextlib
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from ..errors import ConfigError, ProcessError, ProtocolError, UnsupportedOperation
from ._launch import Launch, StreamJsonRequest, merged_env
from ._stream_json import StreamJsonAdapter
from .base import Attachment

APPROVAL_MODES = {
    "default": "default",
    "plan": "plan",
    "acceptEdits": "auto-edit",
    "auto-edit": "auto-edit",
    "bypassPermissions": "yolo",
    "yolo": "yolo",
}
"""corral/Claude permission-mode names → Qwen Code ``--approval-mode`` values."""


def approval_mode(mode: str) -> str:
    try:
        return APPROVAL_MODES[mode]
    except KeyError:
        raise ConfigError(
            f"Qwen Code has no approval mode {mode!r} (one of {', '.join(APPROVAL_MODES)})"
        ) from None


def build_launch(request: StreamJsonRequest, *, base_env: Mapping[str, str]) -> Launch:
    """argv/env/cwd for one Qwen Code stream-json session. Pure."""
    unsupported = [
        name
        for name, asked in (
            ("fork_session", request.fork_session),
            ("settings", request.settings is not None),
            ("effort", bool(request.effort)),
        )
        if asked
    ]
    if unsupported:
        raise ConfigError(f"Qwen Code (stream-json) does not support: {', '.join(unsupported)}")
    argv = [
        request.binary,
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--include-partial-messages",
    ]
    if request.model:
        argv += ["--model", request.model]
    argv += ["--approval-mode", approval_mode(request.permission_mode or "default")]
    if request.resume:
        argv += ["--resume", request.resume]
    if request.session_id:
        argv += ["--session-id", request.session_id]
    for directory in request.add_dirs:
        argv += ["--include-directories", directory]
    argv += request.extra_args
    env = merged_env(base_env, request.env)
    if request.cwd:
        env["PWD"] = request.cwd
    return Launch(argv=tuple(argv), env=env, cwd=request.cwd)


_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


class QwenAdapter(StreamJsonAdapter):
    agent_id = "qwen"
    display_name = "Qwen Code"
    cli_binary = "qwen"
    default_binary: ClassVar[str] = "qwen"

    cap_images = True
    cap_image_input = True
    cap_permissions = True
    cap_interrupt = True
    cap_cancel = True
    cap_input_during_turn = True
    cap_resume = True
    cap_interact = (
        False  # no answers reach ask_user_question in stream-json mode (see answer_question)
    )

    provides_models = False
    provides_usage = True

    _attach_dir: Path | None = None

    def build(self, request: StreamJsonRequest) -> Launch:
        return build_launch(request, base_env=self.base_env)

    def launch_request(self) -> StreamJsonRequest:
        # Attachments travel as files: a private directory the CLI may read, created per adapter.
        if self._attach_dir is None:
            self._attach_dir = Path(tempfile.mkdtemp(prefix="corral-qwen-files-"))
        request = super().launch_request()
        return msgspec.structs.replace(request, add_dirs=(*request.add_dirs, str(self._attach_dir)))

    def user_content(self, text: str, attachments: Sequence[Attachment]) -> list[dict[str, Any]]:
        """Qwen Code 0.15.10 turns every non-text block into JSON text, so files are written to the
        attachment directory and referenced as ``@path``, which its prompt processor reads (images
        become inline image parts of the model request)."""
        if not attachments:
            return super().user_content(text, attachments)
        assert self._attach_dir is not None
        refs = []
        for n, att in enumerate(attachments, 1):
            name = _SAFE_NAME.sub("_", att.name or Path(att.path or "file").name) or "file"
            path = self._attach_dir / f"{n}-{name}"
            path.write_bytes(att.read_bytes())
            refs.append(f"@{path}")
        return [{"type": "text", "text": f"{text}\n\n{' '.join(refs)}"}]

    async def stop(self) -> None:
        await super().stop()
        if self._attach_dir is not None:
            shutil.rmtree(self._attach_dir, ignore_errors=True)
            self._attach_dir = None

    async def interrupt(self) -> None:
        """Qwen Code 0.15.10 aborts its whole session on ``interrupt`` and exits (code 130).

        The turn is reported ``cancelled`` and the session continues in a new process resumed
        with ``--resume <session id>``; the next :meth:`send` waits for it.
        """
        self._restart_on_exit = True
        with contextlib.suppress(ProcessError, ProtocolError):
            await self._control({"subtype": "interrupt"}, timeout=5.0)

    async def answer_question(self, request_id: str, answers: dict[str, str]) -> None:
        """Unsupported: in stream-json mode Qwen Code 0.15.10 passes no answers to its
        ``ask_user_question`` tool (it only forwards ``updatedInput`` as the tool's arguments)."""
        raise UnsupportedOperation(self.agent_id, "answer_question")

    async def set_permission_mode(self, mode: str) -> None:
        await super().set_permission_mode(approval_mode(mode))
