-- The retention policy (Zulip's feature level 452) deletes a channel's messages sent before
-- a date, and the organization's direct messages sent before a date: these indexes find
-- them without reading the messages that stay.
--
-- Applied once, in a transaction. Never edit a migration that has landed: add the next
-- numbered file instead.

CREATE INDEX messages_channel_date ON messages (channel_id, date_sent) WHERE channel_id IS NOT NULL;
CREATE INDEX messages_direct_date ON messages (realm_id, date_sent) WHERE channel_id IS NULL;
