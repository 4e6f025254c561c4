"""Writing a small file whole: a crash or a power cut leaves the old content or the new, never half.

The key file, the settings file, exports, assistants' settings files and login items all go through
:func:`replace_file`, so each of them is written the same careful way.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["replace_file", "sync_folder"]


def replace_file(
    path: Path, data: bytes, *, mode: int = 0o600, before_replace: Callable[[], None] | None = None
) -> None:
    """Write ``data`` to ``path`` in one step.

    The bytes go to a temporary file beside ``path`` (created with ``mode``, whatever the umask),
    are flushed to disk, and the file is renamed over ``path``; then the folder is flushed so the
    rename itself survives a power cut. ``before_replace`` runs just before the rename: whatever it
    raises stops the write. On any failure the temporary file is removed and ``path`` is as it was.
    Raises :class:`OSError` for the caller to explain in its own words.
    """
    folder = path.parent
    fd, name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        if before_replace is not None:
            before_replace()
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    sync_folder(folder)


def sync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename or a new file in it) to disk, where the system allows it.

    Some file systems refuse to flush a folder, and Windows has no folder handles to flush: the
    files' own flushes still hold then.
    """
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
