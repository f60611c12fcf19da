-- Content filters (EventBridge event patterns, decision 0044) and input transformers
-- (decision 0045) of an endpoint. NULL: every event that passes the type filter, as sent.
-- Numbered well above the partitioning migrations being written alongside.
ALTER TABLE endpoints ADD COLUMN content_filter jsonb;
ALTER TABLE endpoints ADD COLUMN input_transformer jsonb;
