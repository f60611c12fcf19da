from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="PortalLinkCreate")


@_attrs_define
class PortalLinkCreate:
    """A link to one tenant's portal (docs/decisions/0042).

    Attributes:
        base_url (None | str | Unset): where the portal is served: this API's own address (the default) or one the
            operator lists in HOOKLINE_PORTAL_BASE_URLS
        ttl_seconds (int | Unset): how long it opens Default: 3600.
    """

    base_url: None | str | Unset = UNSET
    ttl_seconds: int | Unset = 3600

    def to_dict(self) -> dict[str, Any]:
        base_url: None | str | Unset
        if isinstance(self.base_url, Unset):
            base_url = UNSET
        else:
            base_url = self.base_url

        ttl_seconds = self.ttl_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if base_url is not UNSET:
            field_dict["base_url"] = base_url
        if ttl_seconds is not UNSET:
            field_dict["ttl_seconds"] = ttl_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_base_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        base_url = _parse_base_url(d.pop("base_url", UNSET))

        ttl_seconds = d.pop("ttl_seconds", UNSET)

        portal_link_create = cls(
            base_url=base_url,
            ttl_seconds=ttl_seconds,
        )

        return portal_link_create
