"""The ledger archive (docs/decisions/0041): an S3 bucket that retention writes before it drops
partitions (encrypted, versioned, public access blocked, TLS only, Glacier after N days), and a
Glue table over its compressed JSON Lines so Athena can query it by tenant and date."""

from __future__ import annotations

import re

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from hookline.config import HooklineConfig
from infra.components.queues import resource_prefix
from infra.nag import suppress

COLUMNS = [
    ("id", "string"), ("source_id", "string"), ("origin", "string"), ("type", "string"),
    ("dedupe_key", "string"), ("content_type", "string"), ("headers", "map<string,string>"),
    ("received_at", "string"), ("fanned_out_at", "string"), ("payload_base64", "string"),
    ("payload_size", "bigint"),
    ("deliveries", "array<struct<id:string,endpoint_id:string,state:string,"
     "attempt_count:int,last_status:int,last_error:string,created_at:string,"
     "finished_at:string,attempts:array<struct<attempted_at:string,duration_ms:int,"
     "status_code:int,error_class:string>>>>"),
]  # fmt: skip


def glue_database_name(prefix: str) -> str:
    """The archive's Glue database for the stack whose names start with `prefix`: Glue
    takes lowercase letters, digits and underscores."""
    return re.sub(r"[^a-z0-9_]", "_", prefix.lower()) + "_archive"


class LedgerArchive(Construct):
    """The archive bucket, its Glue database and table."""

    def __init__(self, scope: Construct, construct_id: str, *, config: HooklineConfig) -> None:
        super().__init__(scope, construct_id)
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            encryption=s3.BucketEncryption.S3_MANAGED,
            versioned=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            # The disaster-recovery copy of the ledger (a failed first create removes it).
            removal_policy=RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
            lifecycle_rules=[
                s3.LifecycleRule(
                    transitions=[
                        s3.Transition(
                            storage_class=s3.StorageClass.GLACIER_INSTANT_RETRIEVAL,
                            transition_after=Duration.days(config.archive_glacier_after_days),
                        )
                    ],
                    noncurrent_version_expiration=Duration.days(30),
                    abort_incomplete_multipart_upload_after=Duration.days(1),
                )
            ],
        )
        cfn_bucket = self.bucket.node.default_child
        assert isinstance(cfn_bucket, s3.CfnBucket)
        self._cfn_bucket: s3.CfnBucket = cfn_bucket
        suppress(
            self.bucket,
            "AwsSolutions-S1",
            "only the stack's own functions read and write the archive, and CloudTrail records "
            "their calls; an access-log bucket would be one more bucket of data to keep.",
        )
        account = Stack.of(self).account
        # Glue database names are account- and region-wide: one per stack, so a second stack
        # fits beside the first ("Hookline" keeps `hookline_archive`).
        self.database_name = glue_database_name(resource_prefix(self))
        database = glue.CfnDatabase(
            self, "Database", catalog_id=account,
            database_input=glue.CfnDatabase.DatabaseInputProperty(name=self.database_name),
        )  # fmt: skip
        self.table = glue.CfnTable(
            self,
            "Table",
            catalog_id=account,
            database_name=self.database_name,
            table_input=glue.CfnTable.TableInputProperty(
                name="ledger",
                table_type="EXTERNAL_TABLE",
                parameters={
                    "classification": "json",
                    "compressionType": "gzip",
                    "projection.enabled": "true",
                    "projection.tenant.type": "injected",
                    "projection.date.type": "date",
                    "projection.date.format": "yyyy-MM-dd",
                    "projection.date.range": "2024-01-01,NOW",
                    "storage.location.template": f"s3://{self.bucket.bucket_name}/ledger/"
                    "tenant=${tenant}/date=${date}/",
                },
                partition_keys=[
                    glue.CfnTable.ColumnProperty(name="tenant", type="string"),
                    glue.CfnTable.ColumnProperty(name="date", type="string"),
                ],
                storage_descriptor=glue.CfnTable.StorageDescriptorProperty(
                    location=f"s3://{self.bucket.bucket_name}/ledger/",
                    input_format="org.apache.hadoop.mapred.TextInputFormat",
                    output_format="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                    serde_info=glue.CfnTable.SerdeInfoProperty(
                        serialization_library="org.openx.data.jsonserde.JsonSerDe"
                    ),
                    columns=[glue.CfnTable.ColumnProperty(name=n, type=t) for n, t in COLUMNS],
                ),
            ),
        )
        self.table.add_resource_dependency(database)

    def grant_to(self, function: lambda_.Function) -> None:
        """Let a function archive, restore and erase: put, read, list, and delete every
        version of an object (an erasure leaves no old version behind)."""
        assert function.role is not None
        function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["s3:ListBucket", "s3:ListBucketVersions"],
                resources=[self.bucket.bucket_arn],
            )
        )
        function.add_to_role_policy(
            iam.PolicyStatement(
                # AbortMultipartUpload: retention writes a large object in parts and ends the
                # upload itself when the day fails (decision 0117)
                actions=["s3:PutObject", "s3:AbortMultipartUpload", "s3:GetObject",
                         "s3:DeleteObject", "s3:DeleteObjectVersion"],
                resources=[self.bucket.arn_for_objects("ledger/*")],
            )
        )  # fmt: skip
        suppress(
            function.role,
            "AwsSolutions-IAM5",
            "objects under the archive bucket's ledger/ prefix only: retention writes one object "
            "per tenant and day, restore reads them, erasure deletes a tenant's versions.",
            [f"Resource::<{Stack.of(self).get_logical_id(self._cfn_bucket)}.Arn>/ledger/*"],
        )
        function.add_environment("HOOKLINE_ARCHIVE_BUCKET", self.bucket.bucket_name)
