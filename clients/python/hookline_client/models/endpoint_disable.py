from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointDisable")


@_attrs_define
class EndpointDisable:
    """Why an endpoint is disabled.

    Attributes:
        reason (str | Unset):  Default: 'disabled through the API'.
    """

    reason: str | Unset = "disabled through the API"

    def to_dict(self) -> dict[str, Any]:
        reason = self.reason

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        reason = d.pop("reason", UNSET)

        endpoint_disable = cls(
            reason=reason,
        )

        return endpoint_disable
