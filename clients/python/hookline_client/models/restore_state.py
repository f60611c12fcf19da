from typing import Literal

RestoreState = Literal["accepted", "failed", "running", "succeeded"]

RESTORE_STATE_VALUES: set[RestoreState] = {
    "accepted",
    "failed",
    "running",
    "succeeded",
}


def check_restore_state(value: str) -> RestoreState:
    if value in RESTORE_STATE_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {RESTORE_STATE_VALUES!r}")
