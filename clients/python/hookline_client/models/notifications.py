from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Notifications")


@_attrs_define
class Notifications:
    """A tenant's opt-in: e-mail addresses and a Slack-compatible incoming webhook URL.

    Attributes:
        chat_url (None | str | Unset):
        emails (list[str] | Unset):
    """

    chat_url: None | str | Unset = UNSET
    emails: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        chat_url: None | str | Unset
        if isinstance(self.chat_url, Unset):
            chat_url = UNSET
        else:
            chat_url = self.chat_url

        emails: list[str] | Unset = UNSET
        if not isinstance(self.emails, Unset):
            emails = self.emails

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if chat_url is not UNSET:
            field_dict["chat_url"] = chat_url
        if emails is not UNSET:
            field_dict["emails"] = emails

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_chat_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        chat_url = _parse_chat_url(d.pop("chat_url", UNSET))

        emails = cast(list[str], d.pop("emails", UNSET))

        notifications = cls(
            chat_url=chat_url,
            emails=emails,
        )

        return notifications
