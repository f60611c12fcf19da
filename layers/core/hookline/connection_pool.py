"""The deliverer's HTTP connection pool: httpcore's, with its per-request bookkeeping made cheap.

httpcore 1.0.9 walks its whole pool twice per request (when the request is queued and when
its response is closed), and each walk is quadratic: every idle connection counts the whole
pool again to decide whether it is surplus keep-alive (and miscounts: it compares all
connections, not idle ones, with `max_keepalive_connections`, so idle connections are closed
while busy ones fill the pool). Each walk also polls every idle socket for a server's close.
With ten connections that was a sixth of an attempt's client CPU; with a hundred, more than
the request itself. Fixes are proposed upstream (encode/httpcore#1035, not released) and
made in the httpx2 fork; until one is released for httpx, `DeliveryPool` overrides the one
method, on the pinned httpcore version (decision 0075).

What it does differently, and only this:

* surplus keep-alive is counted once per pass, among idle connections, oldest closed first;
* closed or expired connections are swept at most every `SWEEP_SECONDS`; in between, an
  idle connection is checked (its socket polled) only when it is about to be reused, so a
  request never goes out on a connection the server has closed.

Assignment otherwise follows httpcore's: reuse a connection to the origin, else open one
below `max_connections`, else close an idle one to make room.
"""

from __future__ import annotations

import time

import httpcore

# How often a pass sweeps every connection for a closed socket or an expired keep-alive.
SWEEP_SECONDS = 1.0


class DeliveryPool(httpcore.ConnectionPool):
    """`httpcore.ConnectionPool` whose assignment pass is linear in the pool's size."""

    _next_sweep = 0.0

    def _assign_requests_to_connections(self) -> list[httpcore.ConnectionInterface]:
        # Called by httpcore with the pool's lock held, whenever a request is queued or done.
        closing: list[httpcore.ConnectionInterface] = []
        connections = self._connections
        if time.monotonic() >= self._next_sweep:
            self._sweep(closing)
        idle = [connection for connection in connections if connection.is_idle()]
        surplus = len(idle) - self._max_keepalive_connections
        if surplus > 0:
            self._drop(idle[:surplus], closing)
            del idle[:surplus]
        for pool_request in self._requests:
            if not pool_request.is_queued():
                continue
            origin = pool_request.request.url.origin
            connection = self._reusable(origin, closing, idle)
            if connection is None:
                if len(connections) >= self._max_connections:
                    self._sweep(closing)  # a full pool: what is closed makes room first
                    idle = [c for c in idle if c in connections]
                if len(connections) >= self._max_connections and idle:
                    self._drop([idle.pop(0)], closing)
                if len(connections) >= self._max_connections:
                    continue  # the request waits for a connection to be released
                connection = self.create_connection(origin)
                connections.append(connection)
            pool_request.assign_to_connection(connection)
        return closing

    def _sweep(self, closing: list[httpcore.ConnectionInterface]) -> None:
        """Drop every closed connection, and close every expired one."""
        self._next_sweep = time.monotonic() + SWEEP_SECONDS
        kept = []
        for connection in self._connections:
            if connection.is_closed():
                continue
            if connection.has_expired():
                closing.append(connection)
            else:
                kept.append(connection)
        self._connections[:] = kept

    def _reusable(
        self,
        origin: httpcore.Origin,
        closing: list[httpcore.ConnectionInterface],
        idle: list[httpcore.ConnectionInterface],
    ) -> httpcore.ConnectionInterface | None:
        """The first connection to `origin` that can take a request; one found closed or
        expired on the way is dropped."""
        for connection in list(self._connections):
            if not (connection.can_handle_request(origin) and connection.is_available()):
                continue
            if connection.is_closed() or connection.has_expired():
                self._drop([connection], closing)
                if connection in idle:
                    idle.remove(connection)
                continue
            return connection
        return None

    def _drop(
        self,
        dropped: list[httpcore.ConnectionInterface],
        closing: list[httpcore.ConnectionInterface],
    ) -> None:
        for connection in dropped:
            self._connections.remove(connection)
            if not connection.is_closed():
                closing.append(connection)
