#!/usr/bin/env python3
"""Record the real Codex CLI's protocol traffic for the parser fixtures.

    python scripts/record_codex.py                       # every scenario, both modes
    python scripts/record_codex.py --mode exec text      # one mode, chosen scenarios

Each recording is one conformance scenario (``corral.testing.conformance``) run through the corral
driver against the scripted model server, with the transport tap on. It writes

    tests/fixtures/transcripts/codex/<version>/<scenario>.jsonl        (app-server)
    tests/fixtures/transcripts/codex/<version>/exec-<scenario>.jsonl   (codex exec --json)

one JSON object per protocol line, in order — ``{"dir": "in"|"out", "line": {...}}`` (``"text"``
for a line that is not JSON) and ``{"dir": "exit", "code": N}`` when a process ends — plus a
``.meta.json`` with the CLI version, mode, scenario, its model script, argv, date and the outcome.
A scenario that does not pass is not written. These files are never edited by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from corral import agents  # noqa: E402
from corral._version import __version__  # noqa: E402
from corral.adapters.base import BaseAdapter, parse_version  # noqa: E402
from corral.errors import ConfigError  # noqa: E402
from corral.testing import FakeModelServer  # noqa: E402
from corral.testing import _transcript as transcript  # noqa: E402
from corral.testing._catalogue import scenario_name  # noqa: E402
from corral.testing._transcript import Tape  # noqa: E402
from corral.testing.conformance._runner import run_scenario  # noqa: E402
from corral.testing.conformance._scenarios import SCENARIOS  # noqa: E402
from corral.testing.conformance._targets import SPECS, build_target  # noqa: E402
from corral.testing.conformance._types import Outcome, Target  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "realcli"))
from codex_extra_scenarios import (  # noqa: E402
    EXTRA_SCENARIOS,
    FILE_CHANGE_SCENARIOS,
    extra_target,
    with_catalog,
    write_catalog,
)

OUT = REPO / "tests" / "fixtures" / "transcripts" / "codex"

MODES = {
    "app-server": (
        "codex",
        "",
        [
            "text",
            "tool-shell",
            "approval-allow",
            "approval-deny",
            "cancel-mid-turn",
            "follow-up",
            "input-during-turn",
            "resume-after-exit",
            "image-input",
            "error-429",
        ],
    ),
    "exec": ("codex-exec", "exec-", ["text", "tool-shell", "resume-after-exit", "error-429"]),
    # app-server with a model catalog that gives fake-model apply_patch (file-change items)
    "apply-patch": ("codex", "", ["file-change-allow", "file-change-deny"]),
    # app-server, scenarios of tests/realcli/codex_extra_scenarios.py
    "extra": (
        "codex",
        "",
        [
            "shell-output",
            "subagent",
            "thinking",
            "error-400",
            "question",
            "interrupt-during-approval",
            "approval-always",
        ],
    ),
}


class Recording(Tape):
    """The transcript tape plus the argv of every process started (for the meta file)."""

    def __init__(self) -> None:
        super().__init__()
        self.argvs: list[list[str]] = []


def tapped(target: Target, recording: Recording) -> Target:
    """The same target, its adapters built with the recording's tap."""
    make = target.make_adapter

    def make_adapter(**kwargs: Any) -> BaseAdapter:
        adapter = make(**kwargs)
        adapter.tap = recording.tap  # type: ignore[attr-defined]
        return adapter

    return Target(
        agent=target.agent,
        adapter_class=target.adapter_class,
        make_adapter=make_adapter,
        unsupported=target.unsupported,
        turn_timeout=target.turn_timeout,
        extra=target.extra,
        scripts=target.scripts,
    )


class ArgvSpy:
    """Notes the argv of every process the driver starts (for the meta file)."""

    def __init__(self, recording: Recording) -> None:
        from corral._process import _transport

        self._cls = _transport.ProcessTransport
        self._orig = self._cls.start
        recording_argvs = recording.argvs
        orig = self._orig

        async def start(transport: Any) -> None:
            recording_argvs.append(list(transport.argv))
            await orig(transport)

        self._cls.start = start  # type: ignore[method-assign]

    def restore(self) -> None:
        self._cls.start = self._orig  # type: ignore[method-assign]


def write_recording(stem: Path, recording: Recording, meta: dict[str, Any]) -> None:
    """Through the one transcript writer: ``stem`` is ``<out>/<cli>/<version>/<scenario>``."""
    transcript.write(
        stem.parent.parent.parent,
        stem.parent.parent.name,
        stem.parent.name,
        stem.name,
        recording.entries(),
        meta,
    )


async def record(mode: str, names: list[str], version: str, out: Path) -> int:
    agent, prefix, default_names = MODES[mode]
    target = build_target(SPECS[agent])
    scenarios = dict(SCENARIOS)
    catalog_dir = None
    if mode == "apply-patch":
        import tempfile

        catalog_dir = tempfile.TemporaryDirectory(prefix="codex-catalog-")
        target = with_catalog(target, write_catalog(Path(catalog_dir.name) / "models.json"))
        scenarios = dict(FILE_CHANGE_SCENARIOS)
    elif mode == "extra":
        target = extra_target(target)
        scenarios = dict(EXTRA_SCENARIOS)
    failures = 0
    async with FakeModelServer() as server:
        for name in names or default_names:
            if name not in scenarios:
                print(f"{mode:10s} {name:20s} skipped: not a scenario of this mode")
                continue
            recording = Recording()
            spy = ArgvSpy(recording)
            try:
                result = await run_scenario(tapped(target, recording), scenarios[name], server)
            finally:
                spy.restore()
            print(f"{mode:10s} {name:20s} {result.outcome.value} {result.reason or ''}")
            if result.outcome is not Outcome.PASS:
                failures += 1
                continue
            write_recording(
                out / f"{prefix}{name}",
                recording,
                {
                    "cli": "codex",
                    "version": version,
                    "mode": mode,
                    "adapter": target.adapter_class.__name__,
                    "scenario": name,
                    "script": target.script_for(scenarios[name]),
                    "argv": recording.argvs,
                    "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
                    "corral_version": __version__,
                    "model_requests": len(server.requests),
                    "command": f"python scripts/record_codex.py --mode {mode} {name}",
                },
            )
    if catalog_dir is not None:
        catalog_dir.cleanup()
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=[*MODES, "both"], default="both")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("scenarios", nargs="*")
    args = parser.parse_args()
    try:  # one catalogue: a retired name is refused with the name that replaced it
        args.scenarios = [scenario_name(name) for name in args.scenarios]
    except ConfigError as exc:
        sys.exit(f"error: {exc}")
    binary = agents.locate("codex")
    if binary is None:
        sys.exit("codex is not installed: corral agents install codex")
    import subprocess

    version = parse_version(
        subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout
    )
    out = args.out or OUT / str(version)
    modes = list(MODES) if args.mode == "both" else [args.mode]
    failures = 0
    for mode in modes:
        failures += asyncio.run(record(mode, args.scenarios, str(version), out))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
