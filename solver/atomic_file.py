"""Writing a file so that it is either the old file or the complete new one.

Scene files, CSV exports and the GUI's recovery files all go through
:func:`atomic_write`: the text goes to a temporary file in the same folder,
is flushed to disk, and is then renamed over the target (``os.replace``). A
failure at any point removes the temporary file and leaves the target as it
was — never a half-written file.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


def _new_file_mode(path: Path) -> int:
    """The mode the file would get from a plain ``open``: kept if it exists, else umask."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextmanager
def atomic_write(path: str | os.PathLike[str], newline: str | None = None) -> Iterator[TextIO]:
    """Open a UTF-8 text stream whose content replaces ``path`` when the block ends cleanly.

    Parameters
    ----------
    path : path-like
        The file to (re)write; its folder must exist.
    newline : str, optional
        Passed to ``open`` (``""`` for the csv module).
    """
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp_name, _new_file_mode(path))
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
