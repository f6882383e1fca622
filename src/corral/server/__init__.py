"""``corral serve``: the local service."""

from ._app import Settings, create_app
from ._run import run_server

__all__ = ["Settings", "create_app", "run_server"]
