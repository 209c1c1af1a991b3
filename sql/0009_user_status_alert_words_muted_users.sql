-- Personal data kept with each account: the status a user sets (Zulip's UserStatus), their
-- alert words (AlertWord) and the users they muted (MutedUser).

-- At most one status per user; a row exists once the user has set a status (even an empty
-- one), as in Zulip, where that decides whether the user appears in `user_status`.
CREATE TABLE user_statuses (
    user_id        INTEGER PRIMARY KEY REFERENCES users(id),
    realm_id       INTEGER NOT NULL REFERENCES realms(id),
    status_text    TEXT    NOT NULL DEFAULT '',
    emoji_name     TEXT    NOT NULL DEFAULT '',
    emoji_code     TEXT    NOT NULL DEFAULT '',
    -- 'unicode_emoji', 'realm_emoji' or 'zulip_extra_emoji'.
    reaction_type  TEXT    NOT NULL DEFAULT 'unicode_emoji',
    -- When it was last set (seconds since the epoch).
    timestamp      INTEGER NOT NULL
);
CREATE INDEX user_statuses_realm ON user_statuses (realm_id);

-- A user's alert words, in the order they were added (`id`); compared case-insensitively,
-- so no two words of a user differ only in case.
CREATE TABLE alert_words (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id  INTEGER NOT NULL REFERENCES realms(id),
    user_id   INTEGER NOT NULL REFERENCES users(id),
    word      TEXT    NOT NULL,
    UNIQUE (user_id, word)
);
CREATE INDEX alert_words_realm ON alert_words (realm_id, id);

-- Who muted whom, in the order they did (`id`).
CREATE TABLE muted_users (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id       INTEGER NOT NULL REFERENCES realms(id),
    user_id        INTEGER NOT NULL REFERENCES users(id),
    muted_user_id  INTEGER NOT NULL REFERENCES users(id),
    date_muted     INTEGER NOT NULL,
    UNIQUE (user_id, muted_user_id)
);
CREATE INDEX muted_users_realm ON muted_users (realm_id, id);
