from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="EventSummary")


@_attrs_define
class EventSummary:
    """An event in a list.

    Attributes:
        id (str):
        origin (str):
        received_at (datetime.datetime):
        size (int):
        source_id (None | str):
        tenant_id (str):
        type_ (str):
    """

    id: str
    origin: str
    received_at: datetime.datetime
    size: int
    source_id: None | str
    tenant_id: str
    type_: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        origin = self.origin

        received_at = self.received_at.isoformat()

        size = self.size

        source_id: None | str
        source_id = self.source_id

        tenant_id = self.tenant_id

        type_ = self.type_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "origin": origin,
                "received_at": received_at,
                "size": size,
                "source_id": source_id,
                "tenant_id": tenant_id,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        origin = d.pop("origin")

        received_at = datetime.datetime.fromisoformat(d.pop("received_at"))

        size = d.pop("size")

        def _parse_source_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        source_id = _parse_source_id(d.pop("source_id"))

        tenant_id = d.pop("tenant_id")

        type_ = d.pop("type")

        event_summary = cls(
            id=id,
            origin=origin,
            received_at=received_at,
            size=size,
            source_id=source_id,
            tenant_id=tenant_id,
            type_=type_,
        )

        event_summary.additional_properties = d
        return event_summary

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
