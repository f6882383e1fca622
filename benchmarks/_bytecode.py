"""corral measured as it is installed: its modules compiled to bytecode before any timed start.

A wheel installed by pip carries its bytecode (pip compiles it at install time). An editable
install (``make``'s ``.venv``) writes it at the first import, unless ``PYTHONDONTWRITEBYTECODE``
is set (it was, in the shell where this was found): then every ``corral`` process compiles each
module it imports from source again, a cost no installed user pays (38–81 ms a ``corral run``
on the day it was found: docs/performance.md, part 1 round 11). :func:`as_installed` takes it out
of the figures. The variable does not stop Python from reading bytecode that exists.
"""

from __future__ import annotations

import compileall
import importlib.util
import sys
from pathlib import Path


def missing(root: Path) -> list[Path]:
    """The ``.py`` files under ``root`` that have no bytecode file beside them (stale bytecode,
    whose source changed since, is not counted: :func:`as_installed` rewrites it as well)."""
    return [
        source
        for source in sorted(root.rglob("*.py"))
        if not Path(importlib.util.cache_from_source(str(source))).exists()
    ]


def as_installed(root: Path | None = None) -> int:
    """Compile corral's package (or ``root``) to bytecode where it is missing or stale; the
    number of modules that had none. Says so on stderr when it wrote any, or when it could not
    (a read-only install): the figures then include compiling."""
    if root is None:
        import corral

        root = Path(corral.__file__).parent
    absent = missing(root)
    ok = compileall.compile_dir(str(root), quiet=2, force=False)
    if not ok:
        print(
            f"benchmarks: could not write corral's bytecode under {root}; "
            "process start-up figures include compiling its modules",
            file=sys.stderr,
        )
    elif absent:
        print(
            f"benchmarks: compiled {len(absent)} of corral's modules to bytecode first "
            "(an installed wheel has it; PYTHONDONTWRITEBYTECODE or a fresh checkout had left "
            "none)",
            file=sys.stderr,
        )
    return len(absent)
