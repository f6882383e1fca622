#!/usr/bin/env python3
"""Regenerate ``src/corral/_generated/codex/`` from the pinned Codex's app-server JSON Schema.

    python scripts/gen_codex_types.py            # uses corral.agents.locate("codex")
    python scripts/gen_codex_types.py --codex /path/to/codex

Steps: ``codex app-server generate-json-schema --out TMP``; merge the top-level definitions (the
server→client requests such as approvals) with the ``v2`` ones into one flat table; keep only the
definitions reachable from :data:`ROOTS` (the types corral's code references — the full schema is
~800 KB and ~700 types); run ``datamodel-codegen`` (a dev-only tool, not a corral dependency:
``pip install datamodel-code-generator==0.89.0``) to emit msgspec Structs; prepend a "do not edit"
header with the Codex version.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "src" / "corral" / "_generated" / "codex"
DATAMODEL_CODEGEN_VERSION = "0.89.0"

ROOTS = (
    # Only what corral's code references (corral.adapters._codex_launch builds these params
    # schema-typed); everything else the driver reads is parsed tolerantly by
    # corral.protocols.codex_app_server. Add a root here when code starts using a type.
    "ThreadStartParams",
    "ThreadResumeParams",
    "TurnStartParams",
)

_REF = re.compile(r"#/definitions/(?:v2/)?([A-Za-z0-9_]+)")


def _codex_binary(explicit: str | None) -> str:
    if explicit:
        return explicit
    sys.path.insert(0, str(REPO / "src"))
    from corral.agents import locate

    found = locate("codex")
    if found is None:
        sys.exit("codex is not installed: run `corral agents install codex` or pass --codex")
    return str(found)


def _version(codex: str) -> str:
    out = subprocess.run([codex, "--version"], capture_output=True, text=True, check=True)
    return out.stdout.strip().split()[-1]


def flat_definitions(schema: dict[str, Any]) -> dict[str, Any]:
    """Top-level and ``v2`` definitions in one table, every ``$ref`` pointing into it."""
    defs = dict(schema["definitions"])
    v2 = defs.pop("v2", {})
    merged = {**defs, **v2}  # the two shared names (AbsolutePathBuf, RequestId) agree
    text = json.dumps(merged)
    return json.loads(_REF.sub(lambda m: f"#/definitions/{m.group(1)}", text))


def reachable(defs: dict[str, Any], roots: tuple[str, ...]) -> dict[str, Any]:
    keep: dict[str, Any] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        if name not in defs:
            raise SystemExit(f"schema has no definition {name!r}: update ROOTS")
        body = dict(defs[name])
        body.pop("$schema", None)
        keep[name] = body
        todo += [r for r in _REF.findall(json.dumps(body)) if r not in keep]
    return dict(sorted(keep.items()))


def tag_unions(defs: dict[str, Any]) -> int:
    """Mark ``oneOf`` unions whose variants each fix ``type`` to one string as discriminated.

    Codex's schema (from Rust serde ``#[serde(tag = "type")]``) does not say so itself; without
    the marker the generator emits untagged Struct unions, which msgspec cannot decode.
    """
    count = 0
    for body in defs.values():
        variants = body.get("oneOf")
        if not variants or not all(_fixed_tag(v) for v in variants):
            continue
        body["discriminator"] = {"propertyName": "type"}
        count += 1
    return count


def _fixed_tag(variant: dict[str, Any]) -> bool:
    prop = variant.get("properties", {}).get("type", {})
    return variant.get("type") == "object" and len(prop.get("enum", [])) == 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codex", help="codex binary (default: the pinned one)")
    args = parser.parse_args()
    codegen = shutil.which("datamodel-codegen") or str(
        Path(sys.executable).parent / "datamodel-codegen"
    )
    if not Path(codegen).exists():
        sys.exit(
            f"datamodel-codegen not found: pip install datamodel-code-generator=={DATAMODEL_CODEGEN_VERSION}"
        )
    codex = _codex_binary(args.codex)
    version = _version(codex)
    with tempfile.TemporaryDirectory(prefix="codex-schema-") as tmp:
        subprocess.run([codex, "app-server", "generate-json-schema", "--out", tmp], check=True)
        schema = json.loads((Path(tmp) / "codex_app_server_protocol.schemas.json").read_text())
        defs = reachable(flat_definitions(schema), ROOTS)
        tagged = tag_unions(defs)
        trimmed = Path(tmp) / "trimmed.json"
        trimmed.write_text(
            json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": defs})
        )
        raw = Path(tmp) / "models.py"
        subprocess.run(
            [
                codegen,
                "--input",
                str(trimmed),
                "--input-file-type",
                "jsonschema",
                "--output",
                str(raw),
                "--output-model-type",
                "msgspec.Struct",
                "--target-python-version",
                "3.11",
                "--use-schema-description",
                "--use-field-description",
                "--use-union-operator",
                "--use-standard-collections",
                "--enum-field-as-literal",
                "all",
                "--disable-timestamp",
                "--use-msgspec-tagged-unions",
                "--use-title-as-name",
            ],
            check=True,
        )
        body = raw.read_text()
    header = (
        f'"""Codex app-server protocol types — GENERATED, DO NOT EDIT.\n\n'
        f"Source: `codex app-server generate-json-schema` of codex-cli {version}, trimmed to the\n"
        f"{len(defs)} definitions reachable from scripts/gen_codex_types.py ROOTS ({tagged} tagged unions).\n"
        f'Regenerate: python scripts/gen_codex_types.py\n"""\n\n'
    )
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "models.py").write_text(header + body)
    (OUT / "__init__.py").write_text(
        f'"""Generated Codex app-server types (codex-cli {version}). Do not edit; see models.py."""\n\n'
        f'CODEX_VERSION = "{version}"\n'
    )
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    subprocess.run([ruff, "check", "--fix", "--quiet", str(OUT)], check=False)
    subprocess.run([ruff, "format", "--quiet", str(OUT)], check=True)
    print(f"wrote {OUT} ({len(defs)} definitions, codex-cli {version})")


if __name__ == "__main__":
    main()
