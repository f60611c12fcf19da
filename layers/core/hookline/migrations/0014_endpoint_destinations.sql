-- Content filters (EventBridge event patterns, decision 0044) and input transformers
-- (decision 0045) of an endpoint. NULL: every event that passes the type filter, as sent.
-- Numbered well above the partitioning migrations being written alongside.
ALTER TABLE endpoints ADD COLUMN content_filter jsonb;
ALTER TABLE endpoints ADD COLUMN input_transformer jsonb;

-- Destination kinds (decision 0046): an endpoint is an https URL (`url`), or a target in the
-- customer's AWS account (its ARN in `url`) reached by assuming `role_arn` with the tenant's
-- ExternalId; `destination` holds the kind's options (FIFO group path, bus source, ...).
ALTER TABLE endpoints ADD COLUMN kind text NOT NULL DEFAULT 'https'
    CHECK (kind IN ('https', 'sqs', 'sns', 'eventbridge', 'kinesis', 's3'));
ALTER TABLE endpoints ADD COLUMN role_arn text;
ALTER TABLE endpoints ADD COLUMN destination jsonb NOT NULL DEFAULT '{}';
ALTER TABLE endpoints ADD CONSTRAINT endpoints_aws_kinds_have_a_role
    CHECK (kind = 'https' OR role_arn IS NOT NULL);
-- AWS's confused-deputy guidance: one ExternalId per tenant, generated, shown to it.
ALTER TABLE tenants ADD COLUMN external_id text NOT NULL
    DEFAULT ('hkl-' || md5(random()::text || clock_timestamp()::text));
