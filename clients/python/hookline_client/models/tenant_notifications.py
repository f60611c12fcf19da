from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="TenantNotifications")


@_attrs_define
class TenantNotifications:
    """A tenant's notification targets.

    Attributes:
        tenant_id (str):
        chat_url (None | str | Unset):
        emails (list[str] | Unset):
    """

    tenant_id: str
    chat_url: None | str | Unset = UNSET
    emails: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        tenant_id = self.tenant_id

        chat_url: None | str | Unset
        if isinstance(self.chat_url, Unset):
            chat_url = UNSET
        else:
            chat_url = self.chat_url

        emails: list[str] | Unset = UNSET
        if not isinstance(self.emails, Unset):
            emails = self.emails

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "tenant_id": tenant_id,
            }
        )
        if chat_url is not UNSET:
            field_dict["chat_url"] = chat_url
        if emails is not UNSET:
            field_dict["emails"] = emails

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        tenant_id = d.pop("tenant_id")

        def _parse_chat_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        chat_url = _parse_chat_url(d.pop("chat_url", UNSET))

        emails = cast(list[str], d.pop("emails", UNSET))

        tenant_notifications = cls(
            tenant_id=tenant_id,
            chat_url=chat_url,
            emails=emails,
        )

        tenant_notifications.additional_properties = d
        return tenant_notifications

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
