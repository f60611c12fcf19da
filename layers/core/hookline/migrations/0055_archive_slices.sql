-- A day past retention is archived in slices, each in its own transaction and across runs if
-- it must be, then dropped whole (decision 0118). A slice is a range of the day's event ids
-- [lo, hi), its bounds whole milliseconds, so its deliveries are the delivery ids of the same
-- range (`hookline_delivery_id` keeps the event's millisecond). Its row says what its archive
-- objects hold, per tenant ([events, deliveries, attempts]), and how many rows of `attempts`
-- the slice had before it was read: the day's drop counts both again (two index ranges) and
-- writes the slice again if they changed since (a replay's attempt, a restore, an erasure, an
-- event that was unfinished). The rows go with the day's drop.
CREATE TABLE archive_slices (
    day          date NOT NULL,
    lo           text COLLATE "C" NOT NULL,
    hi           text COLLATE "C" NOT NULL,
    counts       jsonb NOT NULL,
    attempt_rows bigint NOT NULL,
    archived_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (day, lo),
    CHECK (lo < hi)
);
