"""``corral serve`` — the local service.

It binds first, then prints the URL it really listens on (``--port 0`` picks a free port) and a
one-time login URL: opening it gives the browser the ``corral_auth`` cookie, so nobody pastes the
token. CLI clients read the token from the corral home (see docs/security.md).
"""

from __future__ import annotations

import dataclasses
import sys

import typer

from ..errors import ConfigError


def register(root: typer.Typer) -> None:
    @root.command("serve")
    def serve(
        host: str = typer.Option("127.0.0.1", help="Address to bind (loopback by default)."),
        port: int = typer.Option(8765, help="Port to listen on (0 picks a free one)."),
        db: str | None = typer.Option(
            None, help="SQLite database path (default under CORRAL_HOME)."
        ),
        open_browser: bool = typer.Option(
            False, "--open", help="Open the web app (logged in) in the default browser."
        ),
    ) -> None:
        """Run the local corral service (API and app) on an embedded SQLite database.

        Prints the URL it listens on and a one-time login URL for the browser. Every request needs
        the token (file `token` in CORRAL_HOME, or CORRAL_TOKEN) or the login cookie.
        """
        from .._paths import ensure_private_dir, ensure_token, home_dir, token_path
        from ..server import Settings, create_app, run_server
        from ..server._login import login_url
        from ..server._run import base_url, bind

        settings = Settings.from_env(host=host, port=port, db_path=db)
        ensure_private_dir(home_dir())
        settings = dataclasses.replace(settings, token=settings.token or ensure_token())
        app = create_app(settings)
        try:
            sock = bind(settings.host, settings.port)
        except OSError as exc:
            raise ConfigError(f"cannot listen on {settings.host}:{settings.port}: {exc}") from exc
        url = base_url(sock)
        codes = app.state.login_codes
        # The printed link stays valid until used (or the service stops): it is for a person who
        # may open it much later; codes issued over the API expire after the configured TTL.
        lines = [
            f"corral serving on {url} (db: {settings.db_path})",
            f"open in your browser (one-time link): {login_url(url, codes.issue(ttl=None))}",
            f"CLI clients use the token in {token_path()}"
            if not _token_from_env()
            else "CLI clients use CORRAL_TOKEN",
        ]
        sys.stderr.write("\n".join(lines) + "\n")
        sys.stderr.flush()
        if open_browser:
            _open(login_url(url, codes.issue()))
        run_server(app, host=settings.host, port=settings.port, sock=sock)


def _token_from_env() -> bool:
    import os

    return bool(os.environ.get("CORRAL_TOKEN"))


def _open(url: str) -> None:
    import webbrowser

    try:
        opened = webbrowser.open(url)
    except Exception:  # a broken browser setup must not stop the service
        opened = False
    if not opened:
        sys.stderr.write("no browser could be opened; open the link above yourself\n")
        sys.stderr.flush()
