"""The dev stack's live status line.

On a terminal the line is redrawn in place every second; otherwise (piped, in CI, under a
test harness) a plain line is printed every few seconds when something changed. The numbers
come from the database (events, deliveries by state, unfinished deliveries per tenant group),
the queues (dead-letter depth) and the event sources (batches in flight).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from hookline.repositories.devstack import StatusCounts


@dataclass(frozen=True)
class Snapshot:
    """Everything one status line shows."""

    counts: StatusCounts | None  # None: the database did not answer
    dead_letters: dict[str, int]  # DLQ depth per group (-1: unknown)
    in_flight: dict[str, int]  # batches in the deliver handler per group
    groups: tuple[str, ...]


def render(snapshot: Snapshot, clock: str | None = None) -> str:
    """One line: `12:00:01  received 12 · delivered 11 · … │ backlog standard 1, …`."""
    stamp = clock or time.strftime("%H:%M:%S")
    c = snapshot.counts
    if c is None:
        head = "database not answering"
    else:
        head = (
            f"received {c.received} · delivered {c.delivered} · retrying {c.retrying} · "
            f"failed {c.failed} · dead {c.dead}"
        )
        if c.unfanned:
            head += f" · to fan out {c.unfanned}"
    groups = []
    for group in snapshot.groups:
        part = f"{group} {c.backlog.get(group, 0) if c else '?'}"
        flying = snapshot.in_flight.get(group, 0)
        if flying:
            part += f" ({flying} in flight)"
        dlq = snapshot.dead_letters.get(group, 0)
        if dlq:
            part += f" dlq {dlq if dlq >= 0 else '?'}"
        groups.append(part)
    return f"{stamp}  {head} │ backlog {', '.join(groups)}"


class StatusWriter:
    """Writes status lines to `stream`: in place on a terminal, plain lines otherwise."""

    def __init__(
        self,
        stream: TextIO,
        snapshot: Callable[[], Snapshot],
        *,
        tty: bool | None = None,
        plain_every: float = 10.0,
    ) -> None:
        """`tty` None means: ask the stream."""
        self.stream = stream
        self.snapshot = snapshot
        self.tty = stream.isatty() if tty is None else tty
        self.plain_every = plain_every
        self._last_line = ""
        self._last_printed = 0.0
        self._drawn = False

    def tick(self) -> None:
        """Take a snapshot and show it (on a terminal always; plain, when due and changed)."""
        line = render(self.snapshot())
        if self.tty:
            width = shutil.get_terminal_size((120, 20)).columns
            self.stream.write("\r\x1b[2K" + line[: max(20, width - 1)])
            self.stream.flush()
            self._drawn = True
            return
        now = time.monotonic()
        body = line.split("  ", 1)[-1]  # compare without the clock
        if now - self._last_printed >= self.plain_every and body != self._last_line:
            self.stream.write(line + "\n")
            self.stream.flush()
            self._last_line, self._last_printed = body, now

    def message(self, text: str) -> None:
        """A line of its own (the status line is redrawn after it on a terminal)."""
        if self.tty and self._drawn:
            self.stream.write("\r\x1b[2K")
            self._drawn = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def final(self) -> None:
        """Leave the last status line on screen and end it."""
        if self.tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
