from typing import Literal

ReplayState = Literal["accepted", "failed", "running", "succeeded"]

REPLAY_STATE_VALUES: set[ReplayState] = {
    "accepted",
    "failed",
    "running",
    "succeeded",
}


def check_replay_state(value: str) -> ReplayState:
    if value in REPLAY_STATE_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {REPLAY_STATE_VALUES!r}")
