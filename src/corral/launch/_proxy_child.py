"""The launcher's proxy process: ``python -m corral.launch._proxy_child``.

Its whole configuration is in its environment (``CORRAL_PROXY_PROFILE_JSON``: the profile as JSON,
``CORRAL_PROXY_TOKEN``, ``CORRAL_PROXY_PORT``, ``CORRAL_PROXY_LOG_LEVEL``,
``CORRAL_PROXY_USAGE_LOG``); once listening it prints one JSON line ``{"base_url": ..., "port":
...}`` and serves until SIGTERM/SIGINT. It exits by itself when the launcher that started it is
gone (parent-death signal, and a check of the parent pid against ``CORRAL_PROXY_PARENT``).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time

_LEVELS = {"debug": "DEBUG", "info": "INFO", "warn": "WARNING", "error": "ERROR"}


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)


def main() -> int:
    from ..proxy import ProxyServer, ProxySettings, parse_profile

    env = os.environ
    profile = parse_profile(json.loads(env["CORRAL_PROXY_PROFILE_JSON"]), "launch", "corral launch")
    level = _LEVELS.get(env.get("CORRAL_PROXY_LOG_LEVEL", "warn"), "WARNING")
    logging.basicConfig(level=level, format="corral proxy: %(message)s", stream=sys.stderr)
    kwargs: dict[str, object] = {}
    if env.get("CORRAL_PROXY_USAGE_LOG") is not None:
        kwargs["usage_log"] = env["CORRAL_PROXY_USAGE_LOG"]
    settings = ProxySettings(
        profile=profile,
        token=env["CORRAL_PROXY_TOKEN"],
        port=int(env.get("CORRAL_PROXY_PORT", "0") or 0),
        **kwargs,  # type: ignore[arg-type]
    )
    parent = int(env.get("CORRAL_PROXY_PARENT", "0") or 0)
    if parent:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()

    def ready(server: ProxyServer) -> None:
        sys.stdout.write(json.dumps({"base_url": server.base_url, "port": server.port}) + "\n")
        sys.stdout.flush()

    ProxyServer(settings).serve_forever(on_ready=ready)
    return 0


if __name__ == "__main__":
    sys.exit(main())
