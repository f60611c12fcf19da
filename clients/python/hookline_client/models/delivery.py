from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Delivery")


@_attrs_define
class Delivery:
    """One event x one endpoint.

    Attributes:
        attempt_count (int):
        created_at (datetime.datetime):
        deadline_at (datetime.datetime):
        endpoint_id (str):
        event_id (str):
        finished_at (datetime.datetime | None):
        id (str):
        last_error (None | str):
        last_status (int | None):
        next_attempt_at (datetime.datetime):
        state (str):
        tenant_id (str):
        updated_at (datetime.datetime):
    """

    attempt_count: int
    created_at: datetime.datetime
    deadline_at: datetime.datetime
    endpoint_id: str
    event_id: str
    finished_at: datetime.datetime | None
    id: str
    last_error: None | str
    last_status: int | None
    next_attempt_at: datetime.datetime
    state: str
    tenant_id: str
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempt_count = self.attempt_count

        created_at = self.created_at.isoformat()

        deadline_at = self.deadline_at.isoformat()

        endpoint_id = self.endpoint_id

        event_id = self.event_id

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        id = self.id

        last_error: None | str
        last_error = self.last_error

        last_status: int | None
        last_status = self.last_status

        next_attempt_at = self.next_attempt_at.isoformat()

        state = self.state

        tenant_id = self.tenant_id

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt_count": attempt_count,
                "created_at": created_at,
                "deadline_at": deadline_at,
                "endpoint_id": endpoint_id,
                "event_id": event_id,
                "finished_at": finished_at,
                "id": id,
                "last_error": last_error,
                "last_status": last_status,
                "next_attempt_at": next_attempt_at,
                "state": state,
                "tenant_id": tenant_id,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempt_count = d.pop("attempt_count")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        deadline_at = datetime.datetime.fromisoformat(d.pop("deadline_at"))

        endpoint_id = d.pop("endpoint_id")

        event_id = d.pop("event_id")

        def _parse_finished_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        finished_at = _parse_finished_at(d.pop("finished_at"))

        id = d.pop("id")

        def _parse_last_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_error = _parse_last_error(d.pop("last_error"))

        def _parse_last_status(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        last_status = _parse_last_status(d.pop("last_status"))

        next_attempt_at = datetime.datetime.fromisoformat(d.pop("next_attempt_at"))

        state = d.pop("state")

        tenant_id = d.pop("tenant_id")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        delivery = cls(
            attempt_count=attempt_count,
            created_at=created_at,
            deadline_at=deadline_at,
            endpoint_id=endpoint_id,
            event_id=event_id,
            finished_at=finished_at,
            id=id,
            last_error=last_error,
            last_status=last_status,
            next_attempt_at=next_attempt_at,
            state=state,
            tenant_id=tenant_id,
            updated_at=updated_at,
        )

        delivery.additional_properties = d
        return delivery

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
