"""``corral adapters`` — list, inspect, detect, probe, verify, validate, add and remove adapters.

Exit codes: 0 ok · 1 a check failed (probe/verify failed, a requested adapter is missing) ·
2 bad input (unreadable file, removing a built-in) · 3 invalid manifest · 4 unknown adapter.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

from ..adapters.base import supported_options
from ..errors import ConfigError, ManifestError
from ..manifests import Manifest, Violation, read_manifest_file, validate_manifest
from ..registry import (
    CheckResult,
    Registry,
    RegistryEntry,
    detect_entries,
    is_stale,
    last_verify,
    probe,
    record_verify,
    repair_command,
    verify,
)
from ._common import JSON_OPTION, console, err_console, print_json

app = typer.Typer(
    name="adapters",
    help="Adapters: the registry of agent CLIs corral can drive.",
    no_args_is_help=True,
)


ID_ARG = typer.Argument(..., metavar="ID", help="Adapter id.")
IDS_ARG = typer.Argument(
    None, metavar="[ID]...", show_default=False, help="Adapter ids (default: all)."
)
FILE_ARG = typer.Argument(..., metavar="FILE", help="A manifest JSON file.")


def _registry(quiet: bool = False) -> Registry:
    registry = Registry()
    if not quiet:
        for problem in registry.problems:
            err_console.print(
                f"[yellow]warning:[/] skipped {escape(problem.origin)}: {escape(problem.message)}",
                highlight=False,
                soft_wrap=True,
            )
    return registry


def _summary(registry: Registry, entry: RegistryEntry) -> dict[str, Any]:
    m = entry.manifest
    caps, cap_source = registry.capabilities(m.id)
    runnable = registry.runnable(m.id)
    profile = m.structured
    return {
        "id": m.id,
        "displayName": m.display_name,
        "source": entry.source,
        "runnable": runnable.runnable,
        "notRunnableReason": runnable.reason,
        "enabled": m.enabled,
        "structured": profile is not None,
        "protocol": profile.protocol if profile else None,
        "promptDelivery": profile.prompt_delivery if profile else None,
        "driver": profile.spec.driver if profile else None,
        "capabilities": caps.enabled(),
        "capabilitySource": cap_source,
        "executables": list(m.executables),
    }


@app.command("list")
def list_(json_output: bool = JSON_OPTION) -> None:
    """List every adapter: built-ins, custom manifests and Python drop-ins."""
    registry = _registry(quiet=json_output)
    rows = [_summary(registry, e) for e in registry.entries()]
    if json_output:
        print_json({"adapters": rows, "problems": registry.problems})
        return
    table = Table()
    table.add_column("id", no_wrap=True)
    for column in ("name", "source", "protocol", "delivery", "runnable", "capabilities"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            escape(r["id"]),
            escape(r["displayName"]),
            r["source"],
            r["protocol"] or "[dim]shell only[/]",
            r["promptDelivery"] or "",
            "yes" if r["runnable"] else "[yellow]no[/]",
            ", ".join(r["capabilities"]) or "[dim]none[/]",
        )
    console.print(table)


@app.command("show")
def show(adapter_id: str = ID_ARG, json_output: bool = JSON_OPTION) -> None:
    """Show one adapter's manifest, protocol, capabilities and last verification."""
    registry = _registry(quiet=json_output)
    entry = registry.get(adapter_id)
    cls = registry.adapter_class(adapter_id)
    record = last_verify(adapter_id, home=registry.home)
    info = {
        **_summary(registry, entry),
        "origin": entry.origin,
        "adapterClass": f"{cls.__module__}.{cls.__qualname__}" if cls else None,
        "enforceableIntents": sorted(i.value for i in cls.enforceable_intents) if cls else [],
        "launchOptions": sorted(supported_options(cls)) if cls else [],
        "repairCommand": repair_command(entry.manifest),
        "stale": is_stale(entry.manifest, home=registry.home),
        "lastVerify": record,
        "manifest": entry.manifest.to_json(),
    }
    if json_output:
        print_json(info)
        return
    table = Table.grid(padding=(0, 2))
    for key in ("id", "displayName", "source", "origin", "protocol", "promptDelivery", "driver"):
        table.add_row(f"[bold]{key}[/]", escape(str(info[key])))
    table.add_row(
        "[bold]capabilities[/]",
        f"{', '.join(info['capabilities']) or 'none'} (from {info['capabilitySource']})",
    )
    table.add_row("[bold]intents[/]", ", ".join(info["enforceableIntents"]) or "none")
    table.add_row(
        "[bold]adapter class[/]",
        escape(str(info["adapterClass"] or f"none — cannot run: {info['notRunnableReason']}")),
    )
    table.add_row("[bold]launch[/]", escape(entry.manifest.launch_command))
    if entry.manifest.structured:
        table.add_row(
            "[bold]structured launch[/]", escape(entry.manifest.structured.launch_command)
        )
    table.add_row("[bold]setup hint[/]", escape(entry.manifest.setup_hint))
    repair = info["repairCommand"]
    table.add_row("[bold]repair[/]", escape(" ".join(repair)) if repair else "—")
    verified = (
        "never"
        if record is None
        else f"{'ok' if record.ok else 'FAILED'} at {record.checked_at:%Y-%m-%d %H:%M}Z"
    )
    table.add_row("[bold]last verify[/]", f"{verified}{' (stale)' if info['stale'] else ''}")
    console.print(table, highlight=False)


@app.command("detect")
def detect_cmd(
    adapter_ids: list[str] = IDS_ARG,
    timeout: float = typer.Option(15.0, help="Seconds to wait for each `--version`."),
    json_output: bool = JSON_OPTION,
) -> None:
    """Find the adapters' CLIs (PATH, then corral's pinned agents) and their versions.

    Exits 1 when an adapter named on the command line is missing.
    """
    registry = _registry(quiet=json_output)
    entries = [registry.get(i) for i in adapter_ids] if adapter_ids else registry.entries()
    results = asyncio.run(detect_entries(entries, timeout=timeout))
    if json_output:
        print_json(results)
    else:
        table = Table()
        table.add_column("id", no_wrap=True)
        for column in ("status", "version", "path", "repair"):
            table.add_column(column)
        for d in results:
            status = "[green]installed[/]" if d.status == "installed" else "[red]missing[/]"
            if d.error:
                status += f" [yellow]({escape(d.error)})[/]"
            table.add_row(
                d.adapter_id,
                status,
                d.version or "",
                escape(d.path or ""),
                escape(" ".join(d.repair or [])),
            )
        console.print(table)
    if adapter_ids and any(d.status == "missing" for d in results):
        raise typer.Exit(1)


def _print_check(result: CheckResult, json_output: bool) -> None:
    if json_output:
        print_json(result)
    else:
        mark = "[green]ok[/]" if result.ok else "[red]FAILED[/]"
        console.print(
            f"{result.step} {result.adapter_id}: {mark} — {escape(result.detail)}", highlight=False
        )
        if result.argv:
            console.print(
                f"  command: {escape(' '.join(result.argv))}  (attempts: {result.attempts})",
                highlight=False,
            )
        if result.output_tail:
            console.print(
                result.output_tail.rstrip(), highlight=False, markup=False, soft_wrap=True
            )
    if not result.ok:
        raise typer.Exit(1)


@app.command("probe")
def probe_cmd(
    adapter_id: str = ID_ARG,
    timeout: float = typer.Option(20.0, help="Seconds `--help` may take."),
    json_output: bool = JSON_OPTION,
) -> None:
    """Cheap liveness check: `<cli> --help` exits 0 within the timeout."""
    manifest = _registry(quiet=json_output).manifest(adapter_id)
    _print_check(asyncio.run(probe(manifest, timeout=timeout)), json_output)


@app.command("verify")
def verify_cmd(
    adapter_id: str = ID_ARG,
    settle: float = typer.Option(3.0, help="Seconds a persistent mode must stay up."),
    timeout: float = typer.Option(30.0, help="Seconds an argv-mode `--help` may take."),
    json_output: bool = JSON_OPTION,
) -> None:
    """Launch check of the structured mode (one retry), recorded against the profile's hash."""
    registry = _registry(quiet=json_output)
    manifest = registry.manifest(adapter_id)
    result = asyncio.run(verify(manifest, settle=settle, timeout=timeout))
    record_verify(manifest, result, home=registry.home)
    _print_check(result, json_output)


def _read(file: Path) -> Any:
    try:
        return read_manifest_file(file)
    except OSError as exc:
        raise ConfigError(f"cannot read {file}: {exc.strerror or exc}") from exc


def _report_invalid(file: Path, violations: list[Violation], json_output: bool) -> NoReturn:
    if json_output:
        print_json({"file": str(file), "valid": False, "violations": violations})
    else:
        err_console.print(
            f"[bold red]{file}: {len(violations)} violation(s)[/]", highlight=False, soft_wrap=True
        )
        for v in violations:
            err_console.print(
                f"  {v.path or '<manifest>'}  [{v.rule}]  {v.message}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
    raise typer.Exit(ManifestError.exit_code)


@app.command("validate")
def validate_cmd(file: Path = FILE_ARG, json_output: bool = JSON_OPTION) -> None:
    """Check a manifest file against every rule; prints all violations (exit 3 when any)."""
    try:
        data = _read(file)
    except ManifestError as exc:
        _report_invalid(file, exc.violations, json_output)
    violations = validate_manifest(data)
    if violations:
        _report_invalid(file, violations, json_output)
    if json_output:
        print_json({"file": str(file), "valid": True, "violations": []})
    else:
        console.print(f"{file}: valid", highlight=False)


@app.command("add")
def add_cmd(
    file: Path = FILE_ARG,
    replace: bool = typer.Option(
        False, "--replace", help="Overwrite a custom manifest with the same id."
    ),
    json_output: bool = JSON_OPTION,
) -> None:
    """Save a custom manifest in the registry (an id taken by a built-in is refused)."""
    registry = _registry(quiet=json_output)
    try:
        manifest: Manifest = registry.add_custom(_read(file), replace=replace)
    except ManifestError as exc:
        _report_invalid(file, exc.violations, json_output)
    path = registry.custom_dir / f"{manifest.id}.json"
    if json_output:
        print_json({"added": manifest.id, "path": str(path)})
    else:
        console.print(f"added {manifest.id} → {path}", highlight=False)


@app.command("remove")
def remove_cmd(adapter_id: str = ID_ARG, json_output: bool = JSON_OPTION) -> None:
    """Remove a custom manifest (built-ins and drop-ins cannot be removed)."""
    path = _registry(quiet=json_output).remove_custom(adapter_id)
    if json_output:
        print_json({"removed": adapter_id, "path": str(path)})
    else:
        console.print(f"removed {adapter_id} ({path})", highlight=False)


@app.command("import-acp")
def import_acp_cmd(
    path: Path = typer.Argument(
        ...,
        metavar="FILE|DIR",
        help="An ACP registry agent.json, a registry index, or a directory.",
    ),
    install: bool = typer.Option(
        True, "--install/--no-install", help="Install pinned npm/PyPI packages of the entries."
    ),
    prefix: str = typer.Option("acp.", "--prefix", help="Prefix of the imported adapter ids."),
    json_output: bool = JSON_OPTION,
) -> None:
    """Import ACP registry entries as custom manifests, run by corral's ACP driver."""
    from ._acp_import import import_entries

    registry = _registry(quiet=json_output)
    try:
        results = import_entries(path, install=install, prefix=prefix, registry=registry)
    except ManifestError as exc:
        _report_invalid(path, exc.violations, json_output)
    if json_output:
        print_json({"imported": [r.to_json() for r in results]})
        return
    for r in results:
        state = "runnable" if r.runnable else f"not runnable: {r.reason}"
        pin = f", pin {r.pin} {r.pin_version}" if r.pin else ""
        console.print(
            f"imported {r.id} ({r.entry_id} {r.entry_version}{pin}"
            f"{', installed' if r.installed else ''}) — {state}",
            highlight=False,
            markup=False,
        )
        for note in r.notes:
            console.print(f"  note: {note}", highlight=False, markup=False)
