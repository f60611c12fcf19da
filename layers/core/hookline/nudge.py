"""Wake the fan-out right after an accept, so delivery does not wait for the schedule.

A nudge is best effort: the EventBridge schedule is the safety net, so a failed nudge is
logged and never fails the request that triggered it.
"""

from __future__ import annotations

from collections.abc import Callable

from hookline.aws import client
from hookline.observability import logger
from hookline.settings import Settings

_local_nudger: Callable[[], None] | None = None


def set_local_nudger(nudger: Callable[[], None] | None) -> None:
    """Let the local runner receive nudges in-process instead of a Lambda invoke."""
    global _local_nudger
    _local_nudger = nudger


def nudge_fanout(settings: Settings) -> None:
    """Ask the fan-out function to run now (asynchronously)."""
    try:
        if _local_nudger is not None:
            _local_nudger()
        elif settings.fanout_function_name:
            client("lambda", settings).invoke(
                FunctionName=settings.fanout_function_name,
                InvocationType="Event",
                Payload=b'{"source":"hookline.nudge"}',
            )
    except Exception:  # a nudge must never fail an accepted request
        logger.warning("fan-out nudge failed", exc_info=True)
