-- Where a reconciler walk stopped, so the next run resumes there (decision 0056): the repair
-- of missing deliveries walks the window's events by id, and a run stopped by its page bound
-- or its time budget would otherwise start again at the window's oldest event and never reach
-- the newest. `after_id` NULL: the next run starts at the window's start. `cycle` counts full
-- walks; a run writes its position only if no other run finished the cycle meanwhile.
CREATE TABLE reconcile_positions (
    name       text PRIMARY KEY,
    cycle      bigint NOT NULL DEFAULT 0,
    after_id   text,
    updated_at timestamptz NOT NULL DEFAULT now()
);
