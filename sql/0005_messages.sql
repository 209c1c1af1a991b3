-- Messages: what sending, fetching, editing, flags and reactions need beyond the table of
-- 0004 (whose `messages` and `user_messages` stay).

-- Direct messages: the sorted ids of everyone in the conversation, e.g. '3,7' or '3,7,9'
-- (a message to oneself: '3'); NULL for channel messages.
ALTER TABLE messages ADD COLUMN dm_key TEXT;
ALTER TABLE messages ADD COLUMN rendered_content TEXT NOT NULL DEFAULT '';
-- The sending client's name (`client` in the API).
ALTER TABLE messages ADD COLUMN sending_client TEXT NOT NULL DEFAULT 'API';
ALTER TABLE messages ADD COLUMN last_edit_time INTEGER;
ALTER TABLE messages ADD COLUMN last_moved_time INTEGER;
-- JSON list of edit-history entries, newest first (NULL: never edited).
ALTER TABLE messages ADD COLUMN edit_history TEXT;
ALTER TABLE messages ADD COLUMN has_link INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN has_image INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN has_attachment INTEGER NOT NULL DEFAULT 0;

CREATE INDEX messages_realm_id ON messages (realm_id, id);
CREATE INDEX messages_dm ON messages (dm_key, id) WHERE dm_key IS NOT NULL;
CREATE INDEX messages_sender ON messages (sender_id, id);

-- Per-user flags (Zulip's UserMessage bits: read 1, starred 2, collapsed 4, mentioned 8,
-- stream_wildcard_mentioned 16, has_alert_word 512, historical 1024, is_private 2048,
-- topic_wildcard_mentioned 8192, group_mentioned 16384) get partial indexes for the
-- narrows and counts that look for them.
CREATE INDEX user_messages_unread ON user_messages (user_id, message_id) WHERE (flags & 1) = 0;
CREATE INDEX user_messages_starred ON user_messages (user_id, message_id) WHERE (flags & 2) != 0;
CREATE INDEX user_messages_mentioned ON user_messages (user_id, message_id) WHERE (flags & (8 | 16 | 8192 | 16384)) != 0;
CREATE INDEX user_messages_private ON user_messages (user_id, message_id) WHERE (flags & 2048) != 0;

CREATE TABLE reactions (
    message_id     INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    user_id        INTEGER NOT NULL REFERENCES users(id),
    emoji_name     TEXT    NOT NULL,
    emoji_code     TEXT    NOT NULL,
    -- unicode_emoji, realm_emoji, zulip_extra_emoji.
    reaction_type  TEXT    NOT NULL,
    PRIMARY KEY (message_id, user_id, reaction_type, emoji_code)
) WITHOUT ROWID;

-- Full-text search over content and topic.
CREATE VIRTUAL TABLE messages_fts USING fts5(content, topic, content='messages', content_rowid='id');

-- A channel's messages in order (the channel narrow without a topic).
CREATE INDEX messages_channel ON messages (channel_id, id);

-- Who received a message (reaction and deletion events, foreign-key checks on delete).
CREATE INDEX user_messages_message ON user_messages (message_id);
