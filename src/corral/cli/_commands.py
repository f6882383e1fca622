"""The root commands as data: each one's name, its module under ``corral.cli`` and one line of help.

Typer-free, so ``corral --help`` prints from it without importing Typer (:mod:`._root_help`).
``COMMANDS`` must say what the modules really declare: tests/unit/cli/test_lazy_commands.py loads
every module and compares, so the table cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommandSpec:
    """One root command: its module under ``corral.cli`` and the first paragraph of its help."""

    name: str
    module: str
    help: str


# In the order ``--help`` lists them (Typer lists plain commands before groups).
COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        "serve",
        "serve",
        "Run the local corral service (API and app) on an embedded SQLite database.",
    ),
    CommandSpec(
        "record",
        "record",
        "Run SCENARIO on the real AGENT CLI against the scripted model and store its protocol"
        " lines.",
    ),
    CommandSpec(
        "conformance",
        "conformance",
        "Run conformance scenarios and print the capability matrix.",
    ),
    CommandSpec("run", "run", "Send one prompt to an agent and stream its normalized events."),
    CommandSpec("chat", "chat", "Chat with an agent in the terminal on a persistent session."),
    CommandSpec(
        "attach",
        "attach",
        "Open OpenCode's TUI on a running corral session (watch, or take over).",
    ),
    CommandSpec(
        "launch", "launch", "Launch a harness against any provider; the proxy only when needed."
    ),
    CommandSpec(
        "wire", "wire", "Make an agent's interactive sessions in PROJECT report live to the board."
    ),
    CommandSpec(
        "unwire",
        "wire",
        "Take live-session reporting out of PROJECT, restoring its files exactly.",
    ),
    CommandSpec("schema", "schema", "Print corral's JSON Schemas."),
    CommandSpec("adapters", "adapters", "Adapters: the registry of agent CLIs corral can drive."),
    CommandSpec("agents", "agents", "Install and list the pinned agent CLIs."),
    CommandSpec(
        "fake-model", "fake_model", "The scripted fake model server used to test real CLIs."
    ),
    CommandSpec("sessions", "sessions", "Persistent agent sessions and their prompt queue."),
    CommandSpec(
        "proxy",
        "proxy",
        "The translating model proxy: any harness's wire API in front of any provider.",
    ),
    CommandSpec("job", "job", "Headless jobs: seed 002's run contract."),
)
