from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.source_activity import SourceActivity
    from ..models.source_deleted_options import SourceDeletedOptions


T = TypeVar("T", bound="SourceDeleted")


@_attrs_define
class SourceDeleted:
    """A deleted source: it no longer receives (404 to providers) and keeps no secret; the
    events it received stay readable.

        Attributes:
            created_at (datetime.datetime):
            deleted_at (datetime.datetime):
            enabled (bool):
            id (str):
            name (str):
            options (SourceDeletedOptions): An inline `catchup.api_key` is shown as `"<redacted>"`.
            path (str):
            scheme (str):
            tenant_id (str):
            tolerance_seconds (int):
            activity (None | SourceActivity | Unset): When it last accepted, handshook and rejected (one source).
    """

    created_at: datetime.datetime
    deleted_at: datetime.datetime
    enabled: bool
    id: str
    name: str
    options: SourceDeletedOptions
    path: str
    scheme: str
    tenant_id: str
    tolerance_seconds: int
    activity: None | SourceActivity | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.source_activity import SourceActivity  # noqa: PLC0415

        created_at = self.created_at.isoformat()

        deleted_at = self.deleted_at.isoformat()

        enabled = self.enabled

        id = self.id

        name = self.name

        options = self.options.to_dict()

        path = self.path

        scheme = self.scheme

        tenant_id = self.tenant_id

        tolerance_seconds = self.tolerance_seconds

        activity: dict[str, Any] | None | Unset
        if isinstance(self.activity, Unset):
            activity = UNSET
        elif isinstance(self.activity, SourceActivity):
            activity = self.activity.to_dict()
        else:
            activity = self.activity

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "deleted_at": deleted_at,
                "enabled": enabled,
                "id": id,
                "name": name,
                "options": options,
                "path": path,
                "scheme": scheme,
                "tenant_id": tenant_id,
                "tolerance_seconds": tolerance_seconds,
            }
        )
        if activity is not UNSET:
            field_dict["activity"] = activity

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.source_activity import SourceActivity  # noqa: PLC0415
        from ..models.source_deleted_options import SourceDeletedOptions  # noqa: PLC0415

        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        deleted_at = datetime.datetime.fromisoformat(d.pop("deleted_at"))

        enabled = d.pop("enabled")

        id = d.pop("id")

        name = d.pop("name")

        options = SourceDeletedOptions.from_dict(d.pop("options"))

        path = d.pop("path")

        scheme = d.pop("scheme")

        tenant_id = d.pop("tenant_id")

        tolerance_seconds = d.pop("tolerance_seconds")

        def _parse_activity(data: object) -> None | SourceActivity | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                activity_type_0 = SourceActivity.from_dict(data)

                return activity_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceActivity | Unset, data)

        activity = _parse_activity(d.pop("activity", UNSET))

        source_deleted = cls(
            created_at=created_at,
            deleted_at=deleted_at,
            enabled=enabled,
            id=id,
            name=name,
            options=options,
            path=path,
            scheme=scheme,
            tenant_id=tenant_id,
            tolerance_seconds=tolerance_seconds,
            activity=activity,
        )

        source_deleted.additional_properties = d
        return source_deleted

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
