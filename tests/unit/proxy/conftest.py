from __future__ import annotations

from collections.abc import Iterator

import pytest

from corral.proxy import Profile, ProxyServer, ProxySettings
from corral.testing import FakeModelServer, Scenario

UPSTREAMS = ("anthropic", "openai-chat", "openai-responses", "google")
TOKEN = "proxy-test-token"


def profile_for(wire: str, base_url: str, **extra: object) -> Profile:
    if wire in ("anthropic", "google"):
        return Profile(provider=wire, base_url=base_url, model="fake-model", **extra)  # type: ignore[arg-type]
    return Profile(
        provider="openai-compatible",
        base_url=base_url + "/v1",
        wire=wire,  # type: ignore[arg-type]
        model="fake-model",
        **extra,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="module")
def _shared_fake() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def fake(_shared_fake: FakeModelServer) -> Iterator[FakeModelServer]:
    _shared_fake.set_scenario(Scenario())
    _shared_fake.requests.clear()
    yield _shared_fake
    _shared_fake.release_holds()


@pytest.fixture(scope="module")
def proxies(_shared_fake: FakeModelServer) -> Iterator[dict[str, ProxyServer]]:
    """One running proxy per upstream wire API, all in front of the shared fake model server."""
    servers = {
        wire: ProxyServer(
            ProxySettings(
                profile=profile_for(wire, _shared_fake.base_url),
                token=TOKEN,
                usage_log="",
                max_retry_wait=0,
            )
        ).start()
        for wire in UPSTREAMS
    }
    yield servers
    for server in servers.values():
        server.stop()
