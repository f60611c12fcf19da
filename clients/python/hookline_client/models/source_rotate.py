from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SourceRotate")


@_attrs_define
class SourceRotate:
    """A new secret for a source (generated when omitted). The previous one keeps verifying
    until the next rotation unless `keep_previous` is false.

        Attributes:
            keep_previous (bool | Unset):  Default: True.
            secret (None | str | Unset):
    """

    keep_previous: bool | Unset = True
    secret: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        keep_previous = self.keep_previous

        secret: None | str | Unset
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if keep_previous is not UNSET:
            field_dict["keep_previous"] = keep_previous
        if secret is not UNSET:
            field_dict["secret"] = secret

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        keep_previous = d.pop("keep_previous", UNSET)

        def _parse_secret(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        secret = _parse_secret(d.pop("secret", UNSET))

        source_rotate = cls(
            keep_previous=keep_previous,
            secret=secret,
        )

        return source_rotate
