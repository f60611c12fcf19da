"""The receiver's sources, kept in the process for a few seconds (docs/decisions/0074).

A request whose source was read less than `ttl` seconds ago is verified with that copy: no
round trip, no unsealing. What that allows, and no more:

* a source disabled or deleted, or a secret rotated out, is still accepted for at most `ttl`
  after the change (the copy is dropped when it is older);
* a new source, a re-enabled one and a newly added secret work at once: only enabled sources
  are kept, and a request the copy refuses is checked again against a fresh read
  (`ingest.receive_inbound`), so a rotation's new secret never waits for the copy to expire.

The copy holds the source's secrets unsealed, in this process's memory only, which already
holds the data key that unseals every secret (`hookline.secretbox`); an expired copy is dropped
at the next miss, and the number kept is bounded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from hookline.db import Connection
from hookline.repositories.sources import Source, get_source

MAX_SOURCES = 1024


class SourceCache:
    """Enabled sources by id, each kept `ttl` seconds from its read. Thread-safe."""

    def __init__(
        self,
        ttl: float,
        *,
        max_sources: int = MAX_SOURCES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.max_sources = max_sources
        self.clock = clock
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[float, Source]] = {}
        self._next_sweep = 0.0

    def get(self, conn: Connection, source_id: str) -> tuple[Source, bool]:
        """The source (NotFound if unknown) and whether it is a kept copy rather than a read."""
        now = self.clock()
        with self._lock:
            kept = self._kept.get(source_id)
        if kept is not None and now - kept[0] < self.ttl:
            return kept[1], True
        return self.read(conn, source_id), False

    def read(self, conn: Connection, source_id: str) -> Source:
        """Read the source now, and keep it if it is enabled (forget it otherwise)."""
        now = self.clock()
        try:
            source = get_source(conn, source_id)
        except Exception:
            self.forget(source_id)
            raise
        with self._lock:
            self._kept.pop(source_id, None)
            if source.enabled and self.ttl > 0:
                self._sweep(now)
                self._kept[source_id] = (now, source)
        return source

    def forget(self, source_id: str) -> None:
        """Drop the copy of a source (its secret changed here, e.g. a handshake adopted one)."""
        with self._lock:
            self._kept.pop(source_id, None)

    def _sweep(self, now: float) -> None:
        """Drop expired copies (at most once per `ttl`, or when full), then the oldest while
        at the bound (lock held)."""
        if now >= self._next_sweep or len(self._kept) >= self.max_sources:
            self._next_sweep = now + self.ttl
            for key in [k for k, (at, _) in self._kept.items() if now - at >= self.ttl]:
                del self._kept[key]
        while len(self._kept) >= self.max_sources:
            del self._kept[next(iter(self._kept))]  # the oldest read: dicts keep their order
