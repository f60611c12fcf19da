from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="QuarantineRetry")


@_attrs_define
class QuarantineRetry:
    """Which quarantined pairs to decide again: a tenant's (an operator may name one; none:
    every tenant's), only these events' when given, at most `limit`.

        Attributes:
            event_ids (list[str] | None | Unset):
            limit (int | Unset):  Default: 100.
            tenant_id (None | str | Unset):
    """

    event_ids: list[str] | None | Unset = UNSET
    limit: int | Unset = 100
    tenant_id: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        event_ids: list[str] | None | Unset
        if isinstance(self.event_ids, Unset):
            event_ids = UNSET
        elif isinstance(self.event_ids, list):
            event_ids = self.event_ids

        else:
            event_ids = self.event_ids

        limit = self.limit

        tenant_id: None | str | Unset
        if isinstance(self.tenant_id, Unset):
            tenant_id = UNSET
        else:
            tenant_id = self.tenant_id

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if event_ids is not UNSET:
            field_dict["event_ids"] = event_ids
        if limit is not UNSET:
            field_dict["limit"] = limit
        if tenant_id is not UNSET:
            field_dict["tenant_id"] = tenant_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_event_ids(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                event_ids_type_0 = cast(list[str], data)

                return event_ids_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        event_ids = _parse_event_ids(d.pop("event_ids", UNSET))

        limit = d.pop("limit", UNSET)

        def _parse_tenant_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tenant_id = _parse_tenant_id(d.pop("tenant_id", UNSET))

        quarantine_retry = cls(
            event_ids=event_ids,
            limit=limit,
            tenant_id=tenant_id,
        )

        return quarantine_retry
