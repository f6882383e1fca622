"""The shell adapter on a scripted fake TUI (``_fake_tui.py``) under a real PTY: the injection
modes, the settle heuristic, cancel, the turn bound, and custom manifests running as shell grade."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.adapters._shell_profile import shell_profile
from corral.adapters.shell import ShellAdapter, injection, shell_class_for
from corral.errors import ConfigError, SessionError, UnsupportedOperation
from corral.events import StopReason, TextDelta, TurnCompleted
from corral.manifests import parse_manifest
from corral.registry import Registry
from corral.testing.conformance._session import LiveSession, Turn

FAKE_TUI = str(Path(__file__).with_name("_fake_tui.py"))
SHELL: dict[str, Any] = {
    "readyPattern": r"^> ?$",
    "settleMs": 300,
    "dropPatterns": [r"^Tokens: ", r"^>\s*$", r"^\^C"],
}


def _manifest(injection_mode: str = "stdin", **shell: Any) -> dict[str, Any]:
    return {
        "id": "fake-tui",
        "displayName": "Fake TUI",
        "executables": [sys.executable],
        "launchCommand": shlex.join([sys.executable, FAKE_TUI]),
        "supportedPlatforms": ["linux"],
        "supportedApprovalPolicies": ["full"],
        "promptInjection": injection_mode,
        "setupHint": "tests/unit/shell/_fake_tui.py",
        "presentation": {"shell": {**SHELL, **shell}},
    }


def _adapter(tmp_path: Path, injection_mode: str = "stdin", **shell: Any) -> ShellAdapter:
    cls = shell_class_for(parse_manifest(_manifest(injection_mode, **shell)))
    return cls(cwd=str(tmp_path))


async def _turn(s: LiveSession, prompt: str) -> Turn:
    await s.send(prompt)
    return await s.turn(20)


async def test_stdin_mode_types_the_prompt_and_reads_back_only_the_answer(tmp_path: Path) -> None:
    async with LiveSession(_adapter(tmp_path)) as s:
        turn = await _turn(s, "hello there")
    assert turn.end is not None and turn.end.stop_reason is StopReason.END_TURN
    # typed (not pasted), colours gone, the echo, the spinner and the token line dropped
    assert turn.text == "typed: hello there (lines=1)"
    t_delta, t_end = turn.time_of(TextDelta), turn.time_of(TurnCompleted)
    assert t_delta is not None and t_end is not None and t_delta < t_end


async def test_paste_then_enter_sends_one_bracketed_paste(tmp_path: Path) -> None:
    async with LiveSession(_adapter(tmp_path, "paste_then_enter", pasteDelayMs=50)) as s:
        turn = await _turn(s, "first line\nsecond line")
    # one input with its newline kept: the program saw ESC[200~ … ESC[201~ and then Enter
    assert turn.text == "pasted: first line second line (lines=2)"


async def test_manual_mode_refuses_to_type(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "manual")
    async with LiveSession(adapter) as s:
        before = adapter.parser.display()
        with pytest.raises(UnsupportedOperation, match="promptInjection is 'manual'"):
            await s.send("hello")
        assert adapter.parser.display() == before and not adapter.parser.in_turn


def test_the_injection_bytes() -> None:
    assert injection("stdin", "hi", paste_delay=0.2) == [(b"hi\r", 0.0)]
    assert injection("paste_then_enter", "a\nb", paste_delay=0.2) == [
        (b"\x1b[200~a\nb\x1b[201~", 0.2),
        (b"\r", 0.0),
    ]
    with pytest.raises(UnsupportedOperation, match="manual"):
        injection("manual", "hi", paste_delay=0.2)


async def test_the_ready_pattern_holds_the_turn_through_a_silence(tmp_path: Path) -> None:
    # The fake TUI goes quiet for 1.5 s before answering a "quiet" prompt: longer than settleMs.
    async with LiveSession(_adapter(tmp_path)) as s:
        turn = await _turn(s, "quiet please")
    assert turn.text == "typed: quiet please (lines=1)"


async def test_without_a_ready_pattern_the_silence_ends_the_turn(tmp_path: Path) -> None:
    # The same program with no ready pattern: quiet alone decides, and the turn ends too early.
    # (This is why the built-in manifests name one.)
    async with LiveSession(_adapter(tmp_path, readyPattern=None)) as s:
        turn = await _turn(s, "quiet please")
    assert "typed: quiet please" not in turn.text


async def test_follow_up_turns_carry_only_their_own_text(tmp_path: Path) -> None:
    async with LiveSession(_adapter(tmp_path)) as s:
        first = await _turn(s, "one")
        second = await _turn(s, "two")
    assert first.text == "typed: one (lines=1)"
    assert second.text == "typed: two (lines=1)"


async def test_ctrl_c_cancels_the_turn_and_the_next_prompt_works(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path)
    async with LiveSession(adapter) as s:
        await s.send("slow story")
        while not isinstance((await s.next_event(10))[1], TextDelta):
            pass
        started = time.monotonic()
        await adapter.interrupt()
        turn = await s.turn(5)
        assert time.monotonic() - started < 2.0
        assert turn.end is not None and turn.end.stop_reason is StopReason.CANCELLED
        after = await _turn(s, "again")
    assert after.text == "typed: again (lines=1)"


async def test_a_turn_that_never_settles_ends_in_error_at_its_bound(tmp_path: Path) -> None:
    async with LiveSession(_adapter(tmp_path, turnTimeoutS=1)) as s:
        await s.send("slow story")
        turn = await s.turn(10)
    assert turn.end is not None and turn.end.stop_reason is StopReason.ERROR
    assert "did not settle within 1 s" in (turn.end.error or "")


async def test_a_second_prompt_during_a_turn_is_refused(tmp_path: Path) -> None:
    async with LiveSession(_adapter(tmp_path)) as s:
        await s.send("slow story")
        with pytest.raises(Exception, match="one prompt at a time"):
            await s.send("too soon")
        await s.adapter.interrupt()


async def test_start_is_bounded_and_says_what_the_screen_showed(tmp_path: Path) -> None:
    never_ready = {
        **_manifest(startTimeoutS=1),
        "launchCommand": shlex.join(
            [
                sys.executable,
                "-c",
                "import time; print('loading KEY=sk-ant-abcdefghijklmnopqrstuvwx', flush=True); time.sleep(30)",
            ]
        ),
    }
    adapter = shell_class_for(parse_manifest(never_ready))(cwd=str(tmp_path))
    started = time.monotonic()
    with pytest.raises(SessionError, match="no ready screen within 1 s: loading") as info:
        await adapter.start("s")
    assert time.monotonic() - started < 5
    assert "sk-ant-abcdefghijklmnopqrstuvwx" not in str(info.value)  # redacted
    assert adapter.transport is not None and adapter.transport.returncode is not None
    gone = {**_manifest(), "launchCommand": shlex.join([sys.executable, "-c", "print('bye')"])}
    with pytest.raises(SessionError, match="exited before its terminal was ready: bye"):
        await shell_class_for(parse_manifest(gone))(cwd=str(tmp_path)).start("s")


def test_a_profile_that_cannot_be_honoured_is_refused() -> None:
    with pytest.raises(ConfigError, match="readyPattern"):
        shell_class_for(parse_manifest(_manifest(readyPattern="(unclosed")))
    with pytest.raises(ConfigError, match="settleMs"):
        shell_class_for(parse_manifest(_manifest(settleMs="fast")))


def test_a_model_without_model_args_is_refused(tmp_path: Path) -> None:
    cls = shell_class_for(parse_manifest(_manifest()))
    with pytest.raises(UnsupportedOperation, match="model"):
        cls(cwd=str(tmp_path), model="m")


def test_a_custom_manifest_without_a_protocol_runs_as_shell_grade(tmp_path: Path) -> None:
    registry = Registry(home=tmp_path, entry_points=None, use_env=False, use_dropins=False)
    registry.add_custom(_manifest())
    cls = registry.resolve("fake-tui")
    assert issubclass(cls, ShellAdapter) and cls.capabilities().cancel
    broken = {**_manifest(readyPattern="(unclosed"), "id": "broken-tui"}
    registry.add_custom(broken)
    fresh = Registry(home=tmp_path, entry_points=None, use_env=False, use_dropins=False)
    assert fresh.runnable("broken-tui").reason is not None
    assert "readyPattern" in (fresh.runnable("broken-tui").reason or "")


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "readyPattern",
                "busyPattern",
                "settleMs",
                "pasteDelayMs",
                "turnTimeoutS",
                "cancelKeys",
                "modelArgs",
                "dropPatterns",
                "stripPatterns",
                "columns",
                "rows",
            ]
        ),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(-5, 500),
            st.floats(allow_nan=False),
            st.text(max_size=8),
            st.lists(st.text(max_size=6), max_size=3),
        ),
    )
)
def test_any_shell_section_is_a_profile_or_a_config_error(section: dict[str, Any]) -> None:
    manifest = parse_manifest({**_manifest(), "presentation": {"shell": section}})
    try:
        profile = shell_profile(manifest)
    except ConfigError as exc:
        message = str(exc)
    else:
        message = ""
    if message:
        assert "presentation.shell." in message  # the refusal names the field
        return
    assert profile.settle >= 0.05 and profile.turn_timeout >= 1 and profile.cancel_keys
    assert profile.columns >= 20 and profile.rows >= 5
