-- Every reader of one delivery's attempts looks them up by `delivery_id` (the API, the
-- console, the portal's log, retention's deletes), and the primary key (delivery_id, id)
-- already leads with it; they order a handful of rows by `attempted_at` after that. The
-- second index on (delivery_id, attempted_at) only cost each attempt one more index entry:
-- 3 % of the WAL per delivered event (bench/pipeline.py, docs/performance.md). The BRIN
-- index on `attempted_at` (the operational monitor's and the console's windows) stays.
DROP INDEX attempts_delivery_idx;
