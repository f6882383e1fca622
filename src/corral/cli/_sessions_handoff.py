"""``corral sessions link | handoff | resume``: the hand-off between a terminal and corral.

Registered on the ``sessions`` group (docs/handoff.md). ``link`` binds a corral session to a vendor
session found in the agent's own store (``corral sessions list --external`` lists them);
``handoff`` is "continue in terminal": it releases the idle session and prints the command to run
(``--shell`` prints only that line, for ``eval`` or a copy); ``resume`` reconnects a session
after checking the vendor's store, or with ``--fresh`` starts a new session carrying a summary
when the vendor has lost it.
"""

from __future__ import annotations

import typer

from ._common import JSON_OPTION
from .sessions import URL_OPTION, _out, app, call


@app.command("link")
def link(
    agent: str = typer.Argument(..., help="The adapter id (claude-code, codex, qwen, …)."),
    sid: str = typer.Argument(..., help="The vendor's session id."),
    cwd: str | None = typer.Option(None, "--cwd", help="Its project, when the store has none."),
    url: str | None = URL_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Link a corral session to a session started in the agent's own terminal CLI."""
    data = call(url, "POST", "/api/handoff/links", {"adapter_id": agent, "sid": sid, "cwd": cwd})
    session = data["session"]
    human = (
        f"{session['id']}  {session['state']}  linked to {agent} {sid} in {data['link']['cwd']}"
        "\n(mirrored while a terminal drives it; prompts wait until it exits)"
    )
    _out(data, as_json, human)


@app.command("handoff")
def handoff(
    session_id: str,
    shell: bool = typer.Option(False, "--shell", help="Print only the shell line to run."),
    url: str | None = URL_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Continue in terminal: release the idle session and print the command that resumes it."""
    data = call(url, "POST", f"/api/sessions/{session_id}/handoff/terminal")
    if shell and not as_json:
        typer.echo(data["shell"])
        return
    human = f"{session_id}: released to the terminal; run:\n  {data['shell']}"
    _out(data, as_json, human)


@app.command("resume")
def resume(
    session_id: str,
    fresh: bool = typer.Option(
        False, "--fresh", help="Start a new session carrying a summary instead (the old one stays)."
    ),
    url: str | None = URL_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Reconnect a failed or disconnected session; its queue carries on.

    The agent's stored session is checked first (id, directory, the last turn corral saw); when
    it is not the one expected the resume is refused, never silently forked."""
    data = call(url, "POST", f"/api/sessions/{session_id}/resume", {"fresh": fresh})
    human = (
        f"{data['id']}: {data['state']} (a fresh session carrying a summary of {session_id})"
        if fresh
        else f"{session_id}: {data.get('state', 'ok')}"
    )
    _out(data, as_json, human)
