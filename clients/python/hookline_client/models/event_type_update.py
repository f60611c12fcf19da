from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_type_update_schema_type_0 import EventTypeUpdateSchemaType0


T = TypeVar("T", bound="EventTypeUpdate")


@_attrs_define
class EventTypeUpdate:
    """The fields to change; absent fields keep their value. `schema: null` removes the
    schema (payloads are then no longer validated).

        Attributes:
            description (None | str | Unset):
            schema (EventTypeUpdateSchemaType0 | None | Unset):
    """

    description: None | str | Unset = UNSET
    schema: EventTypeUpdateSchemaType0 | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.event_type_update_schema_type_0 import EventTypeUpdateSchemaType0  # noqa: PLC0415

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        schema: dict[str, Any] | None | Unset
        if isinstance(self.schema, Unset):
            schema = UNSET
        elif isinstance(self.schema, EventTypeUpdateSchemaType0):
            schema = self.schema.to_dict()
        else:
            schema = self.schema

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if description is not UNSET:
            field_dict["description"] = description
        if schema is not UNSET:
            field_dict["schema"] = schema

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_type_update_schema_type_0 import EventTypeUpdateSchemaType0  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        def _parse_schema(data: object) -> EventTypeUpdateSchemaType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                schema_type_0 = EventTypeUpdateSchemaType0.from_dict(data)

                return schema_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EventTypeUpdateSchemaType0 | None | Unset, data)

        schema = _parse_schema(d.pop("schema", UNSET))

        event_type_update = cls(
            description=description,
            schema=schema,
        )

        return event_type_update
