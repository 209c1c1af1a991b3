-- Event queues saved at a graceful shutdown and restored (then deleted) when their realm
-- starts again, so clients keep polling across a restart.

CREATE TABLE event_queues (
    queue_id  TEXT    PRIMARY KEY,
    realm_id  INTEGER NOT NULL REFERENCES realms(id),
    user_id   INTEGER NOT NULL REFERENCES users(id),
    -- The queue as JSON: its registration, ids and unacknowledged events.
    data      TEXT    NOT NULL,
    -- Unix seconds when it was saved; the downtime counts as idle time.
    saved_at  INTEGER NOT NULL
);
CREATE INDEX event_queues_realm ON event_queues (realm_id);
