from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_headers import EventHeaders


T = TypeVar("T", bound="Event")


@_attrs_define
class Event:
    """One event: its payload as JSON when it is JSON (nested at most 200 levels deep), else
    the exact bytes in base64.

        Attributes:
            content_type (str):
            fanned_out_at (datetime.datetime | None):
            headers (EventHeaders):
            id (str):
            origin (str):
            received_at (datetime.datetime):
            source_id (None | str):
            tenant_id (str):
            type_ (str):
            payload (Any | Unset):
            payload_base64 (None | str | Unset):
    """

    content_type: str
    fanned_out_at: datetime.datetime | None
    headers: EventHeaders
    id: str
    origin: str
    received_at: datetime.datetime
    source_id: None | str
    tenant_id: str
    type_: str
    payload: Any | Unset = UNSET
    payload_base64: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        content_type = self.content_type

        fanned_out_at: None | str
        if isinstance(self.fanned_out_at, datetime.datetime):
            fanned_out_at = self.fanned_out_at.isoformat()
        else:
            fanned_out_at = self.fanned_out_at

        headers = self.headers.to_dict()

        id = self.id

        origin = self.origin

        received_at = self.received_at.isoformat()

        source_id: None | str
        source_id = self.source_id

        tenant_id = self.tenant_id

        type_ = self.type_

        payload = self.payload

        payload_base64: None | str | Unset
        if isinstance(self.payload_base64, Unset):
            payload_base64 = UNSET
        else:
            payload_base64 = self.payload_base64

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "content_type": content_type,
                "fanned_out_at": fanned_out_at,
                "headers": headers,
                "id": id,
                "origin": origin,
                "received_at": received_at,
                "source_id": source_id,
                "tenant_id": tenant_id,
                "type": type_,
            }
        )
        if payload is not UNSET:
            field_dict["payload"] = payload
        if payload_base64 is not UNSET:
            field_dict["payload_base64"] = payload_base64

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_headers import EventHeaders  # noqa: PLC0415

        d = dict(src_dict)
        content_type = d.pop("content_type")

        def _parse_fanned_out_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                fanned_out_at_type_0 = datetime.datetime.fromisoformat(data)

                return fanned_out_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        fanned_out_at = _parse_fanned_out_at(d.pop("fanned_out_at"))

        headers = EventHeaders.from_dict(d.pop("headers"))

        id = d.pop("id")

        origin = d.pop("origin")

        received_at = datetime.datetime.fromisoformat(d.pop("received_at"))

        def _parse_source_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        source_id = _parse_source_id(d.pop("source_id"))

        tenant_id = d.pop("tenant_id")

        type_ = d.pop("type")

        payload = d.pop("payload", UNSET)

        def _parse_payload_base64(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        payload_base64 = _parse_payload_base64(d.pop("payload_base64", UNSET))

        event = cls(
            content_type=content_type,
            fanned_out_at=fanned_out_at,
            headers=headers,
            id=id,
            origin=origin,
            received_at=received_at,
            source_id=source_id,
            tenant_id=tenant_id,
            type_=type_,
            payload=payload,
            payload_base64=payload_base64,
        )

        event.additional_properties = d
        return event

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
