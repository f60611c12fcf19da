"""The ledger archive in S3 (docs/decisions/0041): compressed JSON Lines by tenant and date,
written before retention removes rows, read back by a restore, removed by an erasure.

Layout: `ledger/tenant=<tenant id>/date=<YYYY-MM-DD>/<label>.jsonl.gz`, one line per event
with its payload's exact bytes in base64 (`payload_base64`) and its delivery outcomes; the
Glue table `hookline_ledger_archive` (infra/components/archive.py) reads it with Athena. The
lines are made by the archive's selection (`archive_selection` in sql/retention.sql, decision
0118) and read back by `decode_lines` and `restorable_event`; an object is encoded as its lines
come and stored in parts (decision 0117).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import itertools
import json
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

from hookline.errors import ArchiveUnavailable

PREFIX = "ledger"


# What an archive object is written in: the gzip stream is cut into parts of this size (S3's
# multipart upload takes parts of 5 MiB and more but the last), so retention holds one part
# of a day's archive in memory, not the day (decision 0117).
PART_BYTES = 8 * 1024 * 1024


class ArchiveStore(Protocol):
    """Where archive objects live: put, list and read by prefix, delete."""

    def put(self, key: str, body: bytes) -> None:
        """Store one object (raises when it could not be stored)."""

    def put_parts(self, key: str, parts: Iterable[bytes]) -> None:
        """Store one object given as consecutive parts, each but the last at least 5 MiB,
        holding one part at a time; ArchiveUnavailable when the store refused it (an error
        of the parts' source passes through, and nothing is stored)."""

    def keys(self, prefix: str) -> list[str]:
        """Every key under `prefix`."""

    def get(self, key: str) -> bytes:
        """One object's bytes."""

    def delete(self, keys: list[str]) -> int:
        """Remove objects (every version); returns how many keys."""


_OBJECT_TYPE = {"ContentType": "application/x-ndjson", "ContentEncoding": "gzip"}


@dataclass
class S3Archive:
    """The archive bucket through a boto3 S3 client."""

    s3: Any
    bucket: str

    def put(self, key: str, body: bytes) -> None:
        """Store one object, encrypted at rest by the bucket's default (SSE)."""
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=body, **_OBJECT_TYPE)

    def put_parts(self, key: str, parts: Iterable[bytes]) -> None:
        """One PUT when there is one part; else a multipart upload, aborted if anything fails
        before it completes."""
        chunks = iter(parts)
        first = next(chunks, b"")
        second = next(chunks, None)
        if second is None:
            self._s3("put_object", Key=key, Body=first, **_OBJECT_TYPE)
            return
        upload = self._s3("create_multipart_upload", Key=key, **_OBJECT_TYPE)["UploadId"]
        done: list[dict[str, Any]] = []
        try:
            for number, body in enumerate(itertools.chain((first, second), chunks), start=1):
                answer = self._s3("upload_part", Key=key, UploadId=upload, PartNumber=number,
                                  Body=body)  # fmt: skip
                done.append({"PartNumber": number, "ETag": answer["ETag"]})
            self._s3("complete_multipart_upload", Key=key, UploadId=upload,
                     MultipartUpload={"Parts": done})  # fmt: skip
        except BaseException:
            with contextlib.suppress(Exception):  # the bucket's lifecycle rule ends it too
                self.s3.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload)
            raise

    def _s3(self, method: str, **params: Any) -> Any:
        """One S3 call on the bucket; its failure as ArchiveUnavailable (botocore raises many
        kinds)."""
        try:
            return getattr(self.s3, method)(Bucket=self.bucket, **params)
        except Exception as err:
            raise ArchiveUnavailable(f"archive upload failed ({type(err).__name__})") from err

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


def gzip_parts(lines: Iterable[str], part_bytes: int = PART_BYTES) -> Iterator[bytes]:
    """JSON lines (each one record, without its newline) as one gzip stream, cut into parts of
    `part_bytes` (the last one shorter), encoded as they come: what is held is one part,
    whatever the lines."""
    stream = zlib.compressobj(wbits=31)  # gzip framing, mtime 0
    held = bytearray()
    for line in lines:
        held += stream.compress(line.encode() + b"\n")
        while len(held) >= part_bytes:
            yield bytes(held[:part_bytes])
            del held[:part_bytes]
    held += stream.flush()
    yield bytes(held)


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
