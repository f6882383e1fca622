"""The one scenario catalogue: every scenario name corral records or checks, and what it shows.

A name means one behaviour everywhere: in the conformance suite (``corral conformance -s NAME``),
in ``corral record AGENT NAME``, in ``scripts/record_codex.py`` and in the fixture files
``tests/fixtures/transcripts/<cli>/<version>/NAME.jsonl`` (Codex's exec mode prefixes ``exec-``).
The conformance suite and every recorder take their names from here; a test checks that none of
them uses a name outside it and that every fixture file is named after it.

Names that an earlier catalogue used for the same behaviour are *retired*: asking for one is an
error naming its replacement (see ``docs/decisions/022-one-scenario-catalogue.md``).

The fake model's built-in scripts (``corral fake-model scenarios``: ``write-file``, ``slow-text``,
…) are not in this catalogue: they name what the model replies, not what an agent session does.
"""

from __future__ import annotations

from ..errors import ConfigError

CATALOGUE: dict[str, str] = {
    "text": "a streamed text answer; deltas arrive before the turn ends",
    "tool-write": "the model writes hello.txt with the agent's file tool",
    "tool-shell": "the model runs a shell command; the call goes started → completed",
    "shell-output": "a shell command's output streams back to the client",
    "tool-error": "a tool call fails (a read of a missing file) and the turn goes on",
    "approval-allow": "an action needs the user's approval; the user allows it and it runs",
    "approval-deny": "an action needs the user's approval; the user denies it and it does not run",
    "approval-always": "allow-always: the same action is not asked about again",
    "file-change-allow": "an edit (Codex apply_patch) needs approval; allowed, the file is written",
    "file-change-deny": "an edit (Codex apply_patch) needs approval; denied, the file stays absent",
    "interrupt-during-approval": "an interrupt while an approval is pending withdraws the request",
    "question": "the agent asks the user a question and receives the answer",
    "cancel-mid-turn": "a streaming turn is interrupted, ends cancelled, and the next prompt works",
    "follow-up": "a second prompt on the same session carries the first turn",
    "input-during-turn": "a prompt sent while a turn streams reaches the model",
    "resume-after-exit": "a new process resumes the earlier conversation by its session id",
    "image-input": "a prompt with a PNG attachment; the model receives an image block",
    "usage": "the agent reports the turn's token usage",
    "thinking": "the model thinks before it answers; the reasoning reaches the client",
    "subagent": "the model delegates to a sub-agent whose traffic nests under the delegating call",
    "todo": "the agent writes a todo list",
    "error-400": "the provider refuses the request (400, not retried); the turn fails",
    "error-429": "the provider rate-limits the request (429); surfaced or retried to an answer",
    "retry-compact": "every request fails (500); Pi's scheduled retry is cancelled by a compaction",
}
"""Every scenario name, with the behaviour it shows."""

RETIRED: dict[str, str] = {
    "cancel": "cancel-mid-turn",
    "image": "image-input",
    "api-error": "error-400",
    "error": "error-400",
    "turn-failed": "error-400",
    "rate-limit": "error-429",
    "prompt-during-turn": "input-during-turn",
    "command-output": "shell-output",
    "reasoning": "thinking",
    "question-enabled": "question",
}
"""Names earlier catalogues used, mapped to the one name the behaviour has now."""


def scenario_name(name: str) -> str:
    """``name`` if the catalogue has it, ``all`` as is; a retired or unknown name is an error."""
    if name == "all" or name in CATALOGUE:
        return name
    if name in RETIRED:
        raise ConfigError(f"scenario {name!r} is now called {RETIRED[name]!r}")
    raise ConfigError(f"no scenario {name!r} (one of {', '.join(CATALOGUE)})")
