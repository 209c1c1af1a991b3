//! Source ids to new ids, in every place an id can hide: settings that name groups or
//! channels, person-picker values, edit histories, and the ids in a message's Markdown and
//! HTML (mentions, channel links, narrow links, upload paths).

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::{Captures, Regex};
use serde_json::{Map, Value};

/// Source id -> new id, per kind of object.
#[derive(Debug, Default)]
pub struct IdMaps {
    pub users: HashMap<i64, i64>,
    pub groups: HashMap<i64, i64>,
    pub channels: HashMap<i64, i64>,
    pub fields: HashMap<i64, i64>,
    pub folders: HashMap<i64, i64>,
    pub emoji: HashMap<i64, i64>,
    pub messages: HashMap<i64, i64>,
    /// The source's realm id in upload and emoji paths, and the new one.
    pub realm: Option<(i64, i64)>,
}

fn map(table: &HashMap<i64, i64>, id: i64) -> i64 {
    table.get(&id).copied().unwrap_or(id)
}

impl IdMaps {
    /// A group-setting value (a group id, or `{"direct_members", "direct_subgroups"}`).
    pub fn group_setting(&self, value: &Value) -> Value {
        match value {
            Value::Number(n) => {
                n.as_i64().map(|id| Value::from(map(&self.groups, id))).unwrap_or_else(|| value.clone())
            }
            Value::Object(o) => {
                let ids = |key: &str, table: &HashMap<i64, i64>| -> Value {
                    let list = o.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
                    Value::Array(list.iter().filter_map(Value::as_i64).map(|id| Value::from(map(table, id))).collect())
                };
                serde_json::json!({
                    "direct_members": ids("direct_members", &self.users),
                    "direct_subgroups": ids("direct_subgroups", &self.groups),
                })
            }
            _ => value.clone(),
        }
    }

    /// Settings: `*_group` values are group settings, `*_stream_id` values channel ids (-1
    /// stays: none).
    pub fn settings(&self, settings: &Map<String, Value>) -> Map<String, Value> {
        settings
            .iter()
            .map(|(key, value)| {
                let value = if key.ends_with("_group") {
                    self.group_setting(value)
                } else if key.ends_with("_stream_id") {
                    match value.as_i64() {
                        Some(id) if id > 0 => Value::from(map(&self.channels, id)),
                        _ => value.clone(),
                    }
                } else {
                    value.clone()
                };
                (key.clone(), value)
            })
            .collect()
    }

    /// A person picker's value: a JSON list of user ids.
    pub fn person_list(&self, value: &str) -> String {
        match serde_json::from_str::<Vec<i64>>(value) {
            Ok(ids) => Value::from(ids.into_iter().map(|id| map(&self.users, id)).collect::<Vec<_>>()).to_string(),
            Err(_) => value.to_owned(),
        }
    }

    /// Zulip's `edit_history`: each entry's `user_id`, `stream`/`prev_stream`.
    pub fn edit_history(&self, history: &Value) -> Value {
        let mut history = history.clone();
        if let Some(entries) = history.as_array_mut() {
            for entry in entries.iter_mut().filter_map(Value::as_object_mut) {
                for (key, table) in
                    [("user_id", &self.users), ("stream", &self.channels), ("prev_stream", &self.channels)]
                {
                    if let Some(id) = entry.get(key).and_then(Value::as_i64) {
                        entry.insert(key.to_owned(), Value::from(map(table, id)));
                    }
                }
            }
        }
        history
    }

    /// Ids in a message's Markdown or HTML: mentions (`@**Name|7**`, `data-user-id`),
    /// group mentions, channel ids (`data-stream-id`, narrow links), message ids (`near`,
    /// `with`) and the realm id of upload and emoji paths.
    pub fn text(&self, text: &str) -> String {
        static IDS: OnceLock<Regex> = OnceLock::new();
        let re = IDS.get_or_init(|| {
            let alternatives = [
                r#"(?P<uattr>data-user-id=")(?P<u>\d+)"#,
                r#"(?P<gattr>data-user-group-id=")(?P<g>\d+)"#,
                r#"(?P<cattr>data-stream-id=")(?P<c>\d+)"#,
                r"(?P<mention>@_?\*\*[^*|\n]+\|)(?P<m>\d+)\*\*",
                r"(?P<narrow>#narrow/(?:channel|stream)/)(?P<n>\d+)",
                r"(?P<near>/(?:near|with)/)(?P<msg>\d+)",
                r"(?P<upload>/user_uploads/(?:thumbnail/)?)(?P<r>\d+)/",
                r"(?P<avatars>/user_avatars/)(?P<a>\d+)/emoji/",
            ];
            Regex::new(&alternatives.join("|")).unwrap_or_else(|e| unreachable!("a fixed pattern: {e}"))
        });
        re.replace_all(text, |c: &Captures<'_>| {
            let number = |name: &str| c.name(name).and_then(|m| m.as_str().parse::<i64>().ok()).unwrap_or(0);
            let realm = |old: i64| match self.realm {
                Some((from, to)) if from == old => to,
                _ => old,
            };
            if let Some(p) = c.name("uattr") {
                format!("{}{}", p.as_str(), map(&self.users, number("u")))
            } else if let Some(p) = c.name("gattr") {
                format!("{}{}", p.as_str(), map(&self.groups, number("g")))
            } else if let Some(p) = c.name("cattr") {
                format!("{}{}", p.as_str(), map(&self.channels, number("c")))
            } else if let Some(p) = c.name("mention") {
                format!("{}{}**", p.as_str(), map(&self.users, number("m")))
            } else if let Some(p) = c.name("narrow") {
                format!("{}{}", p.as_str(), map(&self.channels, number("n")))
            } else if let Some(p) = c.name("near") {
                format!("{}{}", p.as_str(), map(&self.messages, number("msg")))
            } else if let Some(p) = c.name("upload") {
                format!("{}{}/", p.as_str(), realm(number("r")))
            } else if let Some(p) = c.name("avatars") {
                format!("{}{}/emoji/", p.as_str(), realm(number("a")))
            } else {
                c[0].to_owned()
            }
        })
        .into_owned()
    }

    /// A source upload path id (`<realm>/xx/yyy/name`) with the new realm id.
    pub fn path_id(&self, path_id: &str) -> String {
        match (self.realm, path_id.split_once('/')) {
            (Some((from, to)), Some((first, rest))) if first == from.to_string() => format!("{to}/{rest}"),
            (Some((_, to)), _) => format!("{to}/{path_id}"),
            (None, _) => path_id.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn maps() -> IdMaps {
        IdMaps {
            users: [(7, 107), (8, 108)].into(),
            groups: [(3, 203)].into(),
            channels: [(5, 305)].into(),
            messages: [(40, 940)].into(),
            realm: Some((2, 12)),
            ..Default::default()
        }
    }

    #[test]
    fn ids_in_markdown_and_html_follow_their_objects() {
        let m = maps();
        let html = r#"<p><span class="user-mention" data-user-id="7">@Iago</span> <span class="user-group-mention" data-user-group-id="3">@g</span> <a class="stream" data-stream-id="5" href="/#narrow/channel/5-general">#general</a> <a href="/#narrow/channel/5-general/topic/x/near/40">x</a> <a href="/user_uploads/2/ab/cd/f.png">f</a> <img src="/user_uploads/thumbnail/2/ab/cd/f.png/840x560.webp"> <img src="/user_avatars/2/emoji/images/1.png"></p>"#;
        assert_eq!(
            m.text(html),
            r#"<p><span class="user-mention" data-user-id="107">@Iago</span> <span class="user-group-mention" data-user-group-id="203">@g</span> <a class="stream" data-stream-id="305" href="/#narrow/channel/305-general">#general</a> <a href="/#narrow/channel/305-general/topic/x/near/940">x</a> <a href="/user_uploads/12/ab/cd/f.png">f</a> <img src="/user_uploads/thumbnail/12/ab/cd/f.png/840x560.webp"> <img src="/user_avatars/12/emoji/images/1.png"></p>"#
        );
        assert_eq!(
            m.text("hi @**Iago|7** and @_**Bob|8**, [f](/user_uploads/2/a/b/f.txt)"),
            "hi @**Iago|107** and @_**Bob|108**, [f](/user_uploads/12/a/b/f.txt)"
        );
        // Ids that name nothing imported stay as they were; so does other text.
        assert_eq!(m.text(r#"data-user-id="99" /near/41 2/ab"#), r#"data-user-id="99" /near/41 2/ab"#);
    }

    #[test]
    fn settings_name_the_new_groups_and_channels() {
        let m = maps();
        let settings = json!({
            "can_create_public_channel_group": 3,
            "can_add_custom_emoji_group": {"direct_members": [7, 99], "direct_subgroups": [3]},
            "new_stream_announcements_stream_id": 5,
            "signup_announcements_stream_id": -1,
            "waiting_period_threshold": 3,
        });
        let out = m.settings(settings.as_object().unwrap());
        assert_eq!(
            Value::Object(out),
            json!({
                "can_create_public_channel_group": 203,
                "can_add_custom_emoji_group": {"direct_members": [107, 99], "direct_subgroups": [203]},
                "new_stream_announcements_stream_id": 305,
                "signup_announcements_stream_id": -1,
                "waiting_period_threshold": 3,
            })
        );
        assert_eq!(m.person_list("[8, 7]"), "[108,107]");
        assert_eq!(m.path_id("2/ab/cd/f.png"), "12/ab/cd/f.png");
        let history = json!([{"user_id": 7, "timestamp": 1, "prev_stream": 5, "stream": 6}]);
        assert_eq!(
            m.edit_history(&history),
            json!([{"user_id": 107, "timestamp": 1, "prev_stream": 305, "stream": 6}])
        );
    }
}
