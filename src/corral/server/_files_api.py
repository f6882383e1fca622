"""``GET /api/sessions/{id}/files?q=``: ``@file`` completions, inside the session's project only.

The composer asks for the files whose project-relative path contains ``q`` (case-insensitive).
The walk starts at the session's ``cwd``, never follows a symlink out of it (every candidate is
resolved and must stay under the resolved root), skips hidden directories and the usual bulky
ones, and is bounded: at most :data:`MAX_VISITED` entries are looked at and :data:`MAX_RESULTS`
returned, shortest paths first. A session without a ``cwd`` has no project: the list is empty.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ._responses import json_response

MAX_VISITED = 20_000
MAX_RESULTS = 50
MAX_QUERY = 200
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", "dist", "build", "target"})


class FileMatches(msgspec.Struct, frozen=True, kw_only=True):
    root: str | None
    files: list[str]
    """Project-relative paths, ``/``-separated."""
    truncated: bool = False
    """The walk hit its bound: there may be more matches."""


def project_files(root: str, query: str) -> FileMatches:
    """Files under ``root`` whose relative path contains ``query``; symlinks never lead out."""
    real_root = os.path.realpath(root)
    if not os.path.isdir(real_root):
        return FileMatches(root=None, files=[])
    needle = query.lower()
    found: list[str] = []
    visited = 0
    truncated = False
    for directory, dirs, files in os.walk(real_root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(files):
            visited += 1
            if visited > MAX_VISITED:
                truncated = True
                break
            path = os.path.join(directory, name)
            real = os.path.realpath(path)
            if os.path.commonpath([real, real_root]) != real_root or not os.path.isfile(real):
                continue
            rel = os.path.relpath(path, real_root).replace(os.sep, "/")
            if needle in rel.lower():
                found.append(rel)
        if truncated:
            break
    found.sort(key=lambda p: (len(p), p))
    if len(found) > MAX_RESULTS:
        found, truncated = found[:MAX_RESULTS], True
    return FileMatches(root=real_root, files=found, truncated=truncated)


async def list_files(request: Request) -> Response:
    record = request.app.state.manager.get_session(str(request.path_params["session_id"]))
    query = request.query_params.get("q", "")[:MAX_QUERY]
    if not record.cwd:
        return json_response(FileMatches(root=None, files=[]))
    return json_response(await asyncio.to_thread(project_files, record.cwd, query))


ROUTES = [Route("/api/sessions/{session_id}/files", list_files, methods=["GET"])]

OPENAPI_TYPES: tuple[Any, ...] = (FileMatches,)
