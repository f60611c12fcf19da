from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.source_update_options_type_0 import SourceUpdateOptionsType0


T = TypeVar("T", bound="SourceUpdate")


@_attrs_define
class SourceUpdate:
    """The fields to change; absent (or null) fields keep their value. Not the secret (rotate
    it) nor the scheme (create a new source): `options` replaces the scheme options whole and
    is checked against the scheme as on create.

        Attributes:
            name (None | str | Unset):
            options (None | SourceUpdateOptionsType0 | Unset): Replaces the options whole. `catchup.api_key: "<redacted>"`
                (as read) keeps the stored key; any other value replaces it; leaving it out removes it. `catchup.api_base` and
                `catchup.api_key_secret_arn` are an operator's: a tenant that changes one gets 403, and what an operator set is
                kept, sent back or not.
            tolerance_seconds (int | None | Unset):
    """

    name: None | str | Unset = UNSET
    options: None | SourceUpdateOptionsType0 | Unset = UNSET
    tolerance_seconds: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.source_update_options_type_0 import SourceUpdateOptionsType0  # noqa: PLC0415

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        options: dict[str, Any] | None | Unset
        if isinstance(self.options, Unset):
            options = UNSET
        elif isinstance(self.options, SourceUpdateOptionsType0):
            options = self.options.to_dict()
        else:
            options = self.options

        tolerance_seconds: int | None | Unset
        if isinstance(self.tolerance_seconds, Unset):
            tolerance_seconds = UNSET
        else:
            tolerance_seconds = self.tolerance_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if options is not UNSET:
            field_dict["options"] = options
        if tolerance_seconds is not UNSET:
            field_dict["tolerance_seconds"] = tolerance_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.source_update_options_type_0 import SourceUpdateOptionsType0  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_options(data: object) -> None | SourceUpdateOptionsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                options_type_0 = SourceUpdateOptionsType0.from_dict(data)

                return options_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceUpdateOptionsType0 | Unset, data)

        options = _parse_options(d.pop("options", UNSET))

        def _parse_tolerance_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        tolerance_seconds = _parse_tolerance_seconds(d.pop("tolerance_seconds", UNSET))

        source_update = cls(
            name=name,
            options=options,
            tolerance_seconds=tolerance_seconds,
        )

        return source_update
