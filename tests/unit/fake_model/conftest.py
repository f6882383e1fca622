from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from corral.testing import FakeModelServer, Scenario


@pytest.fixture(scope="module")
def _shared_server() -> Iterator[FakeModelServer]:
    # One server per module (a stop costs uvicorn ~0.1 s); each test gets it reset.
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def fake(_shared_server: FakeModelServer) -> Iterator[FakeModelServer]:
    _shared_server.set_scenario(Scenario())
    _shared_server.requests.clear()
    yield _shared_server
    _shared_server.release_holds()


@pytest.fixture
def client(fake: FakeModelServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.base_url, timeout=10) as http:
        yield http
