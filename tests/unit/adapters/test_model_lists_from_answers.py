"""The model lists corral reads from each CLI's own answers, on the recorded responses of the
pinned CLIs (tests/fixtures/transcripts), and on malformed ones (nothing raises)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.adapters._acp import session_models
from corral.adapters._model_info import effort_names
from corral.adapters.claude import model_infos_of_initialize, models_of_initialize
from corral.adapters.codex import model_infos_of_page, models_of_page

FIXTURES = Path(__file__).parents[2] / "fixtures" / "transcripts"


def _answer(path: Path, request_id: object) -> dict[str, Any]:
    """The agent's answer (``out``) to the request with ``request_id`` in a recording."""
    for line in path.read_text().splitlines():
        record = json.loads(line)
        msg = record["line"]
        if record["dir"] != "out" or not isinstance(msg, dict):
            continue
        if msg.get("id") == request_id and isinstance(msg.get("result"), dict):
            return dict(msg["result"])
        inner = msg.get("response")
        if isinstance(inner, dict) and inner.get("request_id") == request_id:
            return dict(inner.get("response") or {})
    raise AssertionError(f"no answer to {request_id!r} in {path}")


def test_claude_initialize_models() -> None:
    path = FIXTURES / "claude" / "2.1.197" / "text.jsonl"
    first = json.loads(path.read_text().splitlines()[0])["line"]
    answer = _answer(path, first["request_id"])
    models = models_of_initialize(answer)
    assert models[:5] == ["default", "opus[1m]", "sonnet", "sonnet[1m]", "haiku"]
    assert models == [m["value"] for m in answer["models"]]  # every entry, in the CLI's order


@pytest.mark.parametrize(
    ("agent", "version", "expected"),
    [
        ("qwen-acp", "0.15.10", ["coder-model(qwen-oauth)", "$runtime|openai|fake-model(openai)"]),
        ("hermes", "0.19.0", ["custom:fake-model"]),
    ],
)
def test_acp_models_block(agent: str, version: str, expected: list[str]) -> None:
    result = _answer(FIXTURES / agent / version / "text.jsonl", 2)
    assert session_models(result) == expected


def test_gemini_models_block() -> None:
    models = session_models(_answer(FIXTURES / "gemini" / "0.61.0" / "text.jsonl", 2))
    assert models[0] == "auto" and "gemini-2.5-pro" in models


def test_opencode_acp_model_config_option() -> None:
    models = session_models(_answer(FIXTURES / "opencode-acp" / "1.18.33" / "text.jsonl", 2))
    assert models[-1] == "corral/fake-model" and "opencode/big-pickle" in models
    assert "build" not in models  # the mode option is not a model


@pytest.mark.parametrize(
    "junk",
    [
        {},
        {"models": None},
        {"models": "x"},
        {"models": {"availableModels": [1, None, {"modelId": 3}, {"name": "n"}]}},
        {"configOptions": [None, {"id": "model", "options": "x"}, {"id": "model"}]},
    ],
)
def test_acp_malformed_results_yield_nothing(junk: dict[str, Any]) -> None:
    assert session_models(junk) == []


def test_claude_and_codex_malformed_answers() -> None:
    assert models_of_initialize({"models": [None, 1, {"value": 2}, {"value": "ok"}]}) == ["ok"]
    assert models_of_initialize({"models": {}}) == []
    assert models_of_page(None) == [] and models_of_page({"data": "x"}) == []
    page = {"data": [{"id": "a"}, {"model": "b", "id": "bb"}, {"model": 5}, "x", {"id": ""}]}
    assert models_of_page(page) == ["a", "b"]


def test_claude_initialize_efforts_per_model() -> None:
    path = FIXTURES / "claude" / "2.1.197" / "text.jsonl"
    first = json.loads(path.read_text().splitlines()[0])["line"]
    answer = _answer(path, first["request_id"])
    infos = {m.id: m for m in model_infos_of_initialize(answer)}
    assert infos["sonnet"].efforts == ("low", "medium", "high", "xhigh", "max")
    assert infos["sonnet"].name == "Sonnet"
    for entry in answer["models"]:  # what the recorded answer says, model by model
        levels = entry.get("supportedEffortLevels") or []
        assert infos[entry["value"]].efforts == tuple(levels)
    assert list(infos) == models_of_initialize(answer)
    # An entry without supportsEffort and without levels takes none (Claude 2.1.197 answers
    # haiku so when another model is configured).
    bare = {"models": [{"value": "haiku", "displayName": "Haiku"}]}
    assert model_infos_of_initialize(bare)[0].efforts == ()


def test_efforts_from_malformed_answers() -> None:
    junk = {
        "models": [
            {"value": "a", "supportsEffort": True, "supportedEffortLevels": "high"},
            {
                "value": "b",
                "supportsEffort": True,
                "supportedEffortLevels": [1, "", "x" * 40, "hi"],
            },
            {"value": "c", "supportsEffort": True},
        ]
    }
    infos = model_infos_of_initialize(junk)
    assert [m.efforts for m in infos] == [None, ("hi",), None]
    page = {
        "data": [
            {"model": "m", "supportedReasoningEfforts": [{"reasoningEffort": "low"}, "x", {}]},
            {"model": "n", "supportedReasoningEfforts": None, "defaultReasoningEffort": 3},
        ]
    }
    infos = model_infos_of_page(page)
    assert [(m.id, m.efforts, m.default_effort) for m in infos] == [
        ("m", ("low",), None),
        ("n", None, None),
    ]
    assert effort_names(["a", "a", "b"]) == ("a", "b")
