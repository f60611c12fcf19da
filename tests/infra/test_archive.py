"""The ledger archive: an encrypted, versioned bucket with public access blocked and a
lifecycle, a Glue table over it, and the reconcile, replay and management API functions
allowed to use it."""

from __future__ import annotations

import pytest

from tests.infra.view import StackView, actions_of, env_of, resources_of

pytestmark = pytest.mark.infra


def test_the_archive_bucket_is_encrypted_versioned_private_with_a_lifecycle(aws: StackView):
    buckets = [
        b["Properties"] for b in aws.of_type("AWS::S3::Bucket").values()
        if "LifecycleConfiguration" in b["Properties"]
    ]  # fmt: skip
    assert len(buckets) == 1
    [bucket] = buckets
    assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert bucket["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "BlockPublicPolicy": True,
        "IgnorePublicAcls": True, "RestrictPublicBuckets": True,
    }  # fmt: skip
    [rule] = bucket["LifecycleConfiguration"]["Rules"]
    assert rule["Transitions"][0]["TransitionInDays"] == aws.config.archive_glacier_after_days


def test_a_glue_table_reads_the_archive_by_tenant_and_date(aws: StackView):
    [table] = aws.of_type("AWS::Glue::Table").values()
    keys = [k["Name"] for k in table["Properties"]["TableInput"]["PartitionKeys"]]
    assert keys == ["tenant", "date"]


def test_reconcile_replay_and_the_api_know_the_archive_bucket(aws: StackView):
    # reconcile archives, replay restores, the management API erases a tenant's objects
    having = [f for f in aws.functions().values() if "HOOKLINE_ARCHIVE_BUCKET" in env_of(f)]
    assert len(having) == 3


def test_reconcile_may_write_an_archive_object_in_parts_and_abort_it(aws: StackView):
    # Retention writes a large object as a multipart upload (PutObject covers its parts) and
    # aborts the upload when the day fails (decision 0117)
    role = aws.role_of(aws.function("Reconcile")[0])
    granted = [
        set(actions_of(s)) for s in aws.policy_statements(role)
        if any("ledger/*" in str(r) for r in resources_of(s))
    ]  # fmt: skip
    assert any({"s3:PutObject", "s3:AbortMultipartUpload"} <= actions for actions in granted)
