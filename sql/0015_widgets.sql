-- Widgets (Zulip's SubMessage): the data polls and to-do lists keep on a message. The
-- first is the widget itself (`msg_type` 'widget', content `{"widget_type", "extra_data"}`),
-- posted with a `/poll` or `/todo` message; later ones are votes, options and tasks.
CREATE TABLE submessages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id INTEGER NOT NULL REFERENCES messages(id),
    sender_id  INTEGER NOT NULL REFERENCES users(id),
    msg_type   TEXT    NOT NULL,
    -- As the client sent it (a JSON string).
    content    TEXT    NOT NULL
);
CREATE INDEX submessages_message ON submessages (message_id, id);

-- Group direct-message conversations (Zulip's DirectMessageGroup), numbered so that their
-- messages' `recipient_id` is small and stable: a channel message's is 3 * channel id, a
-- one-to-one message's 3 * user id + 1, a group's 3 * this id + 2 (one space, no overlap).
-- `dm_key` is the participants' sorted ids, as on `messages`.
CREATE TABLE dm_groups (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id INTEGER NOT NULL REFERENCES realms(id),
    dm_key   TEXT    NOT NULL UNIQUE
);
-- The conversations that already have messages, in the order they started.
INSERT INTO dm_groups (realm_id, dm_key)
    SELECT realm_id, dm_key FROM messages
    WHERE dm_key IS NOT NULL AND dm_key LIKE '%,%,%'
    GROUP BY dm_key ORDER BY MIN(id);
