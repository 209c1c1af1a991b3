-- Event queues saved in proportion to what is distinct: an event held by many queues (a
-- message to a channel, a presence change) is saved once, in event_queue_events, and each
-- queue's row in event_queues holds its registration and position in `data` and, in
-- `slots`, which saved event each of its waiting ids is (runs of consecutive ids and keys,
-- as varints). Rows saved before this migration have no `slots`: their `data` still carries
-- a copy of every event, and they are read once more that way.
ALTER TABLE event_queues ADD COLUMN slots BLOB;

CREATE TABLE event_queue_events (
    realm_id  INTEGER NOT NULL REFERENCES realms(id),
    -- Numbered from 0 in each save of a realm's queues.
    event_key INTEGER NOT NULL,
    -- The event as delivered, without its per-queue `id`.
    json      TEXT    NOT NULL,
    PRIMARY KEY (realm_id, event_key)
);
