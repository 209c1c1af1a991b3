-- Zulip 12's changes to messages, uploads, linkifiers and GIFs (feature levels 436-479).

-- FL 453: the organization's GIF rating is `gif_rating_policy` (it was `giphy_rating`).
UPDATE realms
   SET settings = json_remove(json_set(settings, '$.gif_rating_policy', json_extract(settings, '$.giphy_rating')),
                              '$.giphy_rating')
 WHERE json_type(settings, '$.giphy_rating') IS NOT NULL;
