-- Web sessions (signing in at /login/) and password resets.
--
-- A session's cookie holds a random token; only its SHA-256 is stored, so that a copy of
-- the database signs nobody in. `password_fp` fingerprints the password hash the user had
-- when signing in: a password change ends every other session, as Django's session hash
-- does in Zulip.
CREATE TABLE web_sessions (
    id_hash     TEXT    PRIMARY KEY,
    realm_id    INTEGER NOT NULL REFERENCES realms(id),
    user_id     INTEGER NOT NULL REFERENCES users(id),
    password_fp TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);
CREATE INDEX web_sessions_user ON web_sessions (user_id);

-- A password reset link's token (its SHA-256), usable once before it expires.
CREATE TABLE password_resets (
    token_hash TEXT    PRIMARY KEY,
    realm_id   INTEGER NOT NULL REFERENCES realms(id),
    user_id    INTEGER NOT NULL REFERENCES users(id),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX password_resets_user ON password_resets (user_id);
