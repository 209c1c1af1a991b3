-- Zulip 12 gives new organizations Jdenticon avatars by default (`default_avatar_source`
-- "J", feature level 456) and keeps Gravatar for organizations that existed before: this
-- records "G" for every organization that has not chosen.
--
-- Applied once, in a transaction. Never edit a migration that has landed: add the next
-- numbered file instead.

UPDATE realms
SET settings = json_set(settings, '$.default_avatar_source', 'G')
WHERE json_extract(settings, '$.default_avatar_source') IS NULL;
