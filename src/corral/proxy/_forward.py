"""One model request through the proxy: credentials, the upstream exchange, the stream pump.

``Exchange.run`` returns either a complete JSON answer or an async iterator of client bytes. Any
upstream failure becomes an :class:`ErrorInfo` rendered by the client's converter: before the
first byte as an HTTP error with the client API's status and shape, after it as that API's
in-stream error event. Cancellation (the client went away) closes the upstream response, which
returns its connection to the pool or drops it.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..errors import ConfigError
from . import _ir as ir
from ._config import ProxySettings
from ._credentials import CredentialPool, Secret
from ._http1 import UpstreamError, UpstreamTimeout
from ._providers import Call, Target, adc_token, build_call, target
from ._sse import SSEDecoder, SSEError, loads
from ._upstream import Upstream, UpstreamResponse
from ._usage import UsageLog, cost, log_event
from ._wires import Converter, converter

_MAX_ERROR_BODY = 64 * 1024
_MAX_BODY = 64 * 1024 * 1024


class UpstreamFailed(Exception):
    def __init__(self, error: ir.ErrorInfo) -> None:
        super().__init__(error.message)
        self.error = error


def retry_after(headers: Mapping[str, str]) -> float | None:
    for name in ("retry-after-ms", "retry-after"):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw)
        except ValueError:
            return None
        return value / 1000 if name.endswith("-ms") else value
    return None


@dataclass
class Outcome:
    status: int = 200
    outcome: str = "complete"
    usage: ir.Usage = field(default_factory=ir.Usage)
    credential: str = ""
    failovers: list[dict[str, Any]] = field(default_factory=list)
    first_byte: float | None = None


class Proxy:
    """The long-lived state: settings, the upstream connection pool, credentials, usage log."""

    def __init__(self, settings: ProxySettings, client: Upstream, usage: UsageLog) -> None:
        self.settings = settings
        self.profile = settings.profile
        self.client = client
        self.usage = usage
        self.pool = CredentialPool(list(self.profile.credentials))
        self._adc: tuple[str, float] | None = None

    async def secret(self, index: int) -> Secret:
        secret = await self.pool.secret(index)
        if self.profile.provider == "vertex" and secret.value is None and secret.credential.adc:
            if self._adc is None or self._adc[1] < time.monotonic():
                token = await asyncio.to_thread(adc_token)
                self._adc = (token, time.monotonic() + 300)
            secret.value = self._adc[0]
        return secret


class Exchange:
    def __init__(
        self, proxy: Proxy, client: Converter, request: ir.Request, headers: Mapping[str, str]
    ) -> None:
        self.proxy = proxy
        self.client = client
        self.request = request
        self.headers = headers
        self.target: Target = target(proxy.profile, request.model)
        self.upstream = converter(self.target.wire)
        self.outcome = Outcome()
        self.started = time.monotonic()
        self.id = f"req_{secrets.token_hex(6)}"
        self._stream = True
        self._last_error = ir.ErrorInfo("rate_limit", "every credential is rate limited", 429)
        if request.dropped:
            log_event("proxy.dropped", logging.DEBUG, id=self.id, fields=request.dropped)

    def model_name(self) -> str:
        return self.request.model or self.target.model

    async def open(self) -> UpstreamResponse:
        """Send the request, rotating credentials on 429 / quota; raises ``UpstreamFailed``."""
        outgoing = self.request
        if outgoing.stream and not self.target.stream_capable:
            outgoing = msgspec.structs.replace(outgoing, stream=False)
        body = self.upstream.build_request(outgoing, self.target.model)
        tried: set[int] = set()
        for _attempt in range(len(self.proxy.pool.credentials) + 1):
            index, wait = self.proxy.pool.pick(tried)
            if index < 0:
                if self.outcome.failovers:
                    raise UpstreamFailed(self._last_error)
                index, wait = self.proxy.pool.pick()
            if wait > self.proxy.settings.max_retry_wait:
                # Every credential is benched for longer than we wait: the one that frees up
                # soonest goes anyway when nothing failed yet (the upstream decides), else the
                # last error (with its retry-after) goes back to the client.
                if self.outcome.failovers:
                    raise UpstreamFailed(self._last_error)
            elif wait > 0:
                log_event("proxy.wait", id=self.id, seconds=round(wait, 3))
                await asyncio.sleep(wait)
            try:
                secret = await self.proxy.secret(index)
                call = build_call(
                    self.proxy.profile,
                    self.target,
                    body,
                    self.request.stream,
                    secret,
                    self.headers,
                    self.client.wire,
                )
            except ConfigError as exc:
                raise UpstreamFailed(
                    ir.ErrorInfo("auth", f"proxy credentials: {exc}", 401)
                ) from None
            self.outcome.credential = secret.label
            response = await self._send(call)
            if response.status_code < 400:
                self._stream = call.stream
                return response
            error = await self._error(response)
            if error.kind != "rate_limit":
                raise UpstreamFailed(error)
            self._last_error = error
            self.proxy.pool.bench(index, error.retry_after)
            tried.add(index)
            self.outcome.failovers.append(
                {
                    "credential": secret.label,
                    "status": error.status,
                    "retry_after": error.retry_after,
                }
            )
            log_event(
                "proxy.failover",
                logging.WARNING,
                id=self.id,
                credential=secret.label,
                status=error.status,
                retry_after=error.retry_after,
            )
        raise UpstreamFailed(self._last_error)

    async def _send(self, call: Call) -> UpstreamResponse:
        try:
            return await self.proxy.client.send(call.method, call.url, call.headers, call.content)
        except UpstreamTimeout:
            raise UpstreamFailed(
                ir.ErrorInfo("timeout", "the upstream did not answer in time", 504)
            ) from None
        except UpstreamError as exc:
            raise UpstreamFailed(
                ir.ErrorInfo("server", f"cannot reach the upstream: {exc}", 502)
            ) from None

    async def _error(self, response: UpstreamResponse) -> ir.ErrorInfo:
        raw = b""
        try:
            raw = await response.aread(_MAX_ERROR_BODY)
        except UpstreamError:
            pass
        finally:
            await response.aclose()
        try:
            body: Any = loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        return self.upstream.parse_error(response.status_code, body, retry_after(response.headers))

    async def events(self, response: UpstreamResponse) -> AsyncGenerator[list[ir.Event], None]:
        """The upstream's answer as batches of stream events, one batch per upstream read (a
        whole JSON answer is replayed as one batch)."""
        try:
            if not self._stream:
                yield self._whole(await self._read(response))
                return
            decoder = self.upstream.decoder()
            sse = SSEDecoder()
            ended = False
            drained = 0
            try:
                async for chunk in response.aiter_raw():
                    if ended:
                        # Read the body to its end so the connection goes back to the pool.
                        drained += len(chunk)
                        if drained > _MAX_ERROR_BODY:
                            return
                        continue
                    batch: list[ir.Event] = []
                    for name, data in sse.feed(chunk):
                        for event in decoder.feed(name, data):
                            batch.append(event)
                            if isinstance(event, ir.Finish | ir.Failure):
                                ended = True
                                break
                        if ended:
                            break
                    if batch:
                        yield batch
                if not ended:
                    tail = [e for name, data in sse.finish() for e in decoder.feed(name, data)]
                    tail += decoder.finish()
                    if not any(isinstance(e, ir.Finish | ir.Failure) for e in tail):
                        # The body ended (cleanly, as far as HTTP goes) without a final event.
                        self.outcome.outcome = "upstream-disconnected"
                        message = "the upstream stream ended without a complete answer"
                        tail.append(ir.Failure(ir.ErrorInfo("disconnect", message, 502)))
                    yield tail
            except UpstreamTimeout:
                yield [ir.Failure(ir.ErrorInfo("timeout", "the upstream stream stalled", 504))]
            except (UpstreamError, SSEError) as exc:
                self.outcome.outcome = "upstream-disconnected"
                message = f"the upstream stream broke: {exc}"
                yield [ir.Failure(ir.ErrorInfo("disconnect", message, 502))]
        finally:
            await response.aclose()

    def _whole(self, raw: bytes) -> list[ir.Event]:
        try:
            body = loads(raw)
        except ValueError:
            return [
                ir.Failure(ir.ErrorInfo("server", "the upstream answered with invalid JSON", 502))
            ]
        if isinstance(body, list) and body:  # Google's JSON-array stream shape
            body = body[-1]
        try:
            answer = self.upstream.parse_response(body if isinstance(body, dict) else {})
        except (AttributeError, KeyError, TypeError, ValueError, IndexError) as exc:
            message = f"the proxy cannot read the upstream's answer: {exc!r}"
            return [ir.Failure(ir.ErrorInfo("server", message, 502))]
        return ir.response_events(answer)

    async def _read(self, response: UpstreamResponse) -> bytes:
        try:
            raw = await response.aread(_MAX_BODY)
        except UpstreamTimeout:
            raise UpstreamFailed(
                ir.ErrorInfo("timeout", "the upstream did not answer in time", 504)
            ) from None
        except UpstreamError as exc:
            raise UpstreamFailed(
                ir.ErrorInfo("disconnect", f"the upstream broke: {exc}", 502)
            ) from None
        if len(raw) > _MAX_BODY:
            raise UpstreamFailed(ir.ErrorInfo("server", "the upstream answer is too large", 502))
        return raw

    def note(self, event: ir.Event) -> None:
        usage = event.usage if isinstance(event, ir.Start | ir.Finish) else None
        if usage is not None:
            self.outcome.usage = self.outcome.usage.merge(usage)
        elif isinstance(event, ir.Failure):
            self.outcome.status = event.error.status
            if self.outcome.outcome == "complete":
                self.outcome.outcome = "error"

    def record(self) -> None:
        out = self.outcome
        self.proxy.usage.record(
            {
                "id": self.id,
                "client_wire": self.client.wire,
                "target_wire": self.target.wire,
                "provider": self.proxy.profile.provider,
                "profile": self.proxy.profile.name,
                "model": self.target.model,
                "stream": self.request.stream,
                "status": out.status,
                "outcome": out.outcome,
                "input_tokens": out.usage.input_tokens,
                "output_tokens": out.usage.output_tokens,
                "cache_read_tokens": out.usage.cache_read_tokens,
                "cost_usd": cost(out.usage, self.proxy.profile.prices),
                "latency_ms": round((time.monotonic() - self.started) * 1000, 2),
                "credential": out.credential,
                "failovers": out.failovers,
            }
        )
