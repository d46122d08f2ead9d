"""Result caches bounded in entries and in bytes: the server's memory reaches a plateau (issue 21, part 7).

``st.cache_data`` bounds a cache by its number of entries only. A page's result for one scenario (a hardware
comparison, a deployment search, a sensitivity tornado) is a few hundred kB to several MB, so the caches of all pages
together (about 380 entries) could hold gigabytes before the first eviction: the reliability run of issue 21 measured
~7 MB more server memory per distinct scenario, with no plateau after 150 sessions (1.94 GB).

:func:`cached` is ``st.cache_data``'s contract (results keyed by the arguments, ``_``-prefixed arguments left out of
the key, a copy returned on every hit, a spinner while computing) with two bounds: ``max_entries`` per function and
one byte budget for every cache of the process (:data:`MAX_CACHE_BYTES`), the least recently used entries going first
whatever page made them. A result is stored pickled (as ``st.cache_data`` stores it), so its size is known exactly;
one larger than :data:`MAX_ENTRY_BYTES` is returned, not kept. Entries expire after ``ttl`` seconds.

``benchmarks/load_sessions.py`` opens 500 sessions on distinct scenarios and shows the resident size level off.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import pickle
import threading
import time
from collections import OrderedDict

MAX_CACHE_BYTES = 256 * 2**20
"""Bytes of pickled results kept across every cache of the process (LRU across caches). [B]"""
MAX_ENTRY_BYTES = 32 * 2**20
"""Largest single result kept; a larger one is computed and returned every time. [B]"""

_lock = threading.Lock()
_entries: "OrderedDict[tuple, tuple[float, bytes]]" = OrderedDict()  # (function, key) -> (expiry time, pickle)
_per_function: dict[str, int] = {}
_total = [0]


def cache_bytes() -> int:
    """Bytes held by every cache of the process now. [B]"""
    return _total[0]


def cache_entries() -> int:
    """Entries held by every cache of the process now."""
    return len(_entries)


def clear() -> None:
    """Empty every cache (tests, and the Assumptions page when the catalog changes nothing it depends on)."""
    with _lock:
        _entries.clear()
        _per_function.clear()
        _total[0] = 0


def _drop(key: tuple) -> None:
    _, data = _entries.pop(key)
    _total[0] -= len(data)
    _per_function[key[0]] -= 1


def _key(fn, sig: inspect.Signature, args, kwargs) -> tuple:
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    kept = tuple((k, v) for k, v in bound.arguments.items() if not k.startswith("_"))
    try:
        blob = pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an argument that cannot be pickled is keyed by its text
        blob = repr(kept).encode("utf-8", "backslashreplace")
    return f"{fn.__module__}.{fn.__qualname__}", hashlib.blake2b(blob, digest_size=20).hexdigest()


def cached(*, max_entries: int, ttl: float, show_spinner: bool | str = False, max_bytes: int | None = None):
    """Decorator: memoize a page's computation, bounded in entries (``max_entries`` for this function) and bytes
    (this function's share of :data:`MAX_CACHE_BYTES`, ``max_bytes`` if smaller), entries living ``ttl`` seconds.

    Parameters
    ----------
    max_entries : int >= 1
    ttl : float > 0 [s]
    show_spinner : bool or str
        As ``st.cache_data``'s: a text shown while a miss is computed.
    max_bytes : int, optional
        A smaller byte bound for this function's entries. [B]
    """
    if max_entries < 1 or ttl <= 0:
        raise ValueError("max_entries >= 1 and ttl > 0")

    def decorate(fn):
        sig = inspect.signature(fn)
        name = f"{fn.__module__}.{fn.__qualname__}"
        limit = min(MAX_CACHE_BYTES, max_bytes or MAX_CACHE_BYTES)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            key = _key(fn, sig, args, kwargs)
            return _through(key, name, lambda: _compute(fn, args, kwargs, show_spinner), max_entries, ttl, limit)

        wrapper.clear = lambda: [_drop(k) for k in [k for k in list(_entries) if k[0] == name]]  # type: ignore[attr-defined]
        return wrapper
    return decorate


def _through(key: tuple, name: str, compute, max_entries: int, ttl: float, limit: int):
    """The value kept under ``key`` (a copy), else ``compute()`` kept under it (bounded as :func:`cached` says)."""
    now = time.monotonic()
    with _lock:
        hit = _entries.get(key)
        if hit is not None and hit[0] > now:
            _entries.move_to_end(key)
            data = hit[1]
        else:
            data = None
            if hit is not None:
                _drop(key)
    if data is not None:
        return pickle.loads(data)  # a copy, as st.cache_data returns
    value = compute()
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an unpicklable result is returned, not kept
        return value
    if len(data) > min(limit, MAX_ENTRY_BYTES):
        return value
    with _lock:
        if key in _entries:
            _drop(key)
        _entries[key] = (now + ttl, data)
        _total[0] += len(data)
        _per_function[name] = _per_function.get(name, 0) + 1
        _evict(name, max_entries, limit, now)
    return value


def file_stamp(path) -> tuple:
    """(path, modification time [ns], size [B]) of a file, or (path, None, None) if absent: in a cache key, a file
    that changes on disk is a new key."""
    import os
    try:
        st_ = os.stat(path)
    except OSError:
        return (str(path), None, None)
    return (str(path), st_.st_mtime_ns, st_.st_size)


def digest(*parts) -> str:
    """A short content hash of picklable values (frames included), for a :func:`memo` key."""
    return hashlib.blake2b(pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL), digest_size=20).hexdigest()


def memo(fn, *args, key, files=(), max_entries: int = 64, ttl: float = 3600.0, **kwargs):
    """``fn(*args, **kwargs)`` kept in the same bounded store as :func:`cached`, under ``key``: the one way a page or
    component caches a call it does not own (a table reader, a formatter, an analysis reading a frame).

    Parameters
    ----------
    fn : callable
        Pure: its result depends on ``key`` (and the ``files``) only.
    key : picklable, or None
        Everything the result depends on (e.g. the catalog token and the scenario, or :func:`digest` of a frame).
        The arguments themselves are not hashed (a catalog is large). None: call ``fn`` uncached.
    files : iterable of paths
        Files the result is read from: their :func:`file_stamp` joins the key, so an edited file is read again.
    max_entries, ttl
        As in :func:`cached` (per ``fn``).

    Returns
    -------
    The result, a copy on a hit (as ``st.cache_data`` returns).
    """
    if key is None:  # nothing identifies the inputs (e.g. a catalog that is not the session's): not cached
        return fn(*args, **kwargs)
    name = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"
    full = (key, tuple(file_stamp(f) for f in files))
    k = (name, hashlib.blake2b(pickle.dumps(full, protocol=pickle.HIGHEST_PROTOCOL), digest_size=20).hexdigest())
    return _through(k, name, lambda: fn(*args, **kwargs), max_entries, ttl, MAX_CACHE_BYTES)


def _function_bytes(name: str) -> int:
    return sum(len(d) for (f, _), (_, d) in _entries.items() if f == name)


def _evict(name: str, max_entries: int, limit: int, now: float) -> None:
    """Drop expired entries, then this function's oldest beyond its bounds, then the oldest of any function until the
    process's budget holds (called with the lock held)."""
    for k in [k for k, (expiry, _) in _entries.items() if expiry <= now]:
        _drop(k)
    mine = [k for k in _entries if k[0] == name]  # oldest first
    while len(mine) > max_entries or (limit < MAX_CACHE_BYTES and _function_bytes(name) > limit and len(mine) > 1):
        _drop(mine.pop(0))
    while _total[0] > MAX_CACHE_BYTES and len(_entries) > 1:
        _drop(next(iter(_entries)))


def _compute(fn, args, kwargs, show_spinner):
    if not show_spinner:
        return fn(*args, **kwargs)
    import streamlit as st
    with st.spinner(show_spinner if isinstance(show_spinner, str) else "Running..."):
        return fn(*args, **kwargs)


__all__ = ["cached", "memo", "digest", "file_stamp", "cache_bytes", "cache_entries", "clear", "MAX_CACHE_BYTES",
           "MAX_ENTRY_BYTES"]
