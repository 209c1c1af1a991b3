-- Channels, subscriptions, default channels, channel folders, per-user topic policies,
-- and the messages table that topics come from (issue 6 extends it).

CREATE TABLE channel_folders (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id              INTEGER NOT NULL REFERENCES realms(id),
    name                  TEXT    NOT NULL,
    description           TEXT    NOT NULL DEFAULT '',
    rendered_description  TEXT    NOT NULL DEFAULT '',
    -- Position in the organization's list.
    sort_order            INTEGER NOT NULL,
    is_archived           INTEGER NOT NULL DEFAULT 0,
    creator_id            INTEGER REFERENCES users(id),
    date_created          INTEGER NOT NULL
);
CREATE UNIQUE INDEX channel_folders_realm_name ON channel_folders (realm_id, name COLLATE NOCASE);

CREATE TABLE channels (
    id                             INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id                       INTEGER NOT NULL REFERENCES realms(id),
    name                           TEXT    NOT NULL,
    description                    TEXT    NOT NULL DEFAULT '',
    rendered_description           TEXT    NOT NULL DEFAULT '',
    invite_only                    INTEGER NOT NULL DEFAULT 0,
    is_web_public                  INTEGER NOT NULL DEFAULT 0,
    history_public_to_subscribers  INTEGER NOT NULL DEFAULT 1,
    -- NULL inherits the organization's setting; -1 keeps messages forever.
    message_retention_days         INTEGER,
    -- inherit, allow_empty_topic, disable_empty_topic, empty_topic_only.
    topics_policy                  TEXT    NOT NULL DEFAULT 'inherit',
    folder_id                      INTEGER REFERENCES channel_folders(id),
    creator_id                     INTEGER REFERENCES users(id),
    date_created                   INTEGER NOT NULL,
    is_archived                    INTEGER NOT NULL DEFAULT 0,
    -- The can_*_group permission settings, as a JSON object of group-setting values.
    settings                       TEXT    NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX channels_realm_name ON channels (realm_id, name COLLATE NOCASE);

-- A user's subscription to a channel; `active` is 0 once they unsubscribed (the row keeps
-- their personal settings, as Zulip's does).
CREATE TABLE subscriptions (
    user_id                   INTEGER NOT NULL REFERENCES users(id),
    channel_id                INTEGER NOT NULL REFERENCES channels(id),
    active                    INTEGER NOT NULL DEFAULT 1,
    color                     TEXT    NOT NULL,
    is_muted                  INTEGER NOT NULL DEFAULT 0,
    pin_to_top                INTEGER NOT NULL DEFAULT 0,
    -- NULL inherits the user's setting.
    desktop_notifications     INTEGER,
    audible_notifications     INTEGER,
    push_notifications        INTEGER,
    email_notifications       INTEGER,
    wildcard_mentions_notify  INTEGER,
    PRIMARY KEY (user_id, channel_id)
) WITHOUT ROWID;
CREATE INDEX subscriptions_channel ON subscriptions (channel_id, active);

CREATE TABLE default_channels (
    realm_id    INTEGER NOT NULL REFERENCES realms(id),
    channel_id  INTEGER NOT NULL REFERENCES channels(id),
    PRIMARY KEY (realm_id, channel_id)
) WITHOUT ROWID;

-- A user's visibility policy for one topic (1 muted, 2 unmuted, 3 followed).
CREATE TABLE user_topics (
    user_id            INTEGER NOT NULL REFERENCES users(id),
    channel_id         INTEGER NOT NULL REFERENCES channels(id),
    topic              TEXT    NOT NULL,
    visibility_policy  INTEGER NOT NULL,
    last_updated       INTEGER NOT NULL,
    PRIMARY KEY (user_id, channel_id, topic COLLATE NOCASE)
) WITHOUT ROWID;

-- Messages, as far as channels and topics need them; the messages issue adds the rest.
CREATE TABLE messages (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id      INTEGER NOT NULL REFERENCES realms(id),
    sender_id     INTEGER NOT NULL REFERENCES users(id),
    -- Set for channel messages; NULL for direct messages.
    channel_id    INTEGER REFERENCES channels(id),
    topic         TEXT    NOT NULL DEFAULT '',
    content       TEXT    NOT NULL,
    date_sent     INTEGER NOT NULL
);
CREATE INDEX messages_channel_topic ON messages (channel_id, topic COLLATE NOCASE, id);

-- Who received which message (Zulip's UserMessage): a channel message's subscribers when it
-- was sent. Topics of a channel with protected history come from these rows.
CREATE TABLE user_messages (
    user_id     INTEGER NOT NULL REFERENCES users(id),
    message_id  INTEGER NOT NULL REFERENCES messages(id),
    flags       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, message_id)
) WITHOUT ROWID;
