-- Uploaded files (Zulip's Attachment and ImageAttachment), the messages that claim them
-- (Attachment.messages) and the organization's custom emoji (RealmEmoji). The files
-- themselves live under the data directory's `uploads/`, named by `path_id`.

CREATE TABLE attachments (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id        INTEGER NOT NULL REFERENCES realms(id),
    owner_id        INTEGER NOT NULL REFERENCES users(id),
    -- `<realm_id>/<xx>/<random>/<sanitized name>`: the URL is `/user_uploads/<path_id>`.
    path_id         TEXT    NOT NULL UNIQUE,
    -- The name as uploaded (`filename` of the upload's reply, `name` of the attachment).
    name            TEXT    NOT NULL,
    size            INTEGER NOT NULL,
    content_type    TEXT,
    -- Seconds since the epoch.
    create_time     INTEGER NOT NULL,
    -- Claimed by a message of a public channel (readable by its non-guest members).
    is_realm_public INTEGER NOT NULL DEFAULT 0,
    is_web_public   INTEGER NOT NULL DEFAULT 0,
    -- Images only (NULL otherwise): dimensions as shown, frame count, and the thumbnails
    -- made so far as a JSON list of format names ('[]': not made yet, the worker's queue).
    image_width     INTEGER,
    image_height    INTEGER,
    image_frames    INTEGER,
    thumbnails      TEXT
);
CREATE INDEX attachments_realm_owner ON attachments (realm_id, owner_id);
CREATE INDEX attachments_pending_thumbnails ON attachments (id) WHERE thumbnails = '[]';

CREATE TABLE attachment_messages (
    attachment_id  INTEGER NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
    message_id     INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    PRIMARY KEY (attachment_id, message_id)
);
CREATE INDEX attachment_messages_message ON attachment_messages (message_id);

-- Custom emoji: `file_name` under `<realm_id>/emoji/images/` of the avatar files.
CREATE TABLE realm_emoji (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id     INTEGER NOT NULL REFERENCES realms(id),
    name         TEXT    NOT NULL,
    file_name    TEXT    NOT NULL,
    author_id    INTEGER REFERENCES users(id),
    deactivated  INTEGER NOT NULL DEFAULT 0,
    is_animated  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX realm_emoji_realm ON realm_emoji (realm_id, name);
