from typing import Literal

ListReplaysStateType0 = Literal["accepted", "failed", "running", "succeeded"]

LIST_REPLAYS_STATE_TYPE_0_VALUES: set[ListReplaysStateType0] = {
    "accepted",
    "failed",
    "running",
    "succeeded",
}


def check_list_replays_state_type_0(value: str) -> ListReplaysStateType0:
    if value in LIST_REPLAYS_STATE_TYPE_0_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {LIST_REPLAYS_STATE_TYPE_0_VALUES!r}")
