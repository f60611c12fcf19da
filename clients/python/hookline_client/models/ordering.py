from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="Ordering")


@_attrs_define
class Ordering:
    """Ordered delivery (decision 0069): events with the same key are delivered one at a
    time, in ledger order; a failing head holds the events behind it until it is delivered or
    dies. `key` is a JSON path into the event document (`$.payload.customer_id`; dot names
    and `[index]`), or null for one order across the endpoint. An event without a value at
    the path is ordered with the others that have none.

        Attributes:
            key (None | str):
    """

    key: None | str

    def to_dict(self) -> dict[str, Any]:
        key: None | str
        key = self.key

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "key": key,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_key(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        key = _parse_key(d.pop("key"))

        ordering = cls(
            key=key,
        )

        return ordering
