-- Replays that outlast one run of the replay function continue in the next
-- (docs/decisions/0021-replay-continuation.md). A run that nears its time limit hands off:
-- it writes where it got to and the summary so far (`resume`), marks the hand-off
-- (`handed_off_at`) and invokes the function again for the next run; that run claims the row
-- only while `runs` is still the number it was handed off from, so a duplicate or late
-- invocation does nothing. Reconcile re-invokes a hand-off nobody claimed (`reinvoked`
-- counts those) and fails runners that went quiet.
ALTER TABLE replays ADD COLUMN runs integer NOT NULL DEFAULT 0;
ALTER TABLE replays ADD COLUMN resume jsonb;
ALTER TABLE replays ADD COLUMN handed_off_at timestamptz;
ALTER TABLE replays ADD COLUMN reinvoked integer NOT NULL DEFAULT 0;
