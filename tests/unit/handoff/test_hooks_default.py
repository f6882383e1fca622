"""An adapter that implements no hand-off hook is out of hand-off, loudly."""

from __future__ import annotations

import pytest

from corral.adapters.base import BaseAdapter
from corral.errors import UnsupportedOperation
from corral.testing.scripted_adapter import ScriptedAdapter as EchoAdapter


def test_base_adapter_has_no_handoff_by_default() -> None:
    assert issubclass(EchoAdapter, BaseAdapter)
    assert EchoAdapter.supports_handoff() is False
    assert EchoAdapter.handoff_kind is None


@pytest.mark.parametrize(
    ("hook", "args"),
    [
        ("scan_external_sessions", ()),
        ("is_cwd_externally_owned", ("/tmp", None)),
        ("make_transcript_mirror", ("/tmp", "sid")),
        ("latest_sid_for_cwd", ("/tmp",)),
    ],
)
def test_each_default_hook_names_itself(hook: str, args: tuple[object, ...]) -> None:
    with pytest.raises(UnsupportedOperation, match=hook):
        getattr(EchoAdapter, hook)(*args)


def test_resume_command_default_is_refused() -> None:
    with pytest.raises(UnsupportedOperation, match="terminal_resume_command"):
        EchoAdapter.terminal_resume_command("sid", cwd="/tmp")
