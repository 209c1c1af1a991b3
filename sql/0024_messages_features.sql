-- Zulip 12's changes to messages, uploads, linkifiers and GIFs (feature levels 436-479).

-- FL 453: the organization's GIF rating is `gif_rating_policy` (it was `giphy_rating`).
UPDATE realms
   SET settings = json_remove(json_set(settings, '$.gif_rating_policy', json_extract(settings, '$.giphy_rating')),
                              '$.giphy_rating')
 WHERE json_type(settings, '$.giphy_rating') IS NOT NULL;

-- FL 471: a linkifier's example input and reverse template (NULL: none); FL 478: its
-- alternative URL templates, a JSON list.
ALTER TABLE realm_linkifiers ADD COLUMN example_input TEXT;
ALTER TABLE realm_linkifiers ADD COLUMN reverse_template TEXT;
ALTER TABLE realm_linkifiers ADD COLUMN alternative_url_templates TEXT NOT NULL DEFAULT '[]';
