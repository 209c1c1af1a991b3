-- Code playgrounds (Zulip's RealmPlayground): external sites that code blocks of a language
-- can be opened in, through a URL template with the one variable `code`. The same name may
-- serve several languages, and a language several sites.

CREATE TABLE realm_playgrounds (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id          INTEGER NOT NULL REFERENCES realms(id),
    name              TEXT    NOT NULL,
    pygments_language TEXT    NOT NULL,
    url_template      TEXT    NOT NULL,
    UNIQUE (realm_id, pygments_language, name)
);
