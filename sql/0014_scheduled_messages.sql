-- Scheduled messages and reminders (Zulip's ScheduledMessage, with its two delivery types:
-- 1 "send later", 2 "remind"). A row stays after it is sent (`delivered`, with the id of
-- the message it became) so that it is never sent twice and a late edit or deletion gets
-- Zulip's answer; undelivered rows (failed ones included) are the organization's pending
-- work, loaded into memory when it starts.
--
-- A channel message has `channel_id` and `topic`; a direct message has `dm_participants`,
-- the JSON list of its participants (the sender included), ascending. A reminder is a
-- direct message to its sender about `reminder_target_message_id` (no foreign key: the
-- message may be deleted and the reminder still goes out with its saved content).
CREATE TABLE scheduled_messages (
    id                          INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id                    INTEGER NOT NULL REFERENCES realms(id),
    sender_id                   INTEGER NOT NULL REFERENCES users(id),
    delivery_type               INTEGER NOT NULL,
    channel_id                  INTEGER REFERENCES channels(id),
    topic                       TEXT    NOT NULL DEFAULT '',
    dm_participants             TEXT,
    content                     TEXT    NOT NULL,
    rendered_content            TEXT    NOT NULL,
    sending_client              TEXT    NOT NULL,
    scheduled_timestamp         INTEGER NOT NULL,
    read_by_sender              INTEGER NOT NULL DEFAULT 0,
    delivered                   INTEGER NOT NULL DEFAULT 0,
    delivered_message_id        INTEGER,
    failed                      INTEGER NOT NULL DEFAULT 0,
    failure_message             TEXT,
    reminder_target_message_id  INTEGER,
    reminder_note               TEXT
);
CREATE INDEX scheduled_messages_pending ON scheduled_messages (realm_id, scheduled_timestamp, id) WHERE delivered = 0;
CREATE INDEX scheduled_messages_sender ON scheduled_messages (sender_id);
