"""``launch(options)``: the whole of seed 004 §4 — plan, proxy, harness, cleanup.

The proxy (when one is needed) is stopped on every way out of :func:`launch`: the harness
exiting, a signal forwarded to it, an error; and when corral itself is killed, the proxy's
parent-death signal stops it.

A launch that needs nothing of corral while the harness runs (no proxy, no ``--observe``, no
``--json`` events after the exit) does not supervise it: corral's process becomes the harness
(``_exec``, decision 025). The rest runs the harness as a child (``_runner``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from ._env import Endpoint
from ._errors import LaunchError
from ._options import LaunchOptions
from ._plan import Plan, build_plan, redacted

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from typing import Any, TextIO

AUTH_COMMAND_TIMEOUT = 30.0


def corral_home() -> Path:
    from .._paths import home_dir

    return home_dir()


def launch_home() -> Path:
    return corral_home() / "launch"


def load_profile_dict(name: str, path: Path | None = None) -> dict[str, Any]:
    """A profile of ``providers.json`` (the proxy's format) as data; validated by the proxy's
    own parser so both read the file the same way."""
    import json

    path = path or corral_home() / "providers.json"
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise LaunchError("PROFILE_INVALID", profile=name, error=f"no {path}") from None
    except (OSError, ValueError) as exc:
        raise LaunchError(
            "PROFILE_INVALID", profile=name, error=f"cannot read {path}: {exc}"
        ) from exc
    profiles = data.get("profiles") if isinstance(data, dict) else None
    if (
        not isinstance(profiles, dict)
        or name not in profiles
        or not isinstance(profiles[name], dict)
    ):
        known = ", ".join(sorted(profiles)) if isinstance(profiles, dict) else "none"
        raise LaunchError("PROFILE_INVALID", profile=name, error=f"not in {path} (known: {known})")
    from ..errors import ConfigError
    from ..proxy import parse_profile

    try:
        parse_profile(profiles[name], name, str(path))
    except ConfigError as exc:
        raise LaunchError("PROFILE_INVALID", profile=name, error=str(exc)) from exc
    return dict(profiles[name])


def registered_agents() -> dict[str, str]:
    """Adapter ids the registry knows → ``acp:<launch command>`` for ACP agents, else their
    protocol (for the ``HARNESS_NOT_LAUNCHABLE`` message). Read only for names not in the table."""
    from ..registry import Registry

    out: dict[str, str] = {}
    for entry in Registry():
        preferred = entry.manifest.structured
        if preferred is not None and preferred.protocol == "acp":
            out[entry.id] = "acp:" + preferred.launch_command
        else:
            out[entry.id] = preferred.protocol if preferred is not None else "plain"
    return out


def _locate(agent: str) -> str | None:
    from ..agents import locate

    found = locate(agent)
    return str(found) if found is not None else None


def plan_for(
    opts: LaunchOptions, env: Mapping[str, str], proxy_endpoint: Endpoint | None = None
) -> Plan:
    from ._tables import ALIASES, HARNESSES

    profile = load_profile_dict(opts.profile) if opts.profile else None
    registered = None
    if ALIASES.get(opts.harness, opts.harness) not in HARNESSES:
        registered = registered_agents()
    adc = Path(
        env.get("HOME", "~"), ".config/gcloud/application_default_credentials.json"
    ).expanduser()
    from ..agents._native import native_entry

    return build_plan(
        opts,
        env,
        locate=_locate,
        launch_home=launch_home(),
        profile=profile,
        registered=registered,
        adc_present=adc.is_file(),
        proxy_endpoint=proxy_endpoint,
        native=native_entry,
    )


def _auth_command_key(command: str) -> str:
    import shlex
    import subprocess

    try:
        done = subprocess.run(
            shlex.split(command),
            capture_output=True,
            timeout=AUTH_COMMAND_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LaunchError("AUTH_MISSING", provider="--auth-command", envVar=str(exc)) from exc
    token = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode != 0 or not token:
        raise LaunchError(
            "AUTH_MISSING",
            provider="--auth-command",
            envVar=f"a command that prints a token (exit {done.returncode})",
        )
    return token


def _event(stream: TextIO, enabled: bool, **fields: Any) -> None:
    import json

    if enabled:
        stream.write(json.dumps(redacted(fields)) + "\n")
        stream.flush()


def launch(
    opts: LaunchOptions,
    env: Mapping[str, str] | None = None,
    *,
    cwd: Path | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    replace_process: bool = False,
) -> int:
    """Run the launch described by ``opts``; the exit status to leave with.

    ``replace_process`` (the ``corral launch`` command): when corral has nothing to do while
    the harness runs (:func:`supervision_needed`, and no proxy), this process becomes the
    harness and the call never returns (decision 025)."""
    import json

    base_env = dict(os.environ if env is None else env)
    out = out or sys.stdout
    err = err or sys.stderr
    plan = plan_for(opts, base_env)
    if opts.dry_run:
        out.write(json.dumps(plan.to_json(), indent=2) + "\n")
        return 0
    if not plan.installed:
        raise LaunchError(
            "HARNESS_NOT_INSTALLED",
            harness=plan.resolution.harness.name,
            installCommand=plan.resolution.harness.install or "see its documentation",
        )
    if opts.auth_command and plan.proxy is None:
        key = _auth_command_key(opts.auth_command)
        plan = plan_for(_with_key(opts, key), base_env)
    proxy = None
    observer = None
    try:
        if plan.proxy is not None:
            from ._proxy import start_proxy_process

            proxy = start_proxy_process(plan.proxy, base_env, echo=opts.debug)
            _event(err, opts.json, event="proxy_started", pid=proxy.proc.pid, url=proxy.base_url)
            plan = plan_for(opts, base_env, Endpoint(proxy.base_url, proxy.token))
        if opts.debug:
            err.write(f"corral launch: {json.dumps(plan.to_json())}\n")
        plan.harness.apply()
        if replace_process and proxy is None and supervision_needed(opts) is None:
            from ._exec import can_exec, exec_harness

            if can_exec():
                exec_harness(plan.harness, base_env, cwd=cwd)  # does not return
        if opts.observe:
            from ._observe import Observation

            observer = Observation(plan.resolution.harness.name)
        from ._runner import run_harness

        use_pty = opts.interactive and plan.resolution.harness.pty
        _event(err, opts.json, event="harness_starting", command=plan.harness.command, pty=use_pty)
        rc = run_harness(
            plan.harness,
            base_env,
            use_pty=use_pty,
            cwd=cwd,
            observer=observer.feed if observer is not None else None,
        )
        _event(err, opts.json, event="harness_exited", code=rc)
    finally:
        if proxy is not None:
            proxy.stop()
            _event(err, opts.json, event="proxy_stopped", pid=proxy.proc.pid)
    if observer is not None:
        record = observer.finish(exit_code=rc)
        _event(err, opts.json, event="observed", **record.as_dict())
    return rc


def supervision_needed(opts: LaunchOptions) -> str | None:
    """Why corral must stay while the harness runs (then it is a child), or ``None`` (corral
    becomes the harness). A proxy, decided by the plan, is the third reason."""
    if opts.observe:
        return "--observe reads a copy of its output"
    if opts.json:
        return "--json reports its exit"
    return None


def _with_key(opts: LaunchOptions, key: str) -> LaunchOptions:
    from dataclasses import replace

    return replace(opts, api_key=key, auth_command=None)
