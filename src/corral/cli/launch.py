"""``corral launch <harness> [provider] [flags] [-- harness args]``: the unified launcher.

Starts a harness, interactive (its own TUI, passed through) or one-shot (``-p``), against any
provider, with the translating proxy in between only when the harness cannot speak the provider
natively (seed 004; see ``docs/launch.md``). Everything after ``--`` goes to the harness verbatim.

Exit codes: the harness's own — a native launch without ``--observe``/``--json`` becomes the
harness (``execve``, decision 025); a supervised one returns 128 + N when signal N killed it and
130 after SIGINT; 2 bad usage; 60–76 the launcher's error catalog (``docs/launch.md``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core

from ._launch_fast import PROXY_LEVELS, parse, run, split_harness_args


class _SplitAtDashes(typer.core.TyperCommand):
    """Everything after the first ``--`` is the harness's (never a positional of ours).

    ``corral launch`` normally never gets here: ``corral.cli.main`` runs a plain command line
    through the lean entry (``_launch_fast``) without building the Typer app. When this command
    does run (the Typer app built in-process, as in tests), a plain command line is still parsed
    by that entry's table (typer's per-parameter coercion imports pydantic); anything unusual
    (``--help``, an unknown option, a bad value) goes to typer's parser, which reports it.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        args, harness_args = split_harness_args(args)
        ctx.meta["corral_harness_args"] = harness_args
        params = parse(args)
        if params is None:
            return super().parse_args(ctx, args)
        ctx.params = {str(p.name): p.default for p in self.params} | params
        ctx.args = []
        return []


def register(root: typer.Typer) -> None:
    @root.command(
        "launch",
        cls=_SplitAtDashes,
        epilog="Exit codes: the harness's; 2 usage; launcher errors 60-76 (docs/launch.md).",
    )
    def launch(
        ctx: typer.Context,
        harness: Annotated[
            str,
            typer.Argument(
                help="claude, codex, gemini, opencode, qwen, pi, hermes, kilo, an ACP agent…"
            ),
        ],
        provider: Annotated[
            str | None,
            typer.Argument(
                help="api, anthropic, openai, google, bedrock, vertex, azure, foundry, oauth, "
                "local, ollama, custom (default: the harness's own)."
            ),
        ] = None,
        model: Annotated[
            str | None, typer.Option("--model", "-m", help="Model id (provider format).")
        ] = None,
        api_key: Annotated[str | None, typer.Option(help="API key of the provider.")] = None,
        api_base: Annotated[str | None, typer.Option(help="Custom API base URL.")] = None,
        region: Annotated[str | None, typer.Option(help="Cloud region (Bedrock, Vertex).")] = None,
        project: Annotated[str | None, typer.Option(help="Cloud project (Vertex).")] = None,
        resource_group: Annotated[
            str | None, typer.Option(help="Azure / Foundry resource.")
        ] = None,
        endpoint_name: Annotated[
            str | None, typer.Option(help="Named deployment / endpoint.")
        ] = None,
        transport: Annotated[
            str | None,
            typer.Option(
                "--transport",
                "-t",
                help="Wire the harness speaks (for 'custom': the endpoint's): anthropic, "
                "openai-chat, openai-responses, google.",
            ),
        ] = None,
        profile: Annotated[
            str | None, typer.Option(help="Provider profile from <corral home>/providers.json.")
        ] = None,
        auth_command: Annotated[
            str | None, typer.Option(help="Command that prints a bearer token on stdout.")
        ] = None,
        with_proxy_if_needed: Annotated[
            bool, typer.Option(help="Start the proxy when the harness cannot speak the provider.")
        ] = False,
        with_proxy: Annotated[
            bool, typer.Option(help="Start the proxy even when not needed.")
        ] = False,
        no_proxy: Annotated[
            bool, typer.Option(help="Never start the proxy (error if needed).")
        ] = False,
        proxy_port: Annotated[int, typer.Option(help="Proxy port; 0 = ephemeral.")] = 0,
        proxy_log_level: Annotated[
            str, typer.Option(help="Proxy log level: debug, info, warn, error.")
        ] = "warn",
        resume: Annotated[
            str | None, typer.Option("--resume", "-r", help="Resume this session.")
        ] = None,
        session_id: Annotated[
            str | None, typer.Option("--session-id", "-s", help="Session id for a new session.")
        ] = None,
        prompt: Annotated[
            str | None, typer.Option("--prompt", "-p", help="Run one-shot with this prompt.")
        ] = None,
        max_turns: Annotated[int | None, typer.Option(help="Turn limit (one-shot).")] = None,
        max_budget_usd: Annotated[float | None, typer.Option(help="Cost limit.")] = None,
        observe: Annotated[
            bool,
            typer.Option(
                help="Tee the harness's structured output into corral's parser (usage, cost, a session record)."
            ),
        ] = False,
        home: Annotated[
            Path | None, typer.Option(help="Run the harness with this isolated home directory.")
        ] = None,
        json_output: Annotated[
            bool,
            typer.Option(
                "--json", help="Launch and proxy lifecycle events as JSON lines on stderr."
            ),
        ] = False,
        debug: Annotated[
            bool, typer.Option("--debug", "-d", help="Log the plan and the proxy's output.")
        ] = False,
        dry_run: Annotated[
            bool, typer.Option(help="Print the resolved plan as JSON; start nothing.")
        ] = False,
    ) -> None:
        """Launch a harness against any provider; the proxy only when needed."""
        params = {k: v for k, v in locals().items() if k != "ctx"}
        if no_proxy and (with_proxy or with_proxy_if_needed):
            raise typer.BadParameter("--no-proxy cannot be combined with --with-proxy[-if-needed]")
        if proxy_log_level not in PROXY_LEVELS:
            raise typer.BadParameter(f"--proxy-log-level must be one of {', '.join(PROXY_LEVELS)}")
        raise typer.Exit(run(params, tuple(ctx.meta.get("corral_harness_args", ()))))
