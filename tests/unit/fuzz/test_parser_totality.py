"""Property: no mutated line a CLI could print makes a parser raise, or yields an event the store
cannot keep or ``corral run`` cannot show. Mutations start from the recorded transcripts."""

from __future__ import annotations

import io
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from corral.cli._run_render import HumanRenderer, JsonRenderer
from corral.events import Envelope, Event
from corral.testing import fuzz

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"

settings.register_profile(
    "corral-fuzz",
    max_examples=200,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ = settings.get_profile("corral-fuzz")


class _Renderers:
    """Both renderers of ``corral run``, writing into memory."""

    def __init__(self) -> None:
        self.human = HumanRenderer(
            out=Console(file=io.StringIO(), force_terminal=False),
            err=Console(file=io.StringIO(), force_terminal=False),
        )
        self.json = JsonRenderer(out=io.StringIO())
        self.seq = 0

    def __call__(self, event: Event) -> None:
        self.seq += 1
        envelope = Envelope(
            session_id="s",
            seq=self.seq,
            ts=datetime(2026, 1, 1, tzinfo=UTC),
            source="fuzz",
            event=event,
        )
        self.human.show(envelope)
        self.json.show(envelope)


@pytest.fixture(scope="module", params=sorted(fuzz.TARGETS))
def target_recordings(request: pytest.FixtureRequest) -> tuple[fuzz.Target, list[fuzz.Recording]]:
    target = fuzz.TARGETS[request.param]
    recs = [r for r in fuzz.recordings(target, TRANSCRIPTS) if r.out_lines]
    assert recs, f"no recorded transcripts for {target.name}"
    return target, recs


@FUZZ
@given(
    pick=st.integers(min_value=0, max_value=10**9),
    kinds=st.lists(st.sampled_from(fuzz.MUTATIONS), min_size=1, max_size=2),
    seed=st.integers(min_value=0, max_value=2**32),
    primed=st.booleans(),
)
def test_mutated_line_never_escapes(
    target_recordings: tuple[fuzz.Target, list[fuzz.Recording]],
    pick: int,
    kinds: list[str],
    seed: int,
    primed: bool,
) -> None:
    target, recs = target_recordings
    rec = recs[pick % len(recs)]
    outs = [i for i, (direction, _) in enumerate(rec.entries) if direction == "out"]
    index = outs[(pick // len(recs)) % len(outs)]
    rng = random.Random(seed)
    parser = fuzz.primed_parser(target, rec, index) if primed else target.make_parser()
    data = fuzz.mutate(rec.entries[index][1], kinds[0], rng)
    findings = fuzz.check_line(target, parser, data, render=_Renderers())
    if len(kinds) > 1:  # a second broken line, to the same parser, after the first
        second = fuzz.mutate(rec.entries[outs[-1]][1], kinds[1], rng)
        findings += fuzz.check_line(target, parser, second, render=_Renderers())
    assert not findings, findings[0]


@pytest.mark.parametrize("name", sorted(fuzz.TARGETS))
@pytest.mark.parametrize("kind", fuzz.MUTATIONS)
def test_every_mutation_applies_to_every_protocol(name: str, kind: str) -> None:
    """The mutations really break lines: a mutated line differs from the recorded one."""
    target = fuzz.TARGETS[name]
    rec = next(r for r in fuzz.recordings(target, TRANSCRIPTS) if r.out_lines)
    line = rec.out_lines[0]
    rng = random.Random(7)
    mutated = {fuzz.mutate(line, kind, rng) for _ in range(20)}
    assert mutated - {fuzz._dumps(line)}


@pytest.mark.parametrize("name", sorted(fuzz.TARGETS))
def test_finish_after_garbage_is_total(name: str) -> None:
    target = fuzz.TARGETS[name]
    parser = target.make_parser()
    for data in (b"[1]", b'{"type": [1]}', b"null", b"\xff\xfe", b"[" * 1500 + b"]" * 1500):
        assert not fuzz.check_line(target, parser, data)
    ended = parser.finish() if hasattr(parser, "finish") else parser.prompt_result(None)
    assert all(fuzz.unstorable(e) is None for e in ended)


HOSTILE = ("[/]", "[bold", "  \n ", "\x1b[31m", "")


@pytest.mark.parametrize("text", HOSTILE)
def test_corral_run_renders_hostile_text_as_text(text: str) -> None:
    """Every event type, every string field set to text rich could take for markup."""
    from corral.events import (
        AgentInfo,
        ApprovalRequested,
        EndReason,
        Error,
        FileDiff,
        Question,
        QuestionAnswered,
        QuestionAsked,
        SessionEnded,
        SessionStarted,
        StopReason,
        TextComplete,
        TextDelta,
        ToolCallCompleted,
        ToolCallFailed,
        ToolCallStarted,
        ToolCallUpdated,
        TurnCompleted,
        Warning,
    )

    events: list[Event] = [
        SessionStarted(agent=AgentInfo(agent_id=text, name=text), cwd=text),
        TextDelta(text=text),
        TextComplete(text=text, parent_call_id=text),
        TextComplete(text=text, message_id="other"),
        ToolCallStarted(call_id=text, name=text, title=text, input={"x": text}),
        ToolCallUpdated(call_id=text, title=text),
        ToolCallCompleted(call_id=text, name=text),
        ToolCallFailed(call_id="c", error=text, name=text),
        FileDiff(path=text, diff=text or None),
        FileDiff(path=text),
        ApprovalRequested(request_id=text, tool_name=text, title=text),
        QuestionAsked(request_id=text, questions=(Question(question=text, options=(text,)),)),
        QuestionAnswered(request_id=text, answers={text: text}),
        TurnCompleted(stop_reason=StopReason.ERROR, error=text or "x"),
        Warning(message=text),
        Error(message=text),
        SessionEnded(reason=EndReason.FAILED, message=text, stderr_tail=text),
    ]
    render = _Renderers()
    for event in events:
        render(event)
    printed = render.human.err.file.getvalue()  # type: ignore[attr-defined]
    if text.startswith("["):
        assert text in printed  # shown, not swallowed as a style
