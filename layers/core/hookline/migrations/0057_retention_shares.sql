-- The expired tenants' share of a day that others keep goes a slice at a time, each slice
-- archived and deleted in its own transaction (decision 0118, amended). Where a run stopped,
-- written in the slice's transaction, so the next run (any reconcile run, not only the
-- hour's) goes on from there instead of walking the day again. The row goes when the share
-- reaches the day's end, or with the day.
CREATE TABLE retention_shares (
    day        date PRIMARY KEY,
    next_lo    text COLLATE "C" NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
