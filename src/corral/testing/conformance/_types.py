"""Result types of the conformance suite and the target description."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import msgspec

from ...adapters.base import BaseAdapter


class Outcome(StrEnum):
    PASS = "pass"
    """The scenario ran on the real CLI and every expectation held."""
    FAIL = "fail"
    """The scenario ran and an expectation did not hold (or it crashed, or timed out)."""
    UNSUPPORTED = "unsupported"
    """The adapter does not claim the capability the scenario needs; ``reason`` says which."""


class ScenarioResult(msgspec.Struct, frozen=True, kw_only=True):
    agent: str
    scenario: str
    outcome: Outcome
    reason: str | None = None
    seconds: float = 0.0
    declared: bool | None = None
    """Whether the adapter declares the capability this scenario exercises (None: no capability)."""

    @property
    def contradicts_declaration(self) -> bool:
        """A declared capability whose scenario fails: always a test failure."""
        return self.declared is True and self.outcome is Outcome.FAIL


@dataclass
class Target:
    """One agent under test: how to build its adapter pointed at the scripted model server.

    ``make_adapter(base_url, home, cwd, **init)`` returns a constructed, not yet started adapter.
    ``unsupported`` names scenarios this target cannot run with the reason (e.g. a CLI that has no
    question tool); a capability the adapter *declares* must not be listed there.
    """

    agent: str
    adapter_class: type[BaseAdapter]
    make_adapter: Callable[..., BaseAdapter]
    unsupported: Mapping[str, str] = field(default_factory=dict)
    turn_timeout: float = 60.0
    extra: dict[str, Any] = field(default_factory=dict)
    scripts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per-scenario model scripts that replace the scenario's own (the checks stay the same)."""

    def script_for(self, scenario: Any) -> dict[str, Any]:
        """The model script ``scenario`` plays on this target."""
        return dict(self.scripts.get(scenario.name, scenario.script))


@dataclass
class Workspace:
    """Per-scenario directories: an isolated HOME and a fresh git repository as the cwd."""

    home: Path
    repo: Path
