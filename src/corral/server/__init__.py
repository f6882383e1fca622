"""``corral serve``: the local service."""

from ._app import Settings, create_app

__all__ = ["Settings", "create_app"]
