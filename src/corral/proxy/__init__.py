"""The translating model proxy: any harness's wire API in front of any provider's.

One internal representation (``_ir``), one converter module per wire API (``_anthropic``,
``_chat``, ``_responses``, ``_google``), providers (``_providers``), and a raw ASGI app
(``_app``) served by uvicorn (``_server``). See ``docs/proxy.md``.
"""

from ._app import ProxyApp, create_app
from ._config import (
    PROVIDER_KINDS,
    Credential,
    Prices,
    Profile,
    ProviderKind,
    ProxySettings,
    load_profile,
    load_profiles,
    parse_profile,
    providers_path,
)
from ._ir import WIRES, Wire
from ._server import ProxyServer, start_proxy
from ._usage import read_usage

__all__ = [
    "PROVIDER_KINDS",
    "WIRES",
    "Credential",
    "Prices",
    "Profile",
    "ProviderKind",
    "ProxyApp",
    "ProxyServer",
    "ProxySettings",
    "Wire",
    "create_app",
    "load_profile",
    "load_profiles",
    "parse_profile",
    "providers_path",
    "read_usage",
    "start_proxy",
]
