"""``corral attach SESSION``: open the agent's own terminal UI on a session corral is driving.

Today this is OpenCode: the ``opencode`` driver runs ``opencode serve`` and records (under
``<corral home>/attach/``) the server URL, password and OpenCode session id; ``corral attach``
replaces itself with ``opencode attach URL --session ID --dir CWD`` (the password goes by
environment, never on the command line). The person at the TUI can watch or type while corral
keeps observing the same session through the server's event stream.

SESSION is corral's session id or OpenCode's ``ses_…`` id. ``--list`` shows what can be attached,
``--print`` shows the command instead of running it. Exit codes: 0 · 4 no such running session.
"""

from __future__ import annotations

import os
import shlex

import typer

from ._common import JSON_OPTION, console, print_json


def register(root: typer.Typer) -> None:
    @root.command("attach")
    def attach(
        session: str = typer.Argument("", help="corral session id or OpenCode ses_… id."),
        list_: bool = typer.Option(False, "--list", help="List sessions that can be attached."),
        print_only: bool = typer.Option(
            False, "--print", help="Print the attach command instead of running it."
        ),
        json_out: bool = JSON_OPTION,
    ) -> None:
        """Open OpenCode's TUI on a running corral session (watch, or take over)."""
        from ..adapters._opencode_attach import find_record, list_records
        from ..errors import SessionError

        if list_ or not session:
            records = [r for r in list_records() if r.alive()]
            rows = [
                {
                    "session_id": r.session_id,
                    "agent_session_id": r.agent_session_id,
                    "url": r.url,
                    "cwd": r.cwd,
                }
                for r in records
            ]
            if json_out:
                print_json(rows)
            elif not rows:
                console.print("no attachable sessions")
            for row in rows if not json_out else []:
                console.print(
                    f"{row['session_id']}  {row['agent_session_id']}  {row['url']}  {row['cwd']}"
                )
            return
        try:
            record = find_record(session)
        except SessionError as exc:
            exc.exit_code = 4
            raise
        argv = record.command()
        if print_only or json_out:
            if json_out:
                print_json(
                    {"argv": argv, "url": record.url, "agent_session_id": record.agent_session_id}
                )
            else:
                console.print(shlex.join(argv), highlight=False)
            return
        env = {**os.environ, **record.env()}
        os.execvpe(argv[0], argv, env)
