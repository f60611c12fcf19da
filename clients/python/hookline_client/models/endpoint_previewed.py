from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="EndpointPreviewed")


@_attrs_define
class EndpointPreviewed:
    """What the event would become: whether it matches, and the body that would be sent (and
    signed), or why it cannot render.

        Attributes:
            body (None | str):
            content_type (None | str):
            error (None | str):
            matches (bool):
    """

    body: None | str
    content_type: None | str
    error: None | str
    matches: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        body: None | str
        body = self.body

        content_type: None | str
        content_type = self.content_type

        error: None | str
        error = self.error

        matches = self.matches

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "body": body,
                "content_type": content_type,
                "error": error,
                "matches": matches,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_body(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        body = _parse_body(d.pop("body"))

        def _parse_content_type(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        content_type = _parse_content_type(d.pop("content_type"))

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        matches = d.pop("matches")

        endpoint_previewed = cls(
            body=body,
            content_type=content_type,
            error=error,
            matches=matches,
        )

        endpoint_previewed.additional_properties = d
        return endpoint_previewed

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
