"""``corral launch <harness> [provider] [flags] [-- harness args]``: the unified launcher.

Starts a harness, interactive (its own TUI, passed through) or one-shot (``-p``), against any
provider, with the translating proxy in between only when the harness cannot speak the provider
natively (seed 004; see ``docs/launch.md``). Everything after ``--`` goes to the harness verbatim.

Exit codes: the harness's own (128 + N when signal N killed it; 130 after SIGINT); 2 bad usage;
60–76 the launcher's error catalog (``corral launch --help``, ``docs/launch.md``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core

_PROXY_LEVELS = ("debug", "info", "warn", "error")


_INT = ("proxy_port", "max_turns")
_FLOAT = ("max_budget_usd",)
_PATH = ("home",)


class _SplitAtDashes(typer.core.TyperCommand):
    """Everything after the first ``--`` is the harness's (never a positional of ours).

    The launcher sits in front of every harness start, so its own parse is kept cheap: a plain
    command line is parsed here from the declared parameters (typer's per-parameter coercion
    imports pydantic, ~0.3 s); anything unusual (``--help``, an unknown option, a bad value) goes
    to typer's parser, which reports it as usual.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            ctx.meta["corral_harness_args"] = tuple(args[at + 1 :])
            args = args[:at]
        if self._fast_parse(ctx, args):
            return []
        return super().parse_args(ctx, args)

    def _fast_parse(self, ctx: Any, args: list[str]) -> bool:
        if "-h" in args or "--help" in args:
            return False
        table: dict[str, tuple[Any, bool | None]] = {}
        params: dict[str, Any] = {}
        for param in self.params:
            params[str(param.name)] = param.default
            if isinstance(param, typer.core.TyperOption):
                flag = True if param.is_flag else None
                table.update({opt: (param, flag) for opt in param.opts})
                table.update({opt: (param, False) for opt in param.secondary_opts})
        positional: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg.startswith("-") and arg != "-":
                name, eq, inline = arg.partition("=")
                if name not in table:
                    return False
                param, flag = table[name]
                if flag is not None:
                    if eq:
                        return False
                    params[str(param.name)] = flag
                else:
                    if not eq:
                        i += 1
                        if i >= len(args):
                            return False
                        inline = args[i]
                    try:
                        params[str(param.name)] = _convert(str(param.name), inline)
                    except ValueError:
                        return False
            else:
                positional.append(arg)
            i += 1
        if not 1 <= len(positional) <= 2:
            return False
        params["harness"] = positional[0]
        params["provider"] = positional[1] if len(positional) == 2 else None
        ctx.params = params
        ctx.args = []
        return True


def _convert(name: str, value: str) -> Any:
    if name in _INT:
        return int(value)
    if name in _FLOAT:
        return float(value)
    if name in _PATH:
        return Path(value)
    return value


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
        from ..launch import LaunchError, LaunchOptions
        from ..launch import launch as run_launch

        if no_proxy and (with_proxy or with_proxy_if_needed):
            raise typer.BadParameter("--no-proxy cannot be combined with --with-proxy[-if-needed]")
        if proxy_log_level not in _PROXY_LEVELS:
            raise typer.BadParameter(f"--proxy-log-level must be one of {', '.join(_PROXY_LEVELS)}")
        opts = LaunchOptions(
            harness=harness,
            provider=provider,
            model=model,
            api_key=api_key,
            api_base=api_base,
            region=region,
            project=project,
            resource_group=resource_group,
            endpoint_name=endpoint_name,
            transport=transport,
            profile=profile,
            auth_command=auth_command,
            with_proxy_if_needed=with_proxy_if_needed,
            with_proxy=with_proxy,
            no_proxy=no_proxy,
            proxy_port=proxy_port,
            proxy_log_level=proxy_log_level,
            resume=resume,
            session_id=session_id,
            prompt=prompt,
            max_turns=max_turns,
            max_budget_usd=max_budget_usd,
            harness_args=tuple(ctx.meta.get("corral_harness_args", ())),
            json=json_output,
            debug=debug,
            dry_run=dry_run,
            observe=observe,
            home=home.resolve() if home is not None else None,
        )
        try:
            rc = run_launch(opts)
        except LaunchError as exc:
            if json_output:
                sys.stderr.write(json.dumps(exc.to_json()) + "\n")
            typer.echo(f"error: {exc} [{exc.code}]", err=True)
            raise typer.Exit(exc.exit_code) from None
        sys.stdout.flush()
        raise typer.Exit(rc)
