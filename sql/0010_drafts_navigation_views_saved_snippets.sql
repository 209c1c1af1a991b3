-- Things a user keeps for themselves: drafts synchronized between their clients (Zulip's
-- Draft), their navigation views (NavigationView) and their saved snippets (SavedSnippet).
-- Each row goes with its user (ON DELETE CASCADE, as in Zulip); turning
-- `enable_drafts_synchronization` off deletes the user's drafts.

-- A draft: `kind` is '' (not addressed yet), 'stream' or 'private'; `recipients` is the
-- JSON list the API shows as `to` (the channel id; the other participants ascending, or the
-- user's own id for a draft to themselves). `last_edit_micros` is the edit time in
-- microseconds since the epoch, which orders the drafts.
CREATE TABLE drafts (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id          INTEGER NOT NULL REFERENCES realms(id),
    user_id           INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind              TEXT    NOT NULL,
    recipients        TEXT    NOT NULL,
    topic             TEXT    NOT NULL,
    content           TEXT    NOT NULL,
    last_edit_micros  INTEGER NOT NULL
);
CREATE INDEX drafts_user ON drafts (user_id, last_edit_micros, id);

-- A navigation view: a built-in view's settings (no name) or a custom view (named), one
-- per fragment for each user, in the order they were added (`id`).
CREATE TABLE navigation_views (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id   INTEGER NOT NULL REFERENCES realms(id),
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    fragment   TEXT    NOT NULL,
    is_pinned  INTEGER NOT NULL,
    name       TEXT,
    UNIQUE (user_id, fragment)
);
CREATE INDEX navigation_views_realm ON navigation_views (realm_id, id);

-- A saved snippet, in the order they were made (`id`); `date_created` in seconds.
CREATE TABLE saved_snippets (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id      INTEGER NOT NULL REFERENCES realms(id),
    user_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    title         TEXT    NOT NULL,
    content       TEXT    NOT NULL,
    date_created  INTEGER NOT NULL
);
CREATE INDEX saved_snippets_realm ON saved_snippets (realm_id, id);
