"""What the proxy needs from an upstream HTTP client, and an adapter for an ``httpx.AsyncClient``.

The proxy's own client is :class:`corral.proxy._http1.Pool` (decision 037). ``create_app(settings,
client=httpx.AsyncClient(...))`` still takes an httpx client — tests hand it a ``MockTransport``,
and a caller may want httpx's proxies or HTTP/2 — through :class:`HttpxUpstream`, which turns
httpx's exceptions into the same two this module names. httpx is imported only here, and only
when such a client is given (it costs 0.1-0.3 s of start-up).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Protocol

from ._http1 import UpstreamError, UpstreamTimeout

if TYPE_CHECKING:  # httpx costs ~0.1-0.3 s to import; only this adapter needs it
    import httpx


class UpstreamResponse(Protocol):
    status_code: int
    headers: Mapping[str, str]

    def aiter_raw(self) -> AsyncIterator[bytes]: ...

    async def aread(self, limit: int) -> bytes: ...

    async def aclose(self) -> None: ...


class Upstream(Protocol):
    @property
    def busy(self) -> int:
        """Connections lent out right now (the fault tests check it returns to 0)."""
        ...

    async def send(
        self, method: str, url: str, headers: Mapping[str, str], content: bytes
    ) -> UpstreamResponse: ...

    async def aclose(self) -> None: ...


class _HttpxResponse:
    def __init__(self, response: httpx.Response, owner: HttpxUpstream) -> None:
        self._response = response
        self._owner = owner
        self._open = True
        self.status_code = response.status_code
        self.headers: Mapping[str, str] = response.headers

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        import httpx

        try:
            async for chunk in self._response.aiter_bytes():
                yield chunk
        except httpx.TimeoutException as exc:
            raise UpstreamTimeout(f"the upstream stalled: {exc!r}") from None
        except httpx.HTTPError as exc:
            raise UpstreamError(f"the upstream broke: {exc!r}") from None

    async def aread(self, limit: int) -> bytes:
        parts: list[bytes] = []
        size = 0
        async for data in self.aiter_raw():
            parts.append(data)
            size += len(data)
            if size > limit:
                break
        return b"".join(parts)

    async def aclose(self) -> None:
        if self._open:
            self._open = False
            self._owner._busy -= 1
            await self._response.aclose()


class HttpxUpstream:
    """An ``httpx.AsyncClient`` as the proxy's upstream (the caller owns and closes the client)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self._busy = 0

    @property
    def busy(self) -> int:
        return self._busy

    async def send(
        self, method: str, url: str, headers: Mapping[str, str], content: bytes
    ) -> UpstreamResponse:
        import httpx

        request = self.client.build_request(method, url, headers=headers, content=content)
        try:
            response = await self.client.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise UpstreamTimeout(f"the upstream did not answer in time: {exc!r}") from None
        except httpx.HTTPError as exc:
            raise UpstreamError(f"cannot reach the upstream: {exc!r}") from None
        self._busy += 1
        return _HttpxResponse(response, self)

    async def aclose(self) -> None:
        """Nothing: the client is the caller's."""
