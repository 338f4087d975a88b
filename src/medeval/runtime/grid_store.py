"""The grid cache's storage format: no pickle, verified on read.

A finished grid run is stored as two files named by its key: ``<key>.npz`` holds every numpy array of the result
(written and read with ``allow_pickle=False``) and ``<key>.json`` holds everything else as tagged JSON, the key
itself, the sha256 of the ``.npz`` bytes and a content digest: the sha256 of the key, the key's parts (the code
and environment digests among them), the canonical JSON of the value and the ``.npz`` digest, bound together
(:func:`content_digest`). Reading never executes anything from the files: JSON is data, arrays of ``object`` dtype
are refused on write and on read, and a dataclass is rebuilt only when its class lives in ``medeval`` (by calling
its constructor with the stored fields). An entry whose key, checksum, content digest or format does not match is
reported and recomputed, never used: a truncated or flipped file, an edited value (``accuracy`` set to 0.0), two
entries swapped, or an entry whose key field was edited to match its new name.

The digest is not a signature: whoever can write the cache can also recompute it. An HMAC under a
per-installation key would stop that only if the key were unreadable to that person, and the cache lives in the
user's own run store beside anything such a key would be kept in; so the digest guards against damage and stray
edits (bit rot, a hand edit, a copied file), not against a deliberate forger with the user's permissions.

What can be stored: ``None``, booleans, integers, floats (NaN and infinities included), strings, lists, tuples,
dicts (any hashable JSON-able keys), numpy arrays and scalars of non-object dtype, pandas ``DataFrame`` and
``Series`` (columns of numbers, booleans or strings), and ``medeval`` dataclasses of those.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import io
import json
import math
from pathlib import Path
from typing import Any

from medeval._files import atomic_write_bytes

FORMAT = "medeval-grid-entry/2"


class GridEntryError(ValueError):
    """A stored grid entry cannot be used: missing, corrupt, for another key, or of an unknown format."""


class _Encoder:
    def __init__(self):
        self.arrays: dict[str, Any] = {}

    def array(self, value) -> dict:
        import numpy as np

        arr = np.asarray(value)
        if arr.dtype.hasobject:
            raise TypeError("grid results may not hold numpy arrays of dtype object (they would need pickle)")
        name = f"a{len(self.arrays)}"
        self.arrays[name] = arr
        return {"__ndarray__": name}

    def encode(self, value: Any) -> Any:
        import numpy as np

        if value is None or isinstance(value, bool | str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else {"__float__": repr(value)}
        if isinstance(value, np.ndarray):
            return self.array(value)
        if isinstance(value, np.generic):
            if isinstance(value, np.bool_):
                return bool(value)
            return {"__scalar__": str(value.dtype), "value": self.encode(value.item())}
        if isinstance(value, list):
            return [self.encode(v) for v in value]
        if isinstance(value, tuple):
            return {"__tuple__": [self.encode(v) for v in value]}
        if isinstance(value, dict):
            if all(isinstance(k, str) and not k.startswith("__") for k in value):
                return {k: self.encode(v) for k, v in value.items()}
            return {"__dict__": [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover
            pd = None
        if pd is not None and isinstance(value, pd.DataFrame):
            return {"__dataframe__": {
                "columns": self.encode(list(value.columns)),
                "index": self._pandas_values(value.index),
                "index_name": self.encode(value.index.name),
                "data": [self._pandas_values(value[c]) for c in value.columns],
            }}
        if pd is not None and isinstance(value, pd.Series):
            return {"__series__": {"name": self.encode(value.name), "index": self._pandas_values(value.index),
                                   "index_name": self.encode(value.index.name),
                                   "data": self._pandas_values(value)}}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            cls = type(value)
            if not cls.__module__.startswith("medeval"):
                raise TypeError(f"grid results may hold medeval dataclasses only, not {cls.__module__}.{cls.__name__}")
            return {"__dataclass__": f"{cls.__module__}:{cls.__qualname__}",
                    "fields": {f.name: self.encode(getattr(value, f.name)) for f in dataclasses.fields(value)
                               if f.init}}
        raise TypeError(f"grid results cannot store a {type(value).__module__}.{type(value).__name__} "
                        "without pickle; return arrays, numbers, strings, lists, dicts or DataFrames")

    def _pandas_values(self, values) -> dict:
        import numpy as np

        arr = np.asarray(values)
        if arr.dtype.hasobject:  # strings (or mixed Python objects): JSON, refused if not plain data
            return {"__list__": [self.encode(v.item() if isinstance(v, np.generic) else v) for v in arr.tolist()]}
        return self.array(arr)


def _decode(value: Any, arrays) -> Any:
    import numpy as np

    if isinstance(value, list):
        return [_decode(v, arrays) for v in value]
    if not isinstance(value, dict):
        return value
    if "__ndarray__" in value:
        return arrays[value["__ndarray__"]]
    if "__float__" in value:
        return float(value["__float__"])
    if "__scalar__" in value:
        return np.dtype(value["__scalar__"]).type(_decode(value["value"], arrays))
    if "__tuple__" in value:
        return tuple(_decode(v, arrays) for v in value["__tuple__"])
    if "__dict__" in value:
        return {_hashable(_decode(k, arrays)): _decode(v, arrays) for k, v in value["__dict__"]}
    if "__list__" in value:
        return [_decode(v, arrays) for v in value["__list__"]]
    if "__dataframe__" in value:
        import pandas as pd

        d = value["__dataframe__"]
        columns = _decode(d["columns"], arrays)
        index = pd.Index(_decode(d["index"], arrays), name=_decode(d["index_name"], arrays))
        data = {i: _decode(col, arrays) for i, col in enumerate(d["data"])}
        frame = pd.DataFrame(data, index=index)
        frame.columns = columns
        return frame
    if "__series__" in value:
        import pandas as pd

        d = value["__series__"]
        return pd.Series(_decode(d["data"], arrays), name=_decode(d["name"], arrays),
                         index=pd.Index(_decode(d["index"], arrays), name=_decode(d["index_name"], arrays)))
    if "__dataclass__" in value:
        module, _, qualname = value["__dataclass__"].partition(":")
        if not module.startswith("medeval"):
            raise GridEntryError(f"entry names a class outside medeval: {value['__dataclass__']}")
        cls: Any = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        if not dataclasses.is_dataclass(cls):
            raise GridEntryError(f"entry names {value['__dataclass__']}, which is not a dataclass")
        return cls(**{k: _decode(v, arrays) for k, v in value["fields"].items()})
    return {k: _decode(v, arrays) for k, v in value.items()}


def _hashable(value):
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def entry_paths(cache: Path, key: str) -> tuple[Path, Path]:
    return cache / f"{key}.json", cache / f"{key}.npz"


def content_digest(key: str, key_parts: dict, payload: Any, npz_sha256: str) -> str:
    """sha256 of an entry's key, key parts, value (canonical JSON: sorted keys, no whitespace) and ``.npz``
    digest, each length-prefixed so that no two different entries share the byte string."""
    h = hashlib.sha256()
    for part in (key, json.dumps(key_parts, sort_keys=True, separators=(",", ":"), allow_nan=False),
                 json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False), npz_sha256):
        data = str(part).encode()
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def write_entry(cache: Path, key: str, value: Any, key_parts: dict | None = None) -> None:
    """Store ``value`` under ``key`` atomically: the ``.npz`` first, then the ``.json`` that commits it."""
    import numpy as np

    enc = _Encoder()
    payload = enc.encode(value)
    buffer = io.BytesIO()
    np.savez(buffer, **enc.arrays)
    blob = buffer.getvalue()
    npz_sha256 = hashlib.sha256(blob).hexdigest()
    parts = key_parts or {}
    meta = {"format": FORMAT, "key": key, "key_parts": parts, "npz_sha256": npz_sha256,
            "content_sha256": content_digest(key, parts, payload, npz_sha256), "value": payload}
    text = json.dumps(meta, allow_nan=False)
    json_path, npz_path = entry_paths(cache, key)
    for path, data in ((npz_path, blob), (json_path, text.encode())):
        atomic_write_bytes(path, data)


def read_entry(cache: Path, key: str) -> Any:
    """The value stored under ``key``; :class:`GridEntryError` says why an entry present cannot be used."""
    import numpy as np

    json_path, npz_path = entry_paths(cache, key)
    try:
        meta = json.loads(json_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GridEntryError(f"{json_path.name}: not a readable entry ({exc.__class__.__name__})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise GridEntryError(f"{json_path.name}: unknown format {meta.get('format') if isinstance(meta, dict) else '?'}")
    if meta.get("key") != key:
        raise GridEntryError(f"{json_path.name}: stores key {str(meta.get('key'))[:12]}, not {key[:12]}")
    try:
        blob = npz_path.read_bytes()
    except OSError as exc:
        raise GridEntryError(f"{npz_path.name}: missing ({exc.__class__.__name__})") from None
    if hashlib.sha256(blob).hexdigest() != meta.get("npz_sha256"):
        raise GridEntryError(f"{npz_path.name}: checksum mismatch (the file was changed or truncated)")
    try:
        expected = content_digest(key, meta.get("key_parts") or {}, meta.get("value"), str(meta.get("npz_sha256")))
    except (TypeError, ValueError) as exc:
        raise GridEntryError(f"{json_path.name}: cannot be digested ({exc.__class__.__name__})") from None
    if expected != meta.get("content_sha256"):
        raise GridEntryError(f"{json_path.name}: content digest mismatch (a value, key or key part was edited)")
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        return _decode(meta["value"], arrays)
    except GridEntryError:
        raise
    except Exception as exc:  # a malformed payload: report, recompute
        raise GridEntryError(f"{json_path.name}: cannot be decoded ({exc.__class__.__name__}: {exc})") from None
