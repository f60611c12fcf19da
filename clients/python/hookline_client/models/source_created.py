from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.source_activity import SourceActivity
    from ..models.source_created_options import SourceCreatedOptions


T = TypeVar("T", bound="SourceCreated")


@_attrs_define
class SourceCreated:
    """A created source; `secret` only when Hookline generated it, shown this once (a
    repeat of the request with its Idempotency-Key answers null and `secret_note`).

        Attributes:
            created_at (datetime.datetime):
            enabled (bool):
            id (str):
            name (str):
            options (SourceCreatedOptions): An inline `catchup.api_key` is shown as `"<redacted>"`.
            path (str):
            scheme (str):
            tenant_id (str):
            tolerance_seconds (int):
            activity (None | SourceActivity | Unset): When it last accepted, handshook and rejected (one source).
            secret (None | str | Unset):
            secret_note (None | str | Unset): Set (and `secret` null) when this is a kept answer replayed for its
                Idempotency-Key: the secret was shown once, in the first answer (docs/decisions/0028).
    """

    created_at: datetime.datetime
    enabled: bool
    id: str
    name: str
    options: SourceCreatedOptions
    path: str
    scheme: str
    tenant_id: str
    tolerance_seconds: int
    activity: None | SourceActivity | Unset = UNSET
    secret: None | str | Unset = UNSET
    secret_note: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.source_activity import SourceActivity  # noqa: PLC0415

        created_at = self.created_at.isoformat()

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

        secret: None | str | Unset
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret

        secret_note: None | str | Unset
        if isinstance(self.secret_note, Unset):
            secret_note = UNSET
        else:
            secret_note = self.secret_note

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
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
        if secret is not UNSET:
            field_dict["secret"] = secret
        if secret_note is not UNSET:
            field_dict["secret_note"] = secret_note

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.source_activity import SourceActivity  # noqa: PLC0415
        from ..models.source_created_options import SourceCreatedOptions  # noqa: PLC0415

        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        enabled = d.pop("enabled")

        id = d.pop("id")

        name = d.pop("name")

        options = SourceCreatedOptions.from_dict(d.pop("options"))

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

        def _parse_secret(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        secret = _parse_secret(d.pop("secret", UNSET))

        def _parse_secret_note(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        secret_note = _parse_secret_note(d.pop("secret_note", UNSET))

        source_created = cls(
            created_at=created_at,
            enabled=enabled,
            id=id,
            name=name,
            options=options,
            path=path,
            scheme=scheme,
            tenant_id=tenant_id,
            tolerance_seconds=tolerance_seconds,
            activity=activity,
            secret=secret,
            secret_note=secret_note,
        )

        source_created.additional_properties = d
        return source_created

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
