-- A day past retention is archived in slices, each in its own transaction and across runs if
-- it must be, then dropped whole (decision 0118). A slice is a range of the day's event ids
-- [lo, hi), its bounds whole milliseconds, so its deliveries are the delivery ids of the same
-- range (`hookline_delivery_id` keeps the event's millisecond). Its row says what its archive
-- objects hold, per tenant ([events, deliveries, attempts]): the day's drop counts the slice
-- again and writes it again if its rows changed since (a replay, a restore, an erasure). The
-- rows go with the day's drop.
CREATE TABLE archive_slices (
    day          date NOT NULL,
    lo           text COLLATE "C" NOT NULL,
    hi           text COLLATE "C" NOT NULL,
    counts       jsonb NOT NULL,
    archived_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (day, lo),
    CHECK (lo < hi)
);
