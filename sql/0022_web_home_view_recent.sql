-- Zulip's feature level 454 names the recent conversations home view `recent` (it was
-- `recent_topics`): stored personal settings and organization defaults follow.
--
-- Applied once, in a transaction. Never edit a migration that has landed: add the next
-- numbered file instead.

UPDATE users
SET settings = json_set(settings, '$.web_home_view', 'recent')
WHERE json_extract(settings, '$.web_home_view') = 'recent_topics';

UPDATE realms
SET user_defaults = json_set(user_defaults, '$.web_home_view', 'recent')
WHERE json_extract(user_defaults, '$.web_home_view') = 'recent_topics';
