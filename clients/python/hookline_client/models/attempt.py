from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Attempt")


@_attrs_define
class Attempt:
    """One HTTP try.

    Attributes:
        attempted_at (datetime.datetime):
        delivery_id (str):
        duration_ms (int):
        error_class (None | str):
        id (int):
        response_excerpt (None | str):
        status_code (int | None):
    """

    attempted_at: datetime.datetime
    delivery_id: str
    duration_ms: int
    error_class: None | str
    id: int
    response_excerpt: None | str
    status_code: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempted_at = self.attempted_at.isoformat()

        delivery_id = self.delivery_id

        duration_ms = self.duration_ms

        error_class: None | str
        error_class = self.error_class

        id = self.id

        response_excerpt: None | str
        response_excerpt = self.response_excerpt

        status_code: int | None
        status_code = self.status_code

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempted_at": attempted_at,
                "delivery_id": delivery_id,
                "duration_ms": duration_ms,
                "error_class": error_class,
                "id": id,
                "response_excerpt": response_excerpt,
                "status_code": status_code,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempted_at = datetime.datetime.fromisoformat(d.pop("attempted_at"))

        delivery_id = d.pop("delivery_id")

        duration_ms = d.pop("duration_ms")

        def _parse_error_class(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error_class = _parse_error_class(d.pop("error_class"))

        id = d.pop("id")

        def _parse_response_excerpt(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        response_excerpt = _parse_response_excerpt(d.pop("response_excerpt"))

        def _parse_status_code(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        status_code = _parse_status_code(d.pop("status_code"))

        attempt = cls(
            attempted_at=attempted_at,
            delivery_id=delivery_id,
            duration_ms=duration_ms,
            error_class=error_class,
            id=id,
            response_excerpt=response_excerpt,
            status_code=status_code,
        )

        attempt.additional_properties = d
        return attempt

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
