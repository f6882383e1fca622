"""``corral serve``: the local service."""

from ._app import Settings, create_app
from ._limits import Limits
from ._run import run_server

__all__ = ["Limits", "Settings", "create_app", "run_server"]
