"""Path checks shared by the API: a missing file is a FileNotFoundError, before the engine runs."""

from __future__ import annotations

import errno
import os


def require_path(path: str | os.PathLike[str], what: str) -> str:
    """Returns `path` as a str; raises FileNotFoundError naming `what` when it does not exist."""
    text = os.fspath(path)
    if not os.path.exists(text):
        raise FileNotFoundError(errno.ENOENT, f"{text}: {what} not found", text)
    return text
