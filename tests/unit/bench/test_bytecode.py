"""benchmarks._bytecode: the package is compiled to bytecode before start-up is timed, also where
``PYTHONDONTWRITEBYTECODE`` keeps imports from writing it."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest
from benchmarks import _bytecode
from benchmarks._bytecode import as_installed, missing


def _package(root: Path) -> Path:
    pkg = root / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("X = 1\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "mod.py").write_text("def f():\n    return 2\n")
    return pkg


def _cached(source: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(source)))


def test_missing_bytecode_is_written_even_when_imports_may_not_write_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # what PYTHONDONTWRITEBYTECODE sets
    pkg = _package(tmp_path)
    assert len(missing(pkg)) == 3
    assert as_installed(pkg) == 3
    assert missing(pkg) == []
    assert all(_cached(source).stat().st_size > 0 for source in pkg.rglob("*.py"))
    assert "compiled 3 of corral's modules" in capsys.readouterr().err
    assert as_installed(pkg) == 0  # nothing to do the second time, and nothing said
    assert capsys.readouterr().err == ""


def test_stale_bytecode_is_rewritten(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    as_installed(pkg)
    module = pkg / "sub" / "mod.py"
    before = _cached(module).read_bytes()
    stamp = module.stat().st_mtime
    module.write_text("def f():\n    return 'a longer body than before'\n")
    os.utime(module, (stamp + 10, stamp + 10))  # compileall compares the source's mtime only
    assert as_installed(pkg) == 0  # it had bytecode, only stale
    after = _cached(module).read_bytes()
    assert after != before
    assert b"a longer body than before" in after


def test_a_package_it_cannot_compile_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pkg = _package(tmp_path)
    # a read-only install; as root a chmod would not stop the write, so the outcome is given
    monkeypatch.setattr(_bytecode.compileall, "compile_dir", lambda *a, **k: False)
    as_installed(pkg)
    assert "could not write corral's bytecode" in capsys.readouterr().err


def test_by_default_it_compiles_the_imported_corral() -> None:
    import corral

    as_installed()
    assert missing(Path(corral.__file__).parent) == []
