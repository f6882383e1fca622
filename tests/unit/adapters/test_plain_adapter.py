"""The plain driver on real processes (echo, cat, sh): one process per prompt, stdout as text,
exit codes as turn ends, cancel by the stop ladder, every wait bounded. Argv building is pure and
tested without a process."""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from corral.adapters.aider_plain import AiderPlainAdapter
from corral.adapters.base import construct
from corral.adapters.plain import (
    MAX_ARG_BYTES,
    PlainAdapter,
    argv_for,
    check_words,
    plain_class_for,
)
from corral.errors import ConfigError, InvalidPromptError, UnsupportedOperation
from corral.events import (
    ErrorEvent,
    Event,
    SessionEnded,
    SessionStarted,
    StopReason,
    TextDelta,
    TurnCompleted,
)
from corral.manifests import parse_manifest
from corral.registry import Registry

BUILTIN = Path(__file__).parents[3] / "src/corral/registry/builtin"


def registry() -> Registry:
    return Registry(entry_points=None, use_env=False, use_dropins=False)


def sh_class(script: str, protocol: str = "plain-argv") -> type[PlainAdapter]:
    """A plain agent from a custom manifest whose command is ``sh -c SCRIPT``."""
    manifest = parse_manifest(
        {
            "id": "sh-agent",
            "displayName": "sh",
            "executables": ["sh"],
            "launchCommand": "sh",
            "supportedPlatforms": ["linux"],
            "supportedApprovalPolicies": ["full"],
            "promptInjection": "manual",
            "supportsStructured": True,
            "streaming": {
                "preferred": {
                    "launchCommand": f"sh -c {shlex.quote(script)} sh",
                    "promptDelivery": "argv" if protocol == "plain-argv" else "json-rpc",
                    "protocol": protocol,
                    "sessionMode": "persistent-transcript",
                    "supportsFollowUp": True,
                }
            },
        },
        source="test",
    )
    return plain_class_for(manifest)


async def turn(adapter: PlainAdapter, prompt: str, timeout: float = 20) -> list[Event]:
    """Send ``prompt`` and collect events up to its TurnCompleted."""
    await adapter.send(prompt)
    events: list[Event] = []
    async with asyncio.timeout(timeout):
        async for event in adapter.stream():
            events.append(event)
            if isinstance(event, TurnCompleted):
                return events
    raise AssertionError("the stream ended before the turn")


def text(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def end(events: list[Event]) -> TurnCompleted:
    last = events[-1]
    assert isinstance(last, TurnCompleted)
    return last


# ── argv (pure) ──


@pytest.mark.parametrize(
    ("protocol", "words", "prompt", "expected"),
    [
        ("plain-argv", (), "hi there", ["bin", "-x", "hi there"]),
        ("plain-argv", ("--a",), "-n", ["bin", "-x", "--a", "-n"]),
        ("plain-argv", ("--message={prompt}", "--b"), "-q", ["bin", "-x", "--message=-q", "--b"]),
        ("plain-argv", ("{prompt}",), "$(rm -rf /)", ["bin", "-x", "$(rm -rf /)"]),
        ("plain-stdin", ("--c",), "ignored", ["bin", "-x", "--c"]),
    ],
)
def test_argv_puts_the_prompt_last_or_in_its_placeholder(
    protocol: Any, words: tuple[str, ...], prompt: str, expected: list[str]
) -> None:
    assert argv_for("bin", words, prompt, protocol=protocol, extra_args=["-x"]) == expected


def test_a_prompt_too_long_for_one_argument_is_refused() -> None:
    argv_for("bin", (), "x" * MAX_ARG_BYTES, protocol="plain-argv")
    with pytest.raises(InvalidPromptError, match="command-line argument"):
        argv_for("bin", (), "é" * MAX_ARG_BYTES, protocol="plain-argv")
    assert argv_for("bin", (), "x" * (4 * MAX_ARG_BYTES), protocol="plain-stdin") == ["bin"]


def test_launch_words_the_driver_cannot_honour_are_refused() -> None:
    with pytest.raises(ConfigError, match="plain-stdin writes the prompt"):
        check_words("plain-stdin", ["{prompt}"])
    with pytest.raises(ConfigError, match="once"):
        check_words("plain-argv", ["{prompt}", "x{prompt}"])
    with pytest.raises(ConfigError, match="not a plain protocol"):
        check_words("acp", [])


# ── the built-in manifests ──


def test_the_examples_are_runnable_and_claim_no_capability() -> None:
    reg = registry()
    for adapter_id, binary, protocol in (
        ("example-plain-argv", "echo", "plain-argv"),
        ("example-plain-stdin", "cat", "plain-stdin"),
    ):
        assert reg.runnable(adapter_id).runnable
        cls = reg.resolve(adapter_id)
        assert issubclass(cls, PlainAdapter)
        assert (cls.cli_binary, cls.plain_protocol, cls.plain_args) == (binary, protocol, ())
        assert cls.capabilities().enabled() == []


def test_aider_plain_launch_words_are_its_manifests() -> None:
    data = json.loads((BUILTIN / "aider-plain.json").read_text())
    words = shlex.split(data["streaming"]["preferred"]["launchCommand"])
    assert words == ["aider", *AiderPlainAdapter.plain_args]
    assert registry().resolve("aider-plain") is AiderPlainAdapter


def test_the_plain_driver_refuses_what_it_cannot_honour(tmp_path: Path) -> None:
    cls = registry().resolve("example-plain-argv")
    for option, value in (("model", "m"), ("effort", "high"), ("resume_session_id", "x")):
        with pytest.raises(UnsupportedOperation, match=option):
            construct(cls, cwd=str(tmp_path), **{option: value})


# ── real processes ──


async def test_echo_answers_each_prompt_with_a_fresh_process(tmp_path: Path) -> None:
    adapter = registry().resolve("example-plain-argv")(cwd=str(tmp_path))
    seen: list[list[str]] = []
    factory = adapter.transport_factory

    def noting(argv: Any, **kw: Any) -> Any:
        seen.append(list(argv))
        return factory(argv, **kw)

    adapter.transport_factory = noting  # type: ignore[method-assign]
    info = await adapter.start("s")
    assert info.capabilities.enabled() == []
    first = await turn(adapter, "Say hello.")
    assert isinstance(first[0], SessionStarted)
    assert text(first) == "Say hello.\n"
    assert end(first).stop_reason is StopReason.END_TURN
    second = await turn(adapter, "-n and more")
    assert text(second) == "-n and more\n"
    assert [argv[1:] for argv in seen] == [["Say hello."], ["-n and more"]]
    await adapter.stop()
    assert isinstance([e async for e in adapter.stream()][-1], SessionEnded)


async def test_cat_gets_the_prompt_on_stdin(tmp_path: Path) -> None:
    adapter = registry().resolve("example-plain-stdin")(cwd=str(tmp_path))
    await adapter.start("s")
    events = await turn(adapter, "line one\nline two ünïcode")
    assert text(events) == "line one\nline two ünïcode\n"
    assert end(events).stop_reason is StopReason.END_TURN
    await adapter.stop()


async def test_escapes_and_bad_bytes_in_stdout_never_reach_the_text(tmp_path: Path) -> None:
    script = r"printf '\033[31mred\033[0m \377ok\033]0;title\007\r\n'"
    adapter = sh_class(script)(cwd=str(tmp_path))
    await adapter.start("s")
    assert text(await turn(adapter, "x")) == "red \ufffdok\n"
    await adapter.stop()


async def test_a_non_zero_exit_fails_the_turn_with_the_code_and_stderr(tmp_path: Path) -> None:
    adapter = sh_class('printf partial; echo "no such model" >&2; exit 7')(cwd=str(tmp_path))
    await adapter.start("s")
    events = await turn(adapter, "x")
    assert text(events) == "partial"
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert "exited with code 7" in error.message and "no such model" in error.message
    done = end(events)
    assert (done.stop_reason, done.error) == (StopReason.ERROR, "the agent exited with code 7")
    assert (await adapter.query_status())["stderr_tail"] == "no such model\n"
    # The session goes on: the next prompt runs a new process.
    assert end(await turn(adapter, "y")).stop_reason is StopReason.ERROR
    await adapter.stop()


async def test_interrupt_climbs_the_ladder_and_ends_the_turn_cancelled(tmp_path: Path) -> None:
    adapter = sh_class("printf 'Once upon'; exec sleep 30")(cwd=str(tmp_path))
    await adapter.start("s")
    await adapter.send("story")
    stream = adapter.stream()
    async with asyncio.timeout(10):
        while not isinstance(await anext(stream), TextDelta):
            pass
    started = time.monotonic()
    await adapter.interrupt()
    async with asyncio.timeout(5):
        while not isinstance(event := await anext(stream), TurnCompleted):
            pass
    assert time.monotonic() - started < 2.0  # SIGINT ends sleep at once
    assert event.stop_reason is StopReason.CANCELLED
    status = await adapter.query_status()
    assert status["busy"] is False
    await adapter.stop()


async def test_a_cli_that_ignores_sigint_is_killed_within_the_bound(tmp_path: Path) -> None:
    adapter = sh_class("trap '' INT; printf waiting; while :; do sleep 0.1; done")(
        cwd=str(tmp_path)
    )
    await adapter.start("s")
    await adapter.send("x")
    started = time.monotonic()
    async with asyncio.timeout(10):
        async for event in adapter.stream():
            if isinstance(event, TextDelta):
                break
    await adapter.interrupt()
    async with asyncio.timeout(10):
        async for event in adapter.stream():
            if isinstance(event, TurnCompleted):
                break
    assert event.stop_reason is StopReason.CANCELLED
    assert time.monotonic() - started < 8.0
    await adapter.stop()


async def test_a_background_child_holding_stdout_does_not_hold_the_turn(tmp_path: Path) -> None:
    adapter = sh_class("printf done; sleep 30 &")(cwd=str(tmp_path))
    await adapter.start("s")
    started = time.monotonic()
    events = await turn(adapter, "x")
    assert text(events) == "done"
    assert end(events).stop_reason is StopReason.END_TURN
    assert time.monotonic() - started < 6.0
    # The reader gave up before EOF: the stdout pipe is closed anyway, not left to the collector.
    proc = adapter._transport._proc  # type: ignore[union-attr]
    assert proc is not None and proc._transport.get_pipe_transport(1).is_closing()  # type: ignore[attr-defined]
    await adapter.stop()


async def test_a_prompt_during_a_turn_is_refused_and_stop_kills_the_turn(tmp_path: Path) -> None:
    adapter = sh_class("exec sleep 30")(cwd=str(tmp_path))
    await adapter.start("s")
    await adapter.send("x")
    with pytest.raises(UnsupportedOperation, match="input during a turn"):
        await adapter.send("y")
    async with asyncio.timeout(10):
        await adapter.stop()
    events = [e async for e in adapter.stream()]
    assert isinstance(events[-2], TurnCompleted)
    assert events[-2].stop_reason is StopReason.CANCELLED
    assert isinstance(events[-1], SessionEnded) and events[-1].reason.value == "killed"


async def test_a_stdin_agent_that_never_reads_does_not_block_a_small_prompt(tmp_path: Path) -> None:
    adapter = sh_class("exit 0", "plain-stdin")(cwd=str(tmp_path))
    await adapter.start("s")
    assert end(await turn(adapter, "unread")).stop_reason is StopReason.END_TURN
    await adapter.stop()


async def test_aider_plain_keeps_its_session_in_a_private_history_file(tmp_path: Path) -> None:
    ids: list[str] = []
    adapter = AiderPlainAdapter(
        cwd=str(tmp_path),
        binary="/bin/true",
        history_root=str(tmp_path / "h"),
        on_session_id=ids.append,
    )
    info = await adapter.start("s")
    assert ids == [adapter.session_id] and info.agent_session_id == adapter.session_id
    argv = adapter.build_argv("-hello")
    history = str(tmp_path / "h" / f"{adapter.session_id}.chat.history.md")
    assert argv[:4] == ["/bin/true", "--chat-history-file", history, "--restore-chat-history"]
    assert argv[-1] == "--message=-hello"
    assert (tmp_path / "h").stat().st_mode & 0o077 == 0
    resumed = AiderPlainAdapter(
        cwd=str(tmp_path),
        binary="/bin/true",
        history_root=str(tmp_path / "h"),
        resume_session_id="nope",
    )
    with pytest.raises(ConfigError, match="no chat history"):
        await resumed.start("s")
    with pytest.raises(ConfigError, match="not an aider-plain session id"):
        AiderPlainAdapter(cwd=str(tmp_path), binary="/bin/true", resume_session_id="../x")


async def test_the_examples_conformance_run_says_why_each_scenario_cannot_apply() -> None:
    from corral.testing.conformance import run_conformance
    from corral.testing.conformance._targets import builtin_targets
    from corral.testing.conformance._types import Outcome

    targets, missing = builtin_targets(["example-plain-argv", "example-plain-stdin"], registry())
    assert missing == {}
    results = await run_conformance(targets)
    assert {r.outcome for r in results} == {Outcome.UNSUPPORTED}
    reasons = {(r.agent, r.scenario): r.reason or "" for r in results}
    assert "echo calls no model" in reasons[("example-plain-argv", "text")]
    assert "cat calls no model" in reasons[("example-plain-stdin", "follow-up")]
    assert "does not declare the cancel" in reasons[("example-plain-argv", "cancel-mid-turn")]


def test_aider_plain_session_continues_in_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    argv = AiderPlainAdapter.terminal_resume_command("abc123", cwd=str(tmp_path))
    history = str(tmp_path / "plain" / "aider" / "abc123.chat.history.md")
    assert argv == ["aider", "--chat-history-file", history, "--restore-chat-history"]
    with pytest.raises(ConfigError):
        AiderPlainAdapter.terminal_resume_command("../../etc", cwd=str(tmp_path))


async def test_the_session_layer_queues_prompts_for_a_plain_agent(tmp_path: Path) -> None:
    """Two prompts sent at once: the second waits in the durable queue for the first turn."""
    from corral.sessions import AdapterResolver, PromptState, SessionManager, SessionSpec

    cat = registry().resolve("example-plain-stdin")
    resolver = AdapterResolver({"example-plain-stdin": cat}, use_env=False, use_entry_points=False)
    async with SessionManager(tmp_path / "corral.db", resolver=resolver) as manager:
        record = await manager.create_session(
            SessionSpec(adapter_id="example-plain-stdin", cwd=str(tmp_path))
        )
        first = manager.send(record.id, "first prompt")
        second = manager.send(record.id, "second prompt")
        ends: list[TurnCompleted] = []
        deltas: list[str] = []

        async def follow() -> None:
            async for env in manager.subscribe(record.id):
                if isinstance(env.event, TextDelta):
                    deltas.append(env.event.text)
                if isinstance(env.event, TurnCompleted):
                    ends.append(env.event)
                    if len(ends) == 2:
                        return

        await asyncio.wait_for(follow(), 20)
        assert [e.stop_reason for e in ends] == [StopReason.END_TURN] * 2
        assert "".join(deltas) == "first prompt\nsecond prompt\n"
        for prompt in (first, second):
            assert manager.queue.get(prompt.id).state == PromptState.DELIVERED
