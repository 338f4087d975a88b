"""What every layer of the package shares about files: the repository root, and files written whole or not at all.

The one implementation of each, below every layer (``tests/test_layers.py`` lets ``data`` and ``runtime`` import it).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def project_root(*, require_params: bool = True) -> Path:
    """The repository root: ``$MEDEVAL_ROOT`` if set, else the checkout that holds this package (installed in
    editable mode from ``src/``, so two levels above it). With ``require_params`` (the default) a root without a
    ``params/`` folder is refused with a RuntimeError that says to set ``MEDEVAL_ROOT``."""
    env = os.environ.get("MEDEVAL_ROOT")
    root = Path(env) if env else Path(__file__).resolve().parents[2]
    if require_params and not (root / "params").is_dir():
        raise RuntimeError(
            f"medeval project root {root} has no params/ folder; set MEDEVAL_ROOT to the repository checkout"
        )
    return root


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old content or the new, never a partial file, and a
    crash right after the call loses neither: a temporary file named for this process and thread in the same
    folder, flushed and fsync'ed, then one rename (``os.replace``, atomic on POSIX and Windows). The temporary
    file is removed if the write fails."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """:func:`atomic_write_bytes` of ``text`` encoded with ``encoding``."""
    atomic_write_bytes(path, text.encode(encoding))
