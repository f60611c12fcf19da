from typing import Literal

ReplayCreateStatesType0Item = Literal["dead", "delivered", "delivering", "failed", "held", "pending", "queued"]

REPLAY_CREATE_STATES_TYPE_0_ITEM_VALUES: set[ReplayCreateStatesType0Item] = {
    "dead",
    "delivered",
    "delivering",
    "failed",
    "held",
    "pending",
    "queued",
}


def check_replay_create_states_type_0_item(value: str) -> ReplayCreateStatesType0Item:
    if value in REPLAY_CREATE_STATES_TYPE_0_ITEM_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {REPLAY_CREATE_STATES_TYPE_0_ITEM_VALUES!r}")
