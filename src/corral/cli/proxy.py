"""``corral proxy``: the translating model proxy as a process.

``corral proxy serve`` binds 127.0.0.1 on a free port and prints its base URL as the first stdout
line and its bearer token as the second (``--json``: one line ``{"base_url": ..., "token": ...}``),
then serves until SIGTERM or SIGINT (exit 0). The upstream is a profile from
``<corral home>/providers.json`` (``--profile``) or given by flags. Exit 2 on a bad profile.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Annotated

import msgspec
import typer

from ..errors import ConfigError
from ._common import JSON_OPTION, print_json

app = typer.Typer(
    name="proxy",
    help="The translating model proxy: any harness's wire API in front of any provider.",
    no_args_is_help=True,
)

_LOOPBACK = ("127.0.0.1", "::1", "localhost")


@app.command("serve")
def serve(
    profile: Annotated[
        str | None,
        typer.Option(
            help="Provider profile name from <corral home>/providers.json.",
            envvar="CORRAL_PROXY_PROFILE",
        ),
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(
            help="Provider kind when no profile: anthropic, openai, openai-compatible, ollama, "
            "google, bedrock, vertex, azure.",
            envvar="CORRAL_PROXY_PROVIDER",
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Upstream base URL.", envvar="CORRAL_PROXY_BASE_URL")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="Target model (default: the client's model name).", envvar="CORRAL_PROXY_MODEL"
        ),
    ] = None,
    wire: Annotated[
        str | None,
        typer.Option(
            help="API for OpenAI-family providers: openai-chat or openai-responses.",
            envvar="CORRAL_PROXY_WIRE",
        ),
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the upstream key.")
    ] = None,
    auth_command: Annotated[
        str | None,
        typer.Option(help="Shell command printing a short-lived upstream token (cached 5 min)."),
    ] = None,
    region: Annotated[str | None, typer.Option(help="Bedrock / Vertex region.")] = None,
    project: Annotated[str | None, typer.Option(help="Vertex project.")] = None,
    port: Annotated[
        int, typer.Option(help="Port; 0 picks a free port.", envvar="CORRAL_PROXY_PORT")
    ] = 0,
    host: Annotated[str, typer.Option(help="Address to bind (loopback only).")] = "127.0.0.1",
    usage_log: Annotated[
        str | None,
        typer.Option(help="Usage JSONL path (default <corral home>/proxy-usage.jsonl; '' = off)."),
    ] = None,
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error.")] = "warning",
    json_output: Annotated[
        bool, typer.Option("--json", help="Print {base_url, token} as one JSON line.")
    ] = False,
) -> None:
    """Serve until SIGTERM/SIGINT; stdout: the base URL, then the token (``CORRAL_PROXY_TOKEN``
    sets it)."""
    from ..proxy import ProxyServer, ProxySettings, load_profile, parse_profile

    if host not in _LOOPBACK:
        raise ConfigError(f"the proxy binds loopback only, not {host!r}")
    if profile is not None:
        chosen = load_profile(profile)
    elif provider is not None:
        credential: dict[str, str] = {}
        if api_key_env:
            credential["api_key_env"] = api_key_env
        if auth_command:
            credential["auth_command"] = auth_command
        raw = {
            "provider": provider,
            "base_url": base_url,
            "model": model,
            "wire": wire,
            "region": region,
            "project": project,
            "credentials": [credential] if credential else [],
        }
        chosen = parse_profile({k: v for k, v in raw.items() if v is not None}, "cli", "--provider")
    else:
        raise ConfigError("give --profile NAME or --provider KIND")
    logging.basicConfig(level=log_level.upper(), format="%(message)s", stream=sys.stderr)
    settings = ProxySettings(profile=chosen, host=host, port=port, usage_log=usage_log)
    if os.environ.get("CORRAL_PROXY_TOKEN"):
        settings = msgspec.structs.replace(settings, token=os.environ["CORRAL_PROXY_TOKEN"])
    server = ProxyServer(settings)

    def ready(srv: ProxyServer) -> None:
        if json_output:
            sys.stdout.write(json.dumps({"base_url": srv.base_url, "token": srv.token}) + "\n")
        else:
            sys.stdout.write(f"{srv.base_url}\n{srv.token}\n")
        sys.stdout.flush()

    server.serve_forever(on_ready=ready)


@app.command("profiles")
def profiles(json_output: bool = JSON_OPTION) -> None:
    """List the provider profiles in providers.json (no secrets)."""
    from ..proxy import load_profiles

    rows = [
        {
            "name": name,
            "provider": p.provider,
            "model": p.model,
            "base_url": p.base_url,
            "credentials": [c.label or f"#{i}" for i, c in enumerate(p.credentials)],
        }
        for name, p in sorted(load_profiles().items())
    ]
    if json_output:
        print_json(rows)
        return
    for row in rows:
        typer.echo(f"{row['name']:<20} {row['provider']:<18} {row['model'] or '-'}")
