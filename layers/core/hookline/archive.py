"""The ledger archive in S3 (docs/decisions/0041): compressed JSON Lines by tenant and date,
written before retention removes rows, read back by a restore, removed by an erasure.

Layout: `ledger/tenant=<tenant id>/date=<YYYY-MM-DD>/<label>.jsonl.gz`, one line per event
with its payload's exact bytes in base64 (`payload_base64`) and its delivery outcomes; the
Glue table `hookline_ledger_archive` (infra/components/archive.py) reads it with Athena.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

PREFIX = "ledger"


class ArchiveStore(Protocol):
    """Where archive objects live: put, list and read by prefix, delete."""

    def put(self, key: str, body: bytes) -> None:
        """Store one object (raises when it could not be stored)."""

    def keys(self, prefix: str) -> list[str]:
        """Every key under `prefix`."""

    def get(self, key: str) -> bytes:
        """One object's bytes."""

    def delete(self, keys: list[str]) -> int:
        """Remove objects (every version); returns how many keys."""


@dataclass
class S3Archive:
    """The archive bucket through a boto3 S3 client."""

    s3: Any
    bucket: str

    def put(self, key: str, body: bytes) -> None:
        """Store one object, encrypted at rest by the bucket's default (SSE)."""
        self.s3.put_object(
            Bucket=self.bucket, Key=key, Body=body, ContentType="application/x-ndjson",
            ContentEncoding="gzip",
        )  # fmt: skip

    def keys(self, prefix: str) -> list[str]:
        """Every key under `prefix`, paged."""
        found: list[str] = []
        for page in self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix
        ):
            found += [item["Key"] for item in page.get("Contents", [])]
        return found

    def get(self, key: str) -> bytes:
        """One object's bytes."""
        return bytes(self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read())

    def delete(self, keys: list[str]) -> int:
        """Remove every version of each key (the bucket is versioned: erasure means gone)."""
        removed = 0
        for key in keys:
            versions = self.s3.get_paginator("list_object_versions").paginate(
                Bucket=self.bucket, Prefix=key
            )
            for page in versions:
                for item in page.get("Versions", []) + page.get("DeleteMarkers", []):
                    if item["Key"] == key:
                        self.s3.delete_object(
                            Bucket=self.bucket, Key=key, VersionId=item["VersionId"]
                        )
            removed += 1
        return removed


def tenant_prefix(tenant_id: str) -> str:
    """Where a tenant's archive objects start."""
    return f"{PREFIX}/tenant={tenant_id}/"


# An archive object's name as `object_key` writes it; anything else under a tenant's prefix
# was not written by the archiver (an s3 destination names its objects by webhook-id).
_OBJECT_NAME = re.compile(r"^date=\d{4}-\d{2}-\d{2}/[A-Za-z0-9_-]{1,64}\.jsonl\.gz$")


def is_object_key(tenant_id: str, key: str) -> bool:
    """Whether `key` is named as the archiver names the objects of `tenant_id`."""
    prefix = tenant_prefix(tenant_id)
    return key.startswith(prefix) and _OBJECT_NAME.match(key[len(prefix) :]) is not None


def object_key(tenant_id: str, day: date, label: str) -> str:
    """The key of one archive object."""
    return f"{tenant_prefix(tenant_id)}date={day.isoformat()}/{label}.jsonl.gz"


def archive_line(row: dict[str, Any]) -> dict[str, Any]:
    """One event row of the archive selection as its archive record."""
    payload = bytes(row["payload"])
    return {
        "id": row["id"],
        "tenant_id": row["tenant_id"],
        "source_id": row["source_id"],
        "origin": row["origin"],
        "type": row["type"],
        "dedupe_key": row["dedupe_key"],
        "content_type": row["content_type"],
        "headers": row["headers"],
        "received_at": _iso(row["received_at"]),
        "fanned_out_at": _iso(row.get("fanned_out_at")),
        "payload_base64": base64.b64encode(payload).decode(),
        "payload_size": len(payload),
        "deliveries": row["deliveries"],
    }


def encode_lines(records: Iterable[dict[str, Any]]) -> bytes:
    """Records as gzip-compressed JSON Lines."""
    text = "".join(json.dumps(r, separators=(",", ":"), sort_keys=True) + "\n" for r in records)
    return gzip.compress(text.encode(), mtime=0)


def decode_lines(body: bytes) -> Iterator[dict[str, Any]]:
    """The records of one archive object."""
    for line in gzip.decompress(body).decode().splitlines():
        if line.strip():
            yield json.loads(line)


def restorable_event(record: dict[str, Any]) -> dict[str, Any]:
    """An archive record as the restore statement's parameters (payload bytes as stored)."""
    return {
        "id": record["id"],
        "tenant_id": record["tenant_id"],
        "source_id": record["source_id"],
        "origin": record["origin"],
        "type": record["type"],
        "dedupe_key": record["dedupe_key"],
        "content_type": record["content_type"],
        "headers": record["headers"],
        "received_at": datetime.fromisoformat(record["received_at"]),
        "payload": base64.b64decode(record["payload_base64"]),
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None
