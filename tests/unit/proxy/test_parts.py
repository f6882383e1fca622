"""The proxy's small pure parts: SSE framing, signature envelopes, schema cleaning, credentials,
redaction and cost."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from corral.errors import ConfigError
from corral.proxy import Credential, Prices, parse_profile
from corral.proxy import _ir as ir
from corral.proxy._common import clean_schema
from corral.proxy._credentials import CredentialPool
from corral.proxy._sse import SSEDecoder, SSEError
from corral.proxy._usage import cost, redact
from corral.proxy._wires import CONVERTERS

STREAM = (
    b'event: message_start\ndata: {"a":1}\n\n'
    b"data: line one\r\ndata: line two\r\n\r\n"
    b': a comment\nid: 7\nretry: 10\ndata: {"\xc3\xa9":2}\n\n'
    b"data: [DONE]\n\n"
)


def test_sse_decoder_is_independent_of_chunk_boundaries() -> None:
    whole = SSEDecoder().feed(STREAM)
    assert whole == [
        ("message_start", '{"a":1}'),
        ("", "line one\nline two"),
        ("", '{"é":2}'),
        ("", "[DONE]"),
    ]
    rng = random.Random(7)
    for _ in range(200):
        decoder, out, rest = SSEDecoder(), [], STREAM
        while rest:
            cut = rng.randint(1, len(rest))
            out += decoder.feed(rest[:cut])
            rest = rest[cut:]
        assert out + decoder.finish() == whole


def test_sse_decoder_bounds_line_length_and_flushes_an_unterminated_frame() -> None:
    with pytest.raises(SSEError):
        SSEDecoder(max_line=16).feed(b"data: " + b"x" * 64)
    decoder = SSEDecoder()
    assert decoder.feed(b"data: tail") == []
    assert decoder.finish() == [("", "tail")]


def test_signature_envelope_round_trip_and_garbage() -> None:
    wrapped = ir.wrap_signature("openai-responses", '{"id":"rs_1","enc":null}')
    assert ir.unwrap_signature(wrapped, "anthropic") == (
        "openai-responses",
        '{"id":"rs_1","enc":null}',
    )
    assert ir.unwrap_signature("native-sig", "anthropic") == ("anthropic", "native-sig")
    assert ir.unwrap_signature("corral1.!!!notbase64", "google") == (None, None)
    assert ir.unwrap_signature(ir.wrap_signature(None, "x"), "google") == (None, None)
    thinking = ir.Thinking("t", "sig", "anthropic")
    assert ir.signature_for(thinking, "anthropic") == "sig"
    assert ir.native_signature(thinking, "google") is None
    assert ir.unwrap_signature(ir.signature_for(thinking, "google"), "google") == (
        "anthropic",
        "sig",
    )


def test_schema_cleaning_keeps_properties_named_like_keywords() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"$id": {"type": "string", "examples": ["a"]}, "q": {"type": "string"}},
        "examples": [{"q": "x"}],
    }
    google = clean_schema(schema, "google")
    assert google == {
        "type": "object",
        "properties": {"$id": {"type": "string"}, "q": {"type": "string"}},
    }
    anthropic = clean_schema(schema, "anthropic")
    assert "$schema" not in anthropic and anthropic["examples"] == [{"q": "x"}]
    assert clean_schema(None, "openai-chat") == {"type": "object", "properties": {}}


def test_response_events_and_collector_are_inverse() -> None:
    response = ir.Response(
        "id1",
        "m",
        [
            ir.Thinking("hm", "sig", "anthropic"),
            ir.Text("hello"),
            ir.ToolUse("c1", "Bash", {"command": "ls"}),
            ir.ToolUse("c2", "Bash", {"command": "pwd"}),
        ],
        "tool_use",
        ir.Usage(3, 4),
    )
    collector = ir.Collector()
    for event in ir.response_events(response):
        collector.feed(event)
    assert collector.response() == response


@pytest.mark.parametrize("wire", list(CONVERTERS))
def test_converters_read_garbage_without_raising(wire: str) -> None:
    rng = random.Random(wire)
    atoms: list[object] = [None, 1, -1.5, "x", "\ud800", [], {}, True]
    keys = [
        "messages",
        "input",
        "contents",
        "tools",
        "content",
        "role",
        "parts",
        "type",
        "system",
        "choices",
        "delta",
    ]

    def value(depth: int) -> object:
        if depth > 3 or rng.random() < 0.3:
            return rng.choice(atoms)
        if rng.random() < 0.5:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(keys): value(depth + 1) for _ in range(rng.randint(0, 4))}

    conv = CONVERTERS[wire]
    for _ in range(300):
        body = {rng.choice(keys): value(0) for _ in range(3)}
        try:
            request = conv.parse_request(body, "m", False)
            conv.parse_response(body)
        except (AttributeError, KeyError, TypeError, ValueError):
            continue  # the app answers these with a 400 in the client's shape
        for target in CONVERTERS.values():
            json.dumps(target.build_request(request, "m"))
        decoder = conv.decoder()
        decoder.feed("", json.dumps(body))
        decoder.finish()


async def test_auth_command_is_cached_for_its_ttl(tmp_path: Path) -> None:
    counter = tmp_path / "n"
    command = f"echo x >> {counter}; echo token-$(wc -l < {counter})"
    now = [0.0]
    pool = CredentialPool(
        [Credential(label="cmd", auth_command=command, ttl=60)], clock=lambda: now[0]
    )
    assert (await pool.secret(0)).value == "token-1"
    assert (await pool.secret(0)).value == "token-1"
    now[0] = 61
    assert (await pool.secret(0)).value == "token-2"


async def test_credential_errors_name_the_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CORRAL_TEST_MISSING_KEY", raising=False)
    pool = CredentialPool(
        [Credential(api_key_env="CORRAL_TEST_MISSING_KEY"), Credential(auth_command="exit 3")]
    )
    with pytest.raises(ConfigError, match="CORRAL_TEST_MISSING_KEY"):
        await pool.secret(0)
    with pytest.raises(ConfigError, match="exited 3"):
        await pool.secret(1)


def test_bench_and_pick_honour_retry_after() -> None:
    now = [100.0]
    pool = CredentialPool([Credential(label="a"), Credential(label="b")], clock=lambda: now[0])
    pool.bench(0, 10)
    assert pool.pick() == (1, 0.0)
    pool.bench(1, 5)
    assert pool.pick() == (1, 5.0)
    now[0] = 111
    assert pool.pick() == (0, 0.0)


def test_redaction_and_cost() -> None:
    assert redact(
        {"headers": {"Authorization": "Bearer x", "x-api-key": "k", "accept": "y"}, "api_key": "z"}
    ) == {
        "headers": {"Authorization": "[redacted]", "x-api-key": "[redacted]", "accept": "y"},
        "api_key": "[redacted]",
    }
    kept = {"input_tokens": 3, "credential": "team-a", "model": "m"}
    assert redact(kept) == kept
    hidden = {"aws_session_token": "x", "x-goog-api-key": "y", "aws_secret_access_key": "z"}
    assert set(redact(hidden | {"token": "t"}).values()) == {"[redacted]"}
    usage = ir.Usage(input_tokens=1_000_000, output_tokens=500_000, cache_read_tokens=200_000)
    assert (
        cost(usage, Prices(input_per_mtok=3, output_per_mtok=15, cache_read_per_mtok=0.3))
        == 2.4 + 7.5 + 0.06
    )
    assert cost(usage, None) is None


def test_profiles_are_validated() -> None:
    profile = parse_profile(
        {"provider": "openai", "credentials": [{"label": "a", "api_key_env": "K"}]}, "p"
    )
    assert profile.name == "p" and profile.credentials[0].label == "a"
    with pytest.raises(ConfigError, match="unknown"):
        parse_profile({"provider": "openai", "bogus": 1}, "p")
    with pytest.raises(ConfigError):
        parse_profile({"provider": "nope"}, "p")
