-- A replay that resets a delivery, or creates one, in a slice already archived marks the
-- slice changed, and the day's drop writes it again (decision 0118, amended). The drop's two
-- counts (events, rows of `attempts`) see neither a delivery a replay creates (its first
-- attempt is on its row) nor a reset one that ends without an attempt (dead, expired), so
-- without the mark the archive would keep what the slice read and the drop would lose the
-- rest.
ALTER TABLE archive_slices ADD COLUMN changed boolean NOT NULL DEFAULT false;
