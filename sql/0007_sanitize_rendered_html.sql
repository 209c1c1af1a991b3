-- One-time rewrites of stored data that SQL alone cannot make, run by the server right
-- after the migrations (actors/src/store/fixes.rs) and removed from here once done.
CREATE TABLE pending_data_fixes (
    name TEXT PRIMARY KEY
);

-- HTML rendered before links were limited to Zulip's URL schemes may hold `javascript:`
-- and other script-capable links: pass every stored rendering through the sanitizer.
INSERT INTO pending_data_fixes (name) VALUES ('sanitize_rendered_html');
