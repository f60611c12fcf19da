"""The ledger archive's bucket on the dev stack's emulator (docs/decisions/0041, 0051), so
retention archives before it removes rows locally too, and `hookline archive restore` and
`POST /v1/restores` have something to read. The CDK stack declares the real one
(infra/components/archive.py): versioned, as here."""

from __future__ import annotations

from collections.abc import MutableMapping

import boto3
from botocore.exceptions import ClientError

LOCAL_BUCKET = "hookline-archive-local"
_EXISTS = frozenset({"BucketAlreadyOwnedByYou", "BucketAlreadyExists"})


def ensure_archive_bucket(environ: MutableMapping[str, str], endpoint: str) -> str:
    """Create the archive bucket (HOOKLINE_ARCHIVE_BUCKET, else `LOCAL_BUCKET`) on the
    emulator at `endpoint` if it is not there, versioned, and name it in `environ` for the
    handlers' settings. Returns its name."""
    name = environ.get("HOOKLINE_ARCHIVE_BUCKET") or LOCAL_BUCKET
    region = environ.get("AWS_REGION", "us-east-1")
    s3 = boto3.client(
        "s3", endpoint_url=endpoint, region_name=region,
        aws_access_key_id=environ.get("AWS_ACCESS_KEY_ID"),
        aws_secret_access_key=environ.get("AWS_SECRET_ACCESS_KEY"),
    )  # fmt: skip
    try:
        if region == "us-east-1":  # the one region that refuses a LocationConstraint
            s3.create_bucket(Bucket=name)
        else:
            s3.create_bucket(
                Bucket=name,
                CreateBucketConfiguration={"LocationConstraint": region},  # type: ignore[typeddict-item,unused-ignore]
            )
    except ClientError as err:
        if err.response.get("Error", {}).get("Code") not in _EXISTS:
            raise
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    environ["HOOKLINE_ARCHIVE_BUCKET"] = name
    return name
