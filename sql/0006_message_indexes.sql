-- Indexes that 0005 gained after it had landed: a database already at version 5 before
-- then lacks them. IF NOT EXISTS, since databases created later have them from 0005.

-- A channel's messages in order (the channel narrow without a topic).
CREATE INDEX IF NOT EXISTS messages_channel ON messages (channel_id, id);

-- Who received a message (reaction and deletion events, foreign-key checks on delete).
CREATE INDEX IF NOT EXISTS user_messages_message ON user_messages (message_id);
