"""How a run of a recorded replay is started elsewhere: the replay function invoked
asynchronously (AWS), or a daemon thread of this process (local). The runtime picks one
(`hookline.runtime.replay_continuation`); the services receive it."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

Continue = Callable[[str, int], None]  # start run `run` of replay `replay_id` elsewhere


def start_payload(replay_id: str, run: int = 1) -> bytes:
    """The asynchronous invocation of the replay function that runs a recorded replay (`run`:
    which run of it; the first when left out)."""
    doc: dict[str, Any] = {"replay_id": replay_id}
    if run != 1:
        doc["run"] = run
    return json.dumps(doc).encode()


def invoker(lambda_client: Callable[[], Any], function_name: str) -> Continue:
    """Start a run of a recorded replay in the replay function, asynchronously (the Lambda
    client is built when first needed)."""

    def invoke(replay_id: str, run: int) -> None:
        lambda_client().invoke(
            FunctionName=function_name,
            InvocationType="Event",
            Payload=start_payload(replay_id, run),
        )

    return invoke


def in_thread(run_here: Continue) -> Continue:
    """Start a run of a recorded replay with `run_here` in a daemon thread of this process."""

    def start(replay_id: str, run: int) -> None:
        def target() -> None:
            try:
                run_here(replay_id, run)
            except Exception:  # the sweep fails it when its heartbeat stops
                log.exception("local replay run %d of %s failed", run, replay_id)

        start_in_thread(target, replay_id)

    return start


# Local runs: replays in threads of this process; tests and `hookline dev` may wait for them.
_threads: list[threading.Thread] = []
_threads_lock = threading.Lock()


def start_in_thread(target: Callable[[], object], replay_id: str) -> None:
    """Run a recorded replay in a daemon thread of this (long-lived, local) process."""
    thread = threading.Thread(target=target, name=f"replay-{replay_id}", daemon=True)
    with _threads_lock:
        _threads[:] = [t for t in _threads if t.is_alive()]
        _threads.append(thread)
    thread.start()


def wait_for_local_replays(timeout: float = 30.0) -> bool:
    """Wait for this process's replay threads; False if some are still running."""
    deadline = time.monotonic() + timeout
    with _threads_lock:
        running = list(_threads)
    for thread in running:
        thread.join(max(0.0, deadline - time.monotonic()))
    return not any(t.is_alive() for t in running)
