"""What the `hookline` command shows besides its answer: lists with their chosen columns,
partial outcomes with their exit code, and progress bars for long operations.

Progress goes to stderr, and only to a terminal (never into a pipe, a log or `--json`
output); it is drawn by `rich` when installed (the `cli` extra), else not at all.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass
class Listing:
    """A page of the API (`items`, `next_cursor`): as is with `--json`, else a table of
    `columns`."""

    page: dict[str, Any]
    columns: Sequence[str]


@dataclass
class Outcome:
    """A result to print, then exit with `code` (e.g. 1 when some of a bulk action failed)."""

    result: Any
    code: int


class Progress(Protocol):
    """Reports how far a long operation has come."""

    def update(self, done: int, total: int | None) -> None:
        """`done` of `total` (None: not known yet)."""
        ...


class _Silent:
    def update(self, done: int, total: int | None) -> None:
        pass


class _Bar:
    def __init__(self, progress: Any, task: Any) -> None:
        self._progress = progress
        self._task = task

    def update(self, done: int, total: int | None) -> None:
        self._progress.update(self._task, completed=done, total=total)


@contextmanager
def progress_bar(description: str, *, enabled: bool = True) -> Iterator[Progress]:
    """A bar on stderr while the block runs, when `enabled` and stderr is a terminal."""
    if not (enabled and sys.stderr.isatty()):
        yield _Silent()
        return
    try:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as RichProgress
    except ImportError:  # the `cli` extra is not installed: no bar, same results
        yield _Silent()
        return
    with RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        yield _Bar(bar, bar.add_task(description, total=None))
