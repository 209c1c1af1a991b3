-- Presence (Zulip's UserPresence and PresenceSequence). Each organization's presence actor
-- keeps the rows in memory and writes the ones that changed in batches; they are read when
-- the organization starts.

CREATE TABLE user_presence (
    user_id              INTEGER PRIMARY KEY REFERENCES users(id),
    realm_id             INTEGER NOT NULL REFERENCES realms(id),
    -- Microseconds since the Unix epoch; NULL when never reported (active).
    last_active_time     INTEGER,
    last_connected_time  INTEGER,
    -- The organization-wide sequence number of the row's last change.
    last_update_id       INTEGER NOT NULL
);
CREATE INDEX user_presence_realm ON user_presence (realm_id);

-- Update ids are handed out from memory ahead of the batched writes: the sequence reserves
-- a range here first, so after a crash it resumes past every id a client may have seen.
CREATE TABLE presence_sequences (
    realm_id            INTEGER PRIMARY KEY REFERENCES realms(id),
    reserved_update_id  INTEGER NOT NULL
);
