"""How the benchmarks start corral: as a user does, through the installed ``corral`` script.

The script beside the interpreter (what ``pip install`` writes, and ``make``'s ``.venv`` has) runs
``corral.cli.main`` directly. ``python -m corral`` goes through ``runpy`` first, which loads
``importlib``, ``warnings``, ``contextlib``, ``functools``, ``collections`` and ``types`` before
corral starts: a few milliseconds no user's ``corral`` pays, and modules ``corral run`` keeps off
the path to its agent's start (decision 057). Without the script, ``python -m corral`` it is.
"""

from __future__ import annotations

import sys
from pathlib import Path


def corral_command() -> list[str]:
    """The argv prefix that runs corral here: the installed script, else ``python -m corral``."""
    script = Path(sys.executable).with_name("corral")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "corral"]
