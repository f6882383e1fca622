from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from corral.testing import FakeModelServer


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def client(fake: FakeModelServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.base_url, timeout=10) as http:
        yield http
