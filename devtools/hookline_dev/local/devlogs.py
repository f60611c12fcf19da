"""Where `hookline dev` puts the handlers' output: Powertools' JSON logs and EMF lines (both
written to stdout on Lambda) go to the log file; stdout is kept for the banner and the status
line."""

from __future__ import annotations

import logging
import sys
import warnings
from pathlib import Path
from typing import IO, Any, TextIO


class LogRoute:
    """The handlers' logs sent to a file (or stderr) by `start()`, put back by `restore()`."""

    def __init__(self) -> None:
        self.log_stream: IO[str] | None = None
        self.saved_stdout: TextIO | None = None
        self.log_handler_stream: tuple[logging.StreamHandler[Any], Any] | None = None

    def start(self, target: str | None, state_dir: Path) -> str:
        """Send the logs to `target` (a path; "-" is stderr; None: `<state_dir>/dev.log`);
        where they go, for the banner."""
        from hookline.observability import logger as powertools_logger

        if target == "-":
            stream: IO[str] = sys.stderr
            where = "stderr"
        else:
            path = Path(target) if target else state_dir / "dev.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            stream = self.log_stream = open(path, "a", buffering=1)  # noqa: SIM115 - closed in restore()
            where = str(path.absolute())
        handler = powertools_logger.registered_handler
        if isinstance(handler, logging.StreamHandler):
            self.log_handler_stream = (handler, handler.setStream(stream))
        # EMF metrics are print()ed: on Lambda they land in CloudWatch Logs, here in the log.
        self.saved_stdout = sys.stdout
        sys.stdout = stream
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        return where

    def restore(self) -> None:
        """Put stdout and the Powertools logger's stream back; close the log file."""
        if self.saved_stdout is not None:
            sys.stdout = self.saved_stdout
            self.saved_stdout = None
        if self.log_handler_stream is not None:
            handler, previous = self.log_handler_stream
            handler.setStream(previous)
            self.log_handler_stream = None
        if self.log_stream is not None:
            self.log_stream.close()
            self.log_stream = None
