"""``corral serve`` — the local service."""

from __future__ import annotations

import typer

from ._common import err_console


def register(root: typer.Typer) -> None:
    @root.command("serve")
    def serve(
        host: str = typer.Option("127.0.0.1", help="Address to bind (loopback by default)."),
        port: int = typer.Option(8765, help="Port to listen on (0 picks a free one)."),
        db: str | None = typer.Option(
            None, help="SQLite database path (default under CORRAL_HOME)."
        ),
    ) -> None:
        """Run the local corral service (API and app) on an embedded SQLite database."""
        from ..server import Settings, create_app, run_server

        settings = Settings.from_env(host=host, port=port, db_path=db)
        app = create_app(settings)
        err_console.print(f"corral serving on http://{host}:{port} (db: {settings.db_path})")
        if app.state.token and not settings.token:
            err_console.print(f"bearer token for mutating requests: {app.state.token}")
        run_server(app, host=host, port=port)
