"""Paths that arrive over HTTP: a session's ``cwd`` and attachments given by path.

* A ``cwd`` must be an existing absolute directory other than ``/`` (:func:`corral._paths.directory_problem`).
* An attachment is either uploaded bytes (``data``) or a ``path`` inside the session's project root
  (its ``cwd``). A relative path is taken from the root; the path is resolved (``..`` and every
  symlink) and must still lie inside the resolved root and name a regular file. The attachment is
  stored with the resolved path, so swapping the file for a symlink later points nowhere new.
  A session without a ``cwd`` has no project root and accepts uploaded bytes only.

Refusals are 422 with a message naming the path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import msgspec

from .._paths import directory_problem
from ..adapters.base import Attachment
from ._responses import Refusal


def check_cwd(cwd: str | None) -> None:
    if cwd is None:
        return
    problem = directory_problem(cwd)
    if problem:
        raise Refusal(422, "invalid_cwd", problem, cwd=cwd)


def confine_path(path: str, root: str) -> str:
    """``path`` resolved, if it is a regular file inside ``root``; else a 422 :class:`Refusal`."""
    real_root = os.path.realpath(root)
    candidate = path if os.path.isabs(path) else os.path.join(real_root, path)
    real = os.path.realpath(candidate)
    if os.path.commonpath([real, real_root]) != real_root:
        raise Refusal(
            422,
            "path_outside_project",
            f"attachment {path!r} is outside the session's project {root!r}; "
            "attach files inside the project, or upload their bytes",
            path=path,
        )
    if not os.path.isfile(real):
        raise Refusal(422, "path_not_a_file", f"attachment {path!r} is not a file", path=path)
    return real


def confine_attachments(
    attachments: Sequence[Attachment], root: str | None
) -> tuple[Attachment, ...]:
    out: list[Attachment] = []
    for att in attachments:
        if att.path is None:
            out.append(att)
            continue
        if att.data is not None:
            raise Refusal(
                422, "ValidationError", "an attachment has either a path or data, not both"
            )
        if root is None:
            raise Refusal(
                422,
                "path_outside_project",
                "this session has no project directory (cwd): upload the attachment's bytes",
                path=att.path,
            )
        out.append(msgspec.structs.replace(att, path=confine_path(att.path, root)))
    return tuple(out)
