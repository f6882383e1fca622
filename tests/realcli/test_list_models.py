"""``list_models()`` on every pinned CLI that reports models, redirected to the scripted model:
the list must come from the CLI (the redirected ``fake-model`` is in it, next to the models the
CLI knows of itself), and adapters that set ``provides_models`` are exactly the ones tested here
or in test_pi_rpc / test_opencode_server.

Efforts too: ``describe_models()`` must carry what each CLI reports per model (Claude Code's
``supportedEffortLevels``, Codex's ``supportedReasoningEfforts``, OpenCode's ``variants``, Pi's
``reasoning`` flag), and the ACP agents, which take no effort at launch, list none."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.adapters.base import supported_options
from corral.registry import Registry
from corral.testing import FakeModelServer, require_agent
from corral.testing.conformance._targets import SPECS, build_target

# conformance name → how the redirected model shows in the CLI's own list
LISTED = {
    # initialize → models[].value; the recorded initialize also listed the custom model, a live
    # one (pinned 2.1.197, fake-model passed as --model) lists only its own aliases
    "claude": "default",
    "codex": None,  # model/list → data[].model: its bundled catalog, without the custom provider
    "gemini": None,  # session/new → models.availableModels (its own catalog; current is separate)
    "qwen-acp": "$runtime|openai|fake-model(openai)",
    "hermes": "custom:fake-model",
    "opencode-acp": "corral/fake-model",  # configOptions "model" options
    "kilo": "corral/fake-model",  # as OpenCode ACP: the redirected provider's model
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "agent", [pytest.param(a, marks=pytest.mark.realcli(SPECS[a].redirect)) for a in sorted(LISTED)]
)
async def test_list_models_from_the_cli(agent: str, tmp_path: Path) -> None:
    spec = SPECS[agent]
    require_agent(spec.redirect)
    target = build_target(spec)
    assert target.adapter_class.provides_models is True
    cwd = tmp_path / "repo"
    cwd.mkdir()
    async with FakeModelServer({"default": {"text": "hi"}}) as model:
        adapter = target.make_adapter(base_url=model.base_url, home=tmp_path / "home", cwd=cwd)
        await adapter.start(f"models-{agent}")
        try:
            models = await adapter.list_models()
            infos = await adapter.describe_models()
        finally:
            await adapter.stop()
    assert models, f"{agent} listed no models"
    assert all(isinstance(m, str) and m for m in models)
    expected = LISTED[agent]
    if expected is not None:
        assert expected in models, models
    assert [m.id for m in infos] == models  # the same list, described
    by_id = {m.id: m for m in infos}
    if agent == "claude":
        # every alias the pinned CLI offers reports its levels; the fixed list is not assumed
        assert by_id["default"].efforts and "high" in by_id["default"].efforts, by_id["default"]
        assert all(m.efforts is not None for m in infos), infos
    elif agent == "codex":
        # model/list: each model's supportedReasoningEfforts, its default among them
        assert all(m.efforts for m in infos), infos
        assert all(m.default_effort in (m.efforts or ()) for m in infos if m.default_effort)
        assert any(m.default_effort for m in infos)
    else:  # ACP: no effort option at launch, nothing listed
        assert "effort" not in supported_options(target.adapter_class)
        assert all(m.efforts is None for m in infos), infos


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "agent",
    [pytest.param(a, marks=pytest.mark.realcli(SPECS[a].redirect)) for a in ("opencode", "pi")],
)
async def test_efforts_from_opencode_and_pi(agent: str, tmp_path: Path) -> None:
    """OpenCode's server lists ``variants`` per model (the redirected model has none); Pi says
    whether a model reasons (the redirected one does not, so it takes no thinking level)."""
    spec = SPECS[agent]
    require_agent(spec.redirect)
    target = build_target(spec)
    cwd = tmp_path / "repo"
    cwd.mkdir()
    async with FakeModelServer({"default": {"text": "hi"}}) as model:
        adapter = target.make_adapter(base_url=model.base_url, home=tmp_path / "home", cwd=cwd)
        await adapter.start(f"efforts-{agent}")
        try:
            infos = {m.id: m for m in await adapter.describe_models()}
        finally:
            await adapter.stop()
    assert infos["corral/fake-model"].efforts == (), infos["corral/fake-model"]
    if agent == "opencode":  # its bundled catalog has reasoning models with variants
        assert any(m.efforts for m in infos.values()), list(infos.values())[:5]


def test_provides_models_only_where_tested() -> None:
    registry = Registry()
    tested = {SPECS[a].adapter for a in LISTED} | {"pi", "opencode"}
    for entry in registry.entries():
        cls = registry.adapter_class(entry.id)
        if cls is None:
            continue
        if cls.provides_models:
            assert entry.id in tested, f"{entry.id} claims models without a real-CLI test"
        else:
            assert cls.models_unavailable, f"{entry.id} must say why it lists no models"
