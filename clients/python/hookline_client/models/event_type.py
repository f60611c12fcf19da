from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_type_schema_type_0 import EventTypeSchemaType0


T = TypeVar("T", bound="EventType")


@_attrs_define
class EventType:
    """A catalogue entry. `archived` types no longer validate and are hidden from lists
    unless asked for.

        Attributes:
            archived (bool):
            archived_at (datetime.datetime | None):
            created_at (datetime.datetime):
            description (str):
            id (str):
            name (str):
            tenant_id (str):
            updated_at (datetime.datetime):
            schema (EventTypeSchemaType0 | None | Unset):
    """

    archived: bool
    archived_at: datetime.datetime | None
    created_at: datetime.datetime
    description: str
    id: str
    name: str
    tenant_id: str
    updated_at: datetime.datetime
    schema: EventTypeSchemaType0 | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.event_type_schema_type_0 import EventTypeSchemaType0  # noqa: PLC0415

        archived = self.archived

        archived_at: None | str
        if isinstance(self.archived_at, datetime.datetime):
            archived_at = self.archived_at.isoformat()
        else:
            archived_at = self.archived_at

        created_at = self.created_at.isoformat()

        description = self.description

        id = self.id

        name = self.name

        tenant_id = self.tenant_id

        updated_at = self.updated_at.isoformat()

        schema: dict[str, Any] | None | Unset
        if isinstance(self.schema, Unset):
            schema = UNSET
        elif isinstance(self.schema, EventTypeSchemaType0):
            schema = self.schema.to_dict()
        else:
            schema = self.schema

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "archived": archived,
                "archived_at": archived_at,
                "created_at": created_at,
                "description": description,
                "id": id,
                "name": name,
                "tenant_id": tenant_id,
                "updated_at": updated_at,
            }
        )
        if schema is not UNSET:
            field_dict["schema"] = schema

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_type_schema_type_0 import EventTypeSchemaType0  # noqa: PLC0415

        d = dict(src_dict)
        archived = d.pop("archived")

        def _parse_archived_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                archived_at_type_0 = datetime.datetime.fromisoformat(data)

                return archived_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        archived_at = _parse_archived_at(d.pop("archived_at"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        description = d.pop("description")

        id = d.pop("id")

        name = d.pop("name")

        tenant_id = d.pop("tenant_id")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_schema(data: object) -> EventTypeSchemaType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                schema_type_0 = EventTypeSchemaType0.from_dict(data)

                return schema_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EventTypeSchemaType0 | None | Unset, data)

        schema = _parse_schema(d.pop("schema", UNSET))

        event_type = cls(
            archived=archived,
            archived_at=archived_at,
            created_at=created_at,
            description=description,
            id=id,
            name=name,
            tenant_id=tenant_id,
            updated_at=updated_at,
            schema=schema,
        )

        event_type.additional_properties = d
        return event_type

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
