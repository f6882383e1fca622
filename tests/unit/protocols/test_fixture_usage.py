"""Every recorded transcript under tests/fixtures/transcripts is used by a test, and every fixture a
test declares exists.

Convention: a test module that reads transcripts declares them in a module-level list
``FIXTURES_USED`` of paths relative to tests/fixtures/transcripts (``<cli>/<version>/<scenario>.jsonl``).
Each ``.jsonl`` has its ``.meta.json`` sidecar from the recorder. A recorded session store
(``corral record AGENT store``) is a directory ``<cli>/<version>/store/`` holding the vendor's own
files as the CLI wrote them, with ``store.meta.json`` beside it; it is declared as
``<cli>/<version>/store``.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]
TRANSCRIPTS = TESTS / "fixtures" / "transcripts"


def declared() -> dict[str, list[str]]:
    """``FIXTURES_USED`` of every test module, evaluated from its source (no import needed)."""
    found: dict[str, list[str]] = {}
    for path in TESTS.rglob("test_*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "FIXTURES_USED" for t in targets):
                found[str(path.relative_to(TESTS))] = _evaluate(path, tree)
    return found


def _evaluate(path: Path, tree: ast.Module) -> list[str]:
    # Evaluate the module's top-level constant assignments only (literals and comprehensions).
    namespace: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            code = compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec")
            try:
                exec(code, namespace)
            except NameError:
                continue
    value = namespace.get("FIXTURES_USED")
    assert isinstance(value, list), f"{path}: FIXTURES_USED must be a list of paths"
    return [str(v) for v in value]


def _in_store(path: Path) -> bool:
    return "store" in path.relative_to(TRANSCRIPTS).parts[2:3]


def test_every_transcript_is_used_by_a_test() -> None:
    used = {rel for rels in declared().values() for rel in rels}
    recorded = {
        str(p.relative_to(TRANSCRIPTS)) for p in TRANSCRIPTS.rglob("*.jsonl") if not _in_store(p)
    }
    recorded |= {
        str(p.parent.relative_to(TRANSCRIPTS) / "store")
        for p in TRANSCRIPTS.rglob("store.meta.json")
    }
    unused = sorted(recorded - used)
    assert not unused, f"recorded transcripts no test uses: {unused}"


def test_every_declared_fixture_exists_with_its_sidecar() -> None:
    for module, rels in declared().items():
        for rel in rels:
            path = TRANSCRIPTS / rel
            if path.name == "store":  # a recorded session store: a directory
                assert path.is_dir(), f"{module} declares missing store {rel}"
                assert path.with_name("store.meta.json").is_file(), f"{rel} has no store.meta.json"
                continue
            assert path.is_file(), f"{module} declares missing fixture {rel}"
            assert path.with_suffix(".meta.json").is_file(), f"{rel} has no .meta.json sidecar"


def test_no_stray_files_in_the_transcript_tree() -> None:
    stray = [
        str(p.relative_to(TRANSCRIPTS))
        for p in TRANSCRIPTS.rglob("*")
        if p.is_file()
        and not _in_store(p)
        and not (p.name.endswith(".jsonl") or p.name.endswith(".meta.json"))
    ]
    assert stray == []
    sidecars = {
        p.with_name(p.name.removesuffix(".meta.json") + ".jsonl")
        for p in TRANSCRIPTS.rglob("*.meta.json")
        if p.name != "store.meta.json"
    }
    stores = [p.with_name("store") for p in TRANSCRIPTS.rglob("store.meta.json")]
    assert [str(p) for p in stores if not p.is_dir()] == []
    orphans = sorted(str(p.relative_to(TRANSCRIPTS)) for p in sidecars if not p.is_file())
    assert orphans == []
