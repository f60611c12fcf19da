from typing import Literal

ListDeliveriesStateType0 = Literal["dead", "delivered", "delivering", "failed", "held", "pending", "queued"]

LIST_DELIVERIES_STATE_TYPE_0_VALUES: set[ListDeliveriesStateType0] = {
    "dead",
    "delivered",
    "delivering",
    "failed",
    "held",
    "pending",
    "queued",
}


def check_list_deliveries_state_type_0(value: str) -> ListDeliveriesStateType0:
    if value in LIST_DELIVERIES_STATE_TYPE_0_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {LIST_DELIVERIES_STATE_TYPE_0_VALUES!r}")
