"""The recorded vendor stores (``corral record AGENT store``), copied where a test may change them.

A recording's ``store.meta.json`` keeps the redirection's environment; :func:`recorded` rebases
every path in it from the recording's temporary home onto a copy of the ``store`` directory, so
each reader finds the files where the CLI put them.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from corral.adapters._stores import store_for

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"


@dataclass
class Recorded:
    agent: str
    meta: dict[str, Any]
    home: Path
    env: dict[str, str]
    module: ModuleType

    @property
    def cwd(self) -> str:
        return str(self.meta["cwd"])


def meta_path(cli: str) -> Path:
    found = sorted((FIXTURES / cli).glob("*/store.meta.json"))
    assert found, f"no recorded store for {cli}: run `corral record <agent> store`"
    return found[-1]


def recorded(cli: str, tmp_path: Path) -> Recorded:
    meta_file = meta_path(cli)
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    home = tmp_path / "home"
    shutil.copytree(meta_file.parent / "store", home, dirs_exist_ok=True)
    for dump in home.rglob("*.db.sql"):  # a recorded database, kept as SQL text
        with sqlite3.connect(dump.with_suffix("")) as conn:
            conn.executescript(dump.read_text(encoding="utf-8"))
        dump.unlink()
    old = str(meta["home"])
    env = {k: v.replace(old, str(home)) for k, v in meta["env"].items()}
    module = store_for(meta["adapter"])
    assert module is not None
    return Recorded(meta["adapter"], meta, home, env, module)


def parse_all(module: ModuleType, path: str | Path) -> list[Any]:
    """Every event the vendor's parser makes of the transcript at ``path``, in order."""
    parser = module.Parser()
    return [event for record in module.records_of(Path(path)) for event in parser.feed(record)]


ALL_CLIS = ("claude", "codex", "gemini", "qwen", "pi", "opencode", "hermes")


def recorded_home(tmp_path: Path) -> tuple[dict[str, str], list[Recorded]]:
    """Every recorded store in one home, and the environment that finds them all."""
    recs = [recorded(cli, tmp_path) for cli in ALL_CLIS]
    env: dict[str, str] = {}
    for rec in recs:
        env.update(rec.env)
    return env, recs
