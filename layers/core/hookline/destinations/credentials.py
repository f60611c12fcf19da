"""Temporary credentials of the customers' roles: one STS AssumeRole per (role, ExternalId),
cached until shortly before they expire."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from hookline.records import frozen

SESSION_SECONDS = 900  # the shortest STS allows: a revoked trust stops working soonest
REFRESH_BEFORE = timedelta(minutes=3)


@frozen
class RoleCredentials:
    """What AssumeRole answered."""

    access_key_id: str
    secret_access_key: str
    session_token: str
    expires_at: datetime


class RoleCredentialCache:
    """Credentials per (role ARN, ExternalId), shared by a process's threads."""

    def __init__(
        self, sts: Any, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self.sts = sts
        self.clock = clock
        self._lock = threading.Lock()
        self._cached: dict[tuple[str, str], RoleCredentials] = {}
        self.assumed = 0  # AssumeRole calls made (for tests and metrics)

    def get(self, role_arn: str, external_id: str, session_name: str) -> RoleCredentials:
        """Cached credentials of the role, or new ones (raises botocore's ClientError when STS
        refuses, e.g. AccessDenied for a role that no longer trusts Hookline)."""
        key = (role_arn, external_id)
        with self._lock:
            cached = self._cached.get(key)
            if cached is not None and cached.expires_at - REFRESH_BEFORE > self.clock():
                return cached
        answer = self.sts.assume_role(
            RoleArn=role_arn,
            RoleSessionName=session_name[:64],
            ExternalId=external_id,
            DurationSeconds=SESSION_SECONDS,
        )["Credentials"]
        fresh = RoleCredentials(
            answer["AccessKeyId"],
            answer["SecretAccessKey"],
            answer["SessionToken"],
            answer["Expiration"].astimezone(UTC),
        )
        with self._lock:
            self._cached[key] = fresh
            self.assumed += 1
        return fresh
