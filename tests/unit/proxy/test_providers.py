"""Outbound request building for every provider kind, with fixed credentials and a frozen clock.

Bedrock, Vertex and Azure cannot be called from here; their URL, headers and signature are what
these tests pin. The Bedrock signature is recomputed independently (SigV4 from its spec).
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
from urllib.parse import urlsplit

import pytest

from corral.errors import ConfigError
from corral.proxy import Credential, Profile
from corral.proxy._credentials import Secret
from corral.proxy._providers import build_call, target

BODY = {"model": "ignored", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}


def secret(**fields: str) -> Secret:
    credential = Credential(**fields)  # type: ignore[arg-type]
    return Secret(0, credential, fields.get("api_key"))


def call(
    profile: Profile,
    key: Secret | None,
    stream: bool = True,
    client: str = "anthropic",
    headers: dict[str, str] | None = None,
    now: datetime.datetime | None = None,
):  # type: ignore[no-untyped-def]
    tgt = target(profile, "client-model")
    return build_call(profile, tgt, BODY, stream, key, headers or {}, client, now)  # type: ignore[arg-type]


def test_anthropic_direct_headers() -> None:
    c = call(
        Profile(provider="anthropic"), secret(api_key="sk-ant"), headers={"anthropic-beta": "b1"}
    )
    assert c.url == "https://api.anthropic.com/v1/messages"
    assert c.headers["x-api-key"] == "sk-ant"
    assert c.headers["anthropic-version"] == "2023-06-01"
    assert c.headers["anthropic-beta"] == "b1"
    assert c.stream


def test_openai_family_urls_and_bearer() -> None:
    chat = call(
        Profile(provider="openai", model="gpt-x"), secret(api_key="sk-oa"), client="openai-chat"
    )
    assert chat.url == "https://api.openai.com/v1/chat/completions"
    assert chat.headers["authorization"] == "Bearer sk-oa"
    responses = call(Profile(provider="openai", wire="openai-responses"), secret(api_key="k"))
    assert responses.url == "https://api.openai.com/v1/responses"
    ollama = call(Profile(provider="ollama"), None)
    assert ollama.url == "http://127.0.0.1:11434/v1/chat/completions"
    assert "authorization" not in ollama.headers
    custom = call(
        Profile(provider="openai-compatible", base_url="http://127.0.0.1:9000/v1/"),
        secret(api_key="x"),
    )
    assert custom.url == "http://127.0.0.1:9000/v1/chat/completions"
    with pytest.raises(ConfigError):
        call(Profile(provider="openai-compatible"), None)


def test_google_ai_studio() -> None:
    c = call(Profile(provider="google", model="gemini-pro"), secret(api_key="AIza"))
    assert (
        c.url
        == "https://generativelanguage.googleapis.com/v1beta/models/gemini-pro:streamGenerateContent?alt=sse"
    )
    assert c.headers["x-goog-api-key"] == "AIza"
    c = call(Profile(provider="google", model="gemini-pro"), secret(api_key="AIza"), stream=False)
    assert c.url.endswith("/models/gemini-pro:generateContent") and not c.stream


def test_azure_api_key_and_ad_token() -> None:
    profile = Profile(
        provider="azure", resource="myres", deployment="gpt4o", api_version="2024-10-21"
    )
    c = call(profile, secret(api_key="azkey"), client="openai-chat")
    assert (
        c.url
        == "https://myres.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21"
    )
    assert c.headers["api-key"] == "azkey" and "authorization" not in c.headers
    ad = Secret(
        0,
        Credential(auth_command="az account get-access-token --query accessToken -o tsv"),
        "eyJ.ad.token",
    )
    c = call(profile, ad)
    assert c.headers["authorization"] == "Bearer eyJ.ad.token" and "api-key" not in c.headers
    v1 = call(Profile(provider="azure", resource="myres", model="gpt-5"), secret(api_key="k"))
    assert v1.url == "https://myres.openai.azure.com/openai/v1/chat/completions"


def test_vertex_gemini_and_claude() -> None:
    token = Secret(0, Credential(adc=True), "ya29.token")
    gemini = call(
        Profile(provider="vertex", project="p1", region="us-central1", model="gemini-2.5-pro"),
        token,
    )
    assert gemini.url == (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p1/locations/us-central1"
        "/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    )
    assert gemini.headers["authorization"] == "Bearer ya29.token"
    claude = call(
        Profile(provider="vertex", project="p1", region="global", model="claude-sonnet-4@20250514"),
        token,
        stream=False,
    )
    assert claude.url == (
        "https://aiplatform.googleapis.com/v1/projects/p1/locations/global"
        "/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict"
    )
    body = json.loads(claude.content)
    assert body["anthropic_version"] == "vertex-2023-10-16" and "model" not in body


def _sigv4(
    method: str,
    url: str,
    headers: dict[str, str],
    payload: bytes,
    key_id: str,
    secret_key: str,
    region: str,
    when: datetime.datetime,
) -> str:
    """SigV4 written from AWS's published algorithm, independent of botocore."""
    parts = urlsplit(url)
    amz_date = when.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    signed = {k.lower(): v.strip() for k, v in headers.items()}
    names = ";".join(sorted(signed))
    canonical_headers = "".join(f"{k}:{signed[k]}\n" for k in sorted(signed))
    # SigV4 encodes each path segment once more (botocore does, except for s3).
    path = "/".join(
        __import__("urllib.parse").parse.quote(seg, safe="-_.~") for seg in parts.path.split("/")
    )
    canonical = "\n".join(
        [method, path, parts.query, canonical_headers, names, hashlib.sha256(payload).hexdigest()]
    )
    scope = f"{day}/{region}/bedrock/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    k = f"AWS4{secret_key}".encode()
    for piece in (day, region, "bedrock", "aws4_request"):
        k = hmac.new(k, piece.encode(), hashlib.sha256).digest()
    signature = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    return f"AWS4-HMAC-SHA256 Credential={key_id}/{scope}, SignedHeaders={names}, Signature={signature}"


def test_bedrock_sigv4_with_fixed_credentials_and_frozen_clock() -> None:
    when = datetime.datetime(2026, 1, 2, 3, 4, 5)
    cred = Credential(
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    )
    profile = Profile(
        provider="bedrock", region="us-west-2", model="anthropic.claude-sonnet-4-20250514-v1:0"
    )
    c = call(profile, Secret(0, cred, None), stream=True, headers={"anthropic-beta": "x"}, now=when)
    assert (
        c.url
        == "https://bedrock-runtime.us-west-2.amazonaws.com/model/anthropic.claude-sonnet-4-20250514-v1%3A0/invoke"
    )
    assert not c.stream  # InvokeModel, answered whole; the proxy streams it to the client
    body = json.loads(c.content)
    assert body["anthropic_version"] == "bedrock-2023-05-31"
    assert "model" not in body and "stream" not in body
    assert "anthropic-beta" not in c.headers
    assert c.headers["x-amz-date"] == "20260102T030405Z"
    expected = _sigv4(
        "POST",
        c.url,
        {
            "host": "bedrock-runtime.us-west-2.amazonaws.com",
            "x-amz-date": "20260102T030405Z",
            "content-type": "application/json",
            "accept": "application/json",
        },
        c.content,
        "AKIDEXAMPLE",
        cred.aws_secret_access_key or "",
        "us-west-2",
        when,
    )
    assert c.headers["authorization"] == expected
    # The same inputs sign the same way; another clock signs differently.
    again = call(profile, Secret(0, cred, None), now=when)
    later = call(profile, Secret(0, cred, None), now=when + datetime.timedelta(seconds=1))
    assert again.headers["authorization"] == expected != later.headers["authorization"]


def test_bedrock_api_key_is_a_bearer_token() -> None:
    c = call(
        Profile(provider="bedrock", region="eu-west-1", model="m"),
        secret(api_key="bedrock-api-key"),
    )
    assert c.headers["authorization"] == "Bearer bedrock-api-key"


def test_profiles_refuse_what_they_cannot_honour() -> None:
    with pytest.raises(ConfigError, match="region"):
        call(Profile(provider="bedrock", model="m"), None)
    with pytest.raises(ConfigError, match="project"):
        call(Profile(provider="vertex", model="gemini"), None)
    with pytest.raises(ConfigError, match="resource"):
        call(Profile(provider="azure", model="m"), secret(api_key="k"))
    with pytest.raises(ConfigError, match="openai-chat or openai-responses"):
        target(Profile(provider="openai", wire="google"), "m")


@pytest.mark.parametrize(
    ("profile", "missing"),
    [
        (Profile(provider="openai-compatible"), "base_url"),
        (Profile(provider="bedrock", model="m"), "region"),
        (Profile(provider="bedrock", region="us-east-1"), "model"),
        (Profile(provider="vertex", region="us-central1", model="gemini"), "project"),
        (Profile(provider="azure"), "resource"),
        (Profile(provider="openai", wire="google"), "openai-chat or openai-responses"),
    ],
)
def test_a_proxy_refuses_to_start_on_a_profile_it_cannot_serve(
    profile: Profile, missing: str
) -> None:
    from corral.proxy import ProxyServer, ProxySettings

    with pytest.raises(ConfigError, match=missing):
        ProxyServer(ProxySettings(profile=profile, usage_log=""))
