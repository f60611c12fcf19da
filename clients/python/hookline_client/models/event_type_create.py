from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_type_create_schema_type_0 import EventTypeCreateSchemaType0


T = TypeVar("T", bound="EventTypeCreate")


@_attrs_define
class EventTypeCreate:
    """A new catalogue entry. With a `schema` (a JSON Schema, Draft 2020-12 unless `$schema`
    says otherwise), payloads published with this type must match it.

        Attributes:
            name (str): dotted lowercase, such as invoice.paid
            description (str | Unset):  Default: ''.
            schema (EventTypeCreateSchemaType0 | None | Unset):
            tenant_id (None | str | Unset):
    """

    name: str
    description: str | Unset = ""
    schema: EventTypeCreateSchemaType0 | None | Unset = UNSET
    tenant_id: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.event_type_create_schema_type_0 import EventTypeCreateSchemaType0  # noqa: PLC0415

        name = self.name

        description = self.description

        schema: dict[str, Any] | None | Unset
        if isinstance(self.schema, Unset):
            schema = UNSET
        elif isinstance(self.schema, EventTypeCreateSchemaType0):
            schema = self.schema.to_dict()
        else:
            schema = self.schema

        tenant_id: None | str | Unset
        if isinstance(self.tenant_id, Unset):
            tenant_id = UNSET
        else:
            tenant_id = self.tenant_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description
        if schema is not UNSET:
            field_dict["schema"] = schema
        if tenant_id is not UNSET:
            field_dict["tenant_id"] = tenant_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_type_create_schema_type_0 import EventTypeCreateSchemaType0  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        description = d.pop("description", UNSET)

        def _parse_schema(data: object) -> EventTypeCreateSchemaType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                schema_type_0 = EventTypeCreateSchemaType0.from_dict(data)

                return schema_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EventTypeCreateSchemaType0 | None | Unset, data)

        schema = _parse_schema(d.pop("schema", UNSET))

        def _parse_tenant_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tenant_id = _parse_tenant_id(d.pop("tenant_id", UNSET))

        event_type_create = cls(
            name=name,
            description=description,
            schema=schema,
            tenant_id=tenant_id,
        )

        return event_type_create
