-- The `lambda` destination kind (decision 0057): a function ARN in `url`, invoked through
-- the customer's role like the other AWS kinds.
ALTER TABLE endpoints DROP CONSTRAINT endpoints_kind_check;
ALTER TABLE endpoints ADD CONSTRAINT endpoints_kind_check
    CHECK (kind IN ('https', 'sqs', 'sns', 'eventbridge', 'kinesis', 's3', 'lambda'));
