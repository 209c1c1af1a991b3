//! What a client asked of its queue at registration (Zulip's `ClientDescriptor`): which
//! events it wants, its narrow, its rendering choices and its capabilities; and how an
//! event is filtered and reshaped for it.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Forms};

pub use crate::realm::catalog::EMPTY_TOPIC_DISPLAY_NAME;

/// Prefix Zulip puts before resolved topics.
pub const RESOLVED_TOPIC_PREFIX: &str = "✔ ";

/// `client_capabilities` of `POST /register` (spec 4.22); all default to false.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientCapabilities {
    pub notification_settings_null: bool,
    pub bulk_message_deletion: bool,
    pub user_avatar_url_field_optional: bool,
    pub stream_typing_notifications: bool,
    pub user_settings_object: bool,
    pub linkifier_url_template: bool,
    pub user_list_incomplete: bool,
    pub include_deactivated_groups: bool,
    pub archived_channels: bool,
    pub empty_topic_name: bool,
    pub simplified_presence_events: bool,
    /// The client knows the pronouns field type (8); Zulip assumes so unless told otherwise.
    pub pronouns_field_type_supported: bool,
    /// `realm_emoji` `add` and `update_one` events instead of `update` with every emoji
    /// (feature level 491).
    pub individual_emoji_changes: bool,
}

impl Default for ClientCapabilities {
    /// Every capability off, except `pronouns_field_type_supported`, which Zulip assumes.
    fn default() -> Self {
        ClientCapabilities {
            notification_settings_null: false,
            bulk_message_deletion: false,
            user_avatar_url_field_optional: false,
            stream_typing_notifications: false,
            user_settings_object: false,
            linkifier_url_template: false,
            user_list_incomplete: false,
            include_deactivated_groups: false,
            archived_channels: false,
            empty_topic_name: false,
            simplified_presence_events: false,
            pronouns_field_type_supported: true,
            individual_emoji_changes: false,
        }
    }
}

impl ClientCapabilities {
    /// Decodes the `client_capabilities` object with Zulip's rules: every value must be a
    /// boolean, `notification_settings_null` is required, unknown keys are ignored.
    pub fn from_object(obj: &Map<String, Value>) -> ApiResult<Self> {
        let mut caps = ClientCapabilities::default();
        if !obj.contains_key("notification_settings_null") {
            return Err(ApiError::bad_request("notification_settings_null key is missing from client_capabilities"));
        }
        for (key, value) in obj {
            let Some(flag) = value.as_bool() else {
                return Err(ApiError::bad_request(format!("client_capabilities[\"{key}\"] is not a boolean")));
            };
            if let Some(slot) = caps.flag_mut(key) {
                *slot = flag;
            }
        }
        Ok(caps)
    }

    /// The capability called `name`, if there is one.
    pub fn flag_mut(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "notification_settings_null" => &mut self.notification_settings_null,
            "bulk_message_deletion" => &mut self.bulk_message_deletion,
            "user_avatar_url_field_optional" => &mut self.user_avatar_url_field_optional,
            "stream_typing_notifications" => &mut self.stream_typing_notifications,
            "user_settings_object" => &mut self.user_settings_object,
            "linkifier_url_template" => &mut self.linkifier_url_template,
            "user_list_incomplete" => &mut self.user_list_incomplete,
            "include_deactivated_groups" => &mut self.include_deactivated_groups,
            "archived_channels" => &mut self.archived_channels,
            "empty_topic_name" => &mut self.empty_topic_name,
            "simplified_presence_events" => &mut self.simplified_presence_events,
            "pronouns_field_type_supported" => &mut self.pronouns_field_type_supported,
            "individual_emoji_changes" => &mut self.individual_emoji_changes,
            _ => return None,
        })
    }
}

/// One `[operator, operand]` term of a queue's narrow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NarrowTerm {
    pub operator: String,
    pub operand: String,
}

/// Checks a register narrow as Zulip's `check_narrow_for_events` does.
pub fn check_narrow_for_events(narrow: &[NarrowTerm]) -> ApiResult<()> {
    const SUPPORTED: [&str; 6] = ["channel", "stream", "topic", "exact-topic", "sender", "is"];
    for term in narrow {
        if !SUPPORTED.contains(&term.operator.as_str()) {
            return Err(ApiError::bad_request(format!("Operator {} not supported.", term.operator)));
        }
        if term.operator == "is" && term.operand == "followed" {
            return Err(ApiError::bad_request(format!("Operand {} not supported.", term.operand)));
        }
    }
    Ok(())
}

/// Whether a message (the `message` object of a `message` event) with the user's `flags`
/// matches every term of `narrow` (Zulip's `build_narrow_predicate`).
pub fn narrow_matches(narrow: &[NarrowTerm], message: &Map<String, Value>, flags: &[Value]) -> bool {
    let text = |key: &str| message.get(key).and_then(Value::as_str).unwrap_or("");
    let is_stream = text("type") == "stream";
    let has_flag = |flag: &str| flags.iter().any(|f| f.as_str() == Some(flag));
    narrow.iter().all(|term| {
        let operand = term.operand.as_str();
        match (term.operator.as_str(), operand) {
            ("channel" | "stream", _) => {
                is_stream && operand.to_lowercase() == text("display_recipient").to_lowercase()
            }
            ("topic", _) => {
                let topic = text("subject").to_lowercase();
                let operand = operand.to_lowercase();
                is_stream && (operand == topic || topic.split_whitespace().any(|word| word == operand))
            }
            ("exact-topic", _) => is_stream && operand == text("subject"),
            ("sender", _) => operand.to_lowercase() == text("sender_email").to_lowercase(),
            ("is", "dm" | "private") => text("type") == "private",
            ("is", "starred") => has_flag("starred"),
            ("is", "unread") => !has_flag("read"),
            ("is", "alerted" | "mentioned") => has_flag("mentioned"),
            ("is", "resolved") => is_stream && text("subject").starts_with(RESOLVED_TOPIC_PREFIX),
            _ => true,
        }
    })
}

/// A queue's registration: everything that decides which events it gets and how. Saved
/// across restarts; fields added later take their defaults when older saves are read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QueueSpec {
    /// Event types the queue receives; `None` means all.
    pub event_types: Option<BTreeSet<String>>,
    pub apply_markdown: bool,
    pub client_gravatar: bool,
    pub slim_presence: bool,
    pub all_public_streams: bool,
    pub narrow: Vec<NarrowTerm>,
    pub capabilities: ClientCapabilities,
    /// Milliseconds without a poll after which the queue is removed.
    pub timeout_ms: u64,
    /// The client's name (from its `User-Agent`), for logs.
    pub client_name: String,
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec::new(std::time::Duration::from_secs(600))
    }
}

impl QueueSpec {
    /// A spec with every default: all events, no narrow, no capabilities.
    pub fn new(timeout: std::time::Duration) -> Self {
        QueueSpec {
            event_types: None,
            apply_markdown: false,
            client_gravatar: false,
            slim_presence: false,
            all_public_streams: false,
            narrow: Vec::new(),
            capabilities: ClientCapabilities::default(),
            timeout_ms: timeout.as_millis() as u64,
            client_name: String::new(),
        }
    }

    fn wants_type(&self, kind: &str) -> bool {
        self.event_types.as_ref().is_none_or(|types| types.contains(kind))
    }

    /// Whether the queue takes the event at all (Zulip's `accepts_event`).
    pub fn accepts(&self, event: &Event) -> bool {
        let kind = event.kind();
        if !self.wants_type(kind) {
            return false;
        }
        if kind == "muted_topics" && self.event_types.as_ref().is_some_and(|t| t.contains("user_topic")) {
            return false;
        }
        let caps = &self.capabilities;
        match kind {
            "message" => {
                let empty = Map::new();
                let message = event.get("message").and_then(Value::as_object).unwrap_or(&empty);
                let flags = event.get("flags").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
                // Public-channel messages for non-recipients go to `all_public_streams`
                // queues only.
                let public_only = is_true(event.get("for_all_public_streams"));
                (!public_only || self.all_public_streams) && narrow_matches(&self.narrow, message, flags)
            }
            "typing" if event.get("stream_id").is_some() => caps.stream_typing_notifications,
            // URL templates would be misread by clients that expect format strings.
            "realm_linkifiers" => caps.linkifier_url_template,
            "update_display_settings" | "update_global_notifications" => !caps.user_settings_object,
            // Every emoji for older clients, the one that changed for those that ask so.
            "realm_emoji" => (event.op() == Some("update")) != caps.individual_emoji_changes,
            // (Un)archived: `update is_archived` for clients that know archived channels,
            // `delete` or `create` (marked `for_archive`) for the others.
            "stream" => match event.op() {
                Some("delete" | "create") => !(is_true(event.get("for_archive")) && caps.archived_channels),
                Some("update") => {
                    event.get("property").and_then(Value::as_str) != Some("is_archived") || caps.archived_channels
                }
                _ => true,
            },
            "user_group" => match event.op() {
                Some("remove") => !caps.include_deactivated_groups,
                // A reactivated group is re-added for clients that had it removed.
                Some("add") => !(is_true(event.get("for_reactivation")) && caps.include_deactivated_groups),
                Some("update") => {
                    let touches_deactivated = event.get("data").and_then(|d| d.get("deactivated")).is_some();
                    // Renames carry the group's `deactivated` at top level for this check.
                    let of_deactivated = is_true(event.get("deactivated"));
                    !(touches_deactivated || of_deactivated) || caps.include_deactivated_groups
                }
                _ => true,
            },
            _ => true,
        }
    }

    /// How many events [`QueueSpec::shape`] makes of an accepted event, known before any is
    /// built: one, except a deletion of several messages split for a client without
    /// `bulk_message_deletion`.
    pub fn shaped_len(&self, event: &Event) -> usize {
        if event.kind() == "delete_message" && !self.capabilities.bulk_message_deletion {
            let ids = event.get("message_ids").and_then(Value::as_array).map_or(0, Vec::len);
            return ids.max(1);
        }
        1
    }

    /// The forms in which the queue stores an accepted event: usually the shared event
    /// itself, sometimes a form reshaped for this kind of client, sometimes several events.
    /// A reshaped form is made once per event and options and shared by every queue with
    /// the same options (see [`Event::reshaped`]); only what belongs to one queue (the
    /// sender's `local_message_id`) is copied.
    pub fn shape(&self, event: &Arc<Event>, own_queue_id: &str) -> Forms {
        let caps = &self.capabilities;
        match event.kind() {
            "message" => self.shape_message(event, own_queue_id),
            "delete_message" if !caps.bulk_message_deletion => {
                let Some(ids) = event.get("message_ids").and_then(Value::as_array).filter(|ids| !ids.is_empty()) else {
                    return same(event);
                };
                let ids = ids.clone();
                event.reshaped(0, |event| {
                    ids.into_iter()
                        .map(|id| {
                            rebuild(event, |body| {
                                body.shift_remove("message_ids");
                                body.insert("message_id".into(), id);
                            })
                        })
                        .collect()
                })
            }
            "presence" if event.get("presences").is_some() => self.shape_presence(event),
            "presence" if self.slim_presence && event.get("email").is_some() => reshape(event, |body| {
                body.shift_remove("email");
            }),
            "user_group" if event.get("for_reactivation").is_some() || event.get("deactivated").is_some() => {
                reshape(event, |body| {
                    body.shift_remove("for_reactivation");
                    body.shift_remove("deactivated");
                })
            }
            "stream" if event.get("for_archive").is_some() => reshape(event, |body| {
                body.shift_remove("for_archive");
            }),
            "user_topic" if !caps.empty_topic_name => rename_empty_topic(event, &["topic_name"]),
            "custom_profile_fields" if !caps.pronouns_field_type_supported => reshape(event, |body| {
                if let Some(Value::Array(fields)) = body.get_mut("fields") {
                    pronouns_as_short_text(fields);
                }
            }),
            "typing" if !caps.empty_topic_name => rename_empty_topic(event, &["topic"]),
            "update_message" if !caps.empty_topic_name => rename_empty_topic(event, &["subject", "orig_subject"]),
            "update_message_flags" if !caps.empty_topic_name => rename_empty_topic_in_details(event),
            _ => same(event),
        }
    }

    /// A `presence` event carrying both forms (`crate::presence::format::event`): the
    /// modern one (`type` and `presences`) for clients with `simplified_presence_events`,
    /// else the legacy one, without `email` for `slim_presence` queues.
    fn shape_presence(&self, event: &Arc<Event>) -> Forms {
        let (modern, slim) = (self.capabilities.simplified_presence_events, self.slim_presence);
        let key = if modern { 2 } else { u8::from(slim) };
        event.reshaped(key, |event| {
            vec![rebuild(event, |body| {
                if modern {
                    body.retain(|key, _| key == "type" || key == "presences");
                } else {
                    body.shift_remove("presences");
                    if slim {
                        body.shift_remove("email");
                    }
                }
            })]
        })
    }

    /// A `message` event for this client: rendered or raw content, the avatar it can
    /// compute itself left out, and the empty topic named; shared by every queue with the
    /// same three options. The sender's own queue gets a copy with `local_message_id`. The
    /// shared event carries `content` (Markdown), `rendered_content` (HTML),
    /// `avatar_computable`, `sender_queue_id`/`local_id` and `for_all_public_streams` for
    /// this step.
    fn shape_message(&self, event: &Arc<Event>, own_queue_id: &str) -> Forms {
        let (apply_markdown, client_gravatar, empty_topic) =
            (self.apply_markdown, self.client_gravatar, self.capabilities.empty_topic_name);
        let key = u8::from(apply_markdown) | u8::from(client_gravatar) << 1 | u8::from(empty_topic) << 2;
        let shared = event.reshaped(key, |event| {
            vec![rebuild(event, |body| {
                body.shift_remove("sender_queue_id");
                body.shift_remove("local_id");
                body.shift_remove("for_all_public_streams");
                if let Some(Value::Object(message)) = body.get_mut("message") {
                    let rendered = message.shift_remove("rendered_content");
                    if apply_markdown {
                        if let Some(html) = rendered {
                            message.insert("content".into(), html);
                        }
                        message.insert("content_type".into(), Value::from("text/html"));
                    } else {
                        message.insert("content_type".into(), Value::from("text/x-markdown"));
                    }
                    let computable =
                        message.shift_remove("avatar_computable").and_then(|v| v.as_bool()).unwrap_or(false);
                    if client_gravatar && computable {
                        message.insert("avatar_url".into(), Value::Null);
                    }
                    let empty_stream_topic = message.get("type").and_then(Value::as_str) == Some("stream")
                        && message.get("subject").and_then(Value::as_str) == Some("");
                    if empty_stream_topic && !empty_topic {
                        message.insert("subject".into(), Value::from(EMPTY_TOPIC_DISPLAY_NAME));
                    }
                }
            })]
        });
        let own = event.get("sender_queue_id").and_then(Value::as_str) == Some(own_queue_id);
        match (own, event.get("local_id"), shared.first()) {
            (true, Some(local_id), Some(form)) => {
                let mut body = form.body().clone();
                body.insert("local_message_id".into(), local_id.clone());
                Event::from_body(body).map_or(shared, |copy| Arc::from([Arc::new(copy)]))
            }
            _ => shared,
        }
    }
}

/// The event itself, unchanged.
fn same(event: &Arc<Event>) -> Forms {
    Arc::from([Arc::clone(event)])
}

/// The one reshaped form of `event` (the same for every queue that reshapes it), changed
/// by `f`.
fn reshape(event: &Arc<Event>, f: impl FnOnce(&mut Map<String, Value>)) -> Forms {
    event.reshaped(0, |event| vec![rebuild(event, f)])
}

/// Whether an optional field holds `true`.
fn is_true(value: Option<&Value>) -> bool {
    value.and_then(Value::as_bool).unwrap_or(false)
}

/// A copy of `event` changed by `f`.
fn rebuild(event: &Event, f: impl FnOnce(&mut Map<String, Value>)) -> Event {
    let mut body = event.body().clone();
    f(&mut body);
    Event::from_body(body).unwrap_or_else(|| event.clone())
}

/// The event with each of `keys` that holds `""` renamed to the display name.
fn rename_empty_topic(event: &Arc<Event>, keys: &[&str]) -> Forms {
    if !keys.iter().any(|k| event.get(k).and_then(Value::as_str) == Some("")) {
        return same(event);
    }
    reshape(event, |body| {
        for key in keys {
            if body.get(*key).and_then(Value::as_str) == Some("") {
                body.insert((*key).to_owned(), Value::from(EMPTY_TOPIC_DISPLAY_NAME));
            }
        }
    })
}

/// A mark-unread event for clients without `empty_topic_name`: the empty topic of channel
/// messages in `message_details` shown by its display name (Zulip's
/// `process_mark_message_unread_event`).
fn rename_empty_topic_in_details(event: &Arc<Event>) -> Forms {
    let is_empty = |d: &Value| d.get("topic").and_then(Value::as_str) == Some("");
    let Some(Value::Object(details)) = event.get("message_details") else { return same(event) };
    if !details.values().any(is_empty) {
        return same(event);
    }
    reshape(event, |body| {
        if let Some(Value::Object(details)) = body.get_mut("message_details") {
            for detail in details.values_mut().filter(|d| is_empty(d)) {
                detail["topic"] = Value::from(EMPTY_TOPIC_DISPLAY_NAME);
            }
        }
    })
}

/// For clients without `pronouns_field_type_supported`: pronouns fields (type 8) shown as
/// short text (type 1), as Zulip does.
pub fn pronouns_as_short_text(fields: &mut [Value]) {
    for field in fields {
        if field.get("type").and_then(Value::as_i64) == Some(PRONOUNS_FIELD_TYPE) {
            field["type"] = Value::from(SHORT_TEXT_FIELD_TYPE);
        }
    }
}

/// Custom profile field types the capability concerns.
const PRONOUNS_FIELD_TYPE: i64 = 8;
const SHORT_TEXT_FIELD_TYPE: i64 = 1;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(kind: &str, fields: Value) -> Arc<Event> {
        Arc::new(Event::new(kind, fields))
    }

    fn term(operator: &str, operand: &str) -> NarrowTerm {
        NarrowTerm { operator: operator.into(), operand: operand.into() }
    }

    #[test]
    fn event_types_filter_and_user_topic_replaces_muted_topics() {
        let mut spec = QueueSpec::new(std::time::Duration::from_secs(600));
        assert!(spec.accepts(&ev("muted_topics", json!({}))));
        spec.event_types = Some(["muted_topics".to_owned(), "user_topic".to_owned()].into());
        assert!(!spec.accepts(&ev("muted_topics", json!({}))));
        assert!(spec.accepts(&ev("user_topic", json!({}))));
        assert!(!spec.accepts(&ev("realm_user", json!({}))));
    }

    #[test]
    fn capabilities_gate_typing_legacy_settings_and_group_events() {
        let mut spec = QueueSpec::new(std::time::Duration::from_secs(600));
        let stream_typing = ev("typing", json!({"op": "start", "stream_id": 3, "topic": "t"}));
        let remove = ev("user_group", json!({"op": "remove", "group_id": 9}));
        let deactivate = ev("user_group", json!({"op": "update", "group_id": 9, "data": {"deactivated": true}}));
        let rename = ev("user_group", json!({"op": "update", "group_id": 9, "data": {"name": "x"}}));
        let legacy = ev("update_display_settings", json!({"setting_name": "emojiset"}));
        assert!(!spec.accepts(&stream_typing));
        assert!(spec.accepts(&ev("typing", json!({"op": "start", "recipients": []}))));
        assert!(spec.accepts(&remove) && !spec.accepts(&deactivate) && spec.accepts(&rename));
        assert!(spec.accepts(&legacy));
        spec.capabilities = ClientCapabilities {
            stream_typing_notifications: true,
            include_deactivated_groups: true,
            user_settings_object: true,
            ..Default::default()
        };
        assert!(spec.accepts(&stream_typing));
        assert!(!spec.accepts(&remove) && spec.accepts(&deactivate) && spec.accepts(&rename));
        assert!(!spec.accepts(&legacy));
    }

    #[test]
    fn narrows_match_as_zulip_does() {
        let message = json_map(json!({
            "type": "stream", "display_recipient": "Denmark", "subject": "✔ castle tour",
            "sender_email": "Hamlet@zulip.com",
        }));
        let flags = [json!("mentioned")];
        assert!(narrow_matches(&[term("stream", "denmark")], &message, &flags));
        assert!(narrow_matches(&[term("channel", "Denmark"), term("topic", "castle")], &message, &flags));
        assert!(!narrow_matches(&[term("exact-topic", "castle")], &message, &flags));
        assert!(narrow_matches(&[term("sender", "hamlet@zulip.com"), term("is", "resolved")], &message, &flags));
        assert!(narrow_matches(&[term("is", "mentioned"), term("is", "unread")], &message, &flags));
        assert!(!narrow_matches(&[term("is", "dm")], &message, &flags));
        assert!(!narrow_matches(&[term("is", "starred")], &message, &flags));
        assert!(check_narrow_for_events(&[term("search", "x")]).unwrap_err().msg == "Operator search not supported.");
        assert!(
            check_narrow_for_events(&[term("is", "followed")]).unwrap_err().msg == "Operand followed not supported."
        );
    }

    #[test]
    fn deletions_are_split_for_clients_without_bulk_deletion() {
        let mut spec = QueueSpec::new(std::time::Duration::from_secs(600));
        let event = ev("delete_message", json!({"message_type": "private", "message_ids": [4, 5]}));
        let shaped = spec.shape(&event, "q");
        let bodies: Vec<&Map<String, Value>> = shaped.iter().map(|e| e.body()).collect();
        assert_eq!(
            Value::Object(bodies[0].clone()),
            json!({"type": "delete_message", "message_type": "private", "message_id": 4})
        );
        assert_eq!(bodies[1]["message_id"], json!(5));
        spec.capabilities.bulk_message_deletion = true;
        let shaped = spec.shape(&event, "q");
        assert!(Arc::ptr_eq(&shaped[0], &event), "capable clients share the event");
    }

    #[test]
    fn messages_are_shaped_per_queue() {
        let event = ev(
            "message",
            json!({
                "message": {"id": 1, "type": "stream", "subject": "", "content": "**hi**",
                    "rendered_content": "<p><strong>hi</strong></p>", "avatar_url": "https://x", "avatar_computable": true},
                "flags": [], "sender_queue_id": "q1", "local_id": "7.01",
            }),
        );
        let mut spec = QueueSpec::new(std::time::Duration::from_secs(600));
        let raw = spec.shape(&event, "q1");
        assert_eq!(
            raw[0].json(),
            json!({"type": "message", "message": {"id": 1, "type": "stream", "subject": "general chat",
                "content": "**hi**", "avatar_url": "https://x", "content_type": "text/x-markdown"},
                "flags": [], "local_message_id": "7.01"})
            .to_string()
        );
        spec.apply_markdown = true;
        spec.client_gravatar = true;
        spec.capabilities.empty_topic_name = true;
        let html = spec.shape(&event, "other");
        assert_eq!(
            html[0].json(),
            json!({"type": "message", "message": {"id": 1, "type": "stream", "subject": "",
                "content": "<p><strong>hi</strong></p>", "avatar_url": null, "content_type": "text/html"},
                "flags": []})
            .to_string()
        );
    }

    #[test]
    fn reshaped_forms_are_made_once_and_shared() {
        let spec = QueueSpec::new(std::time::Duration::from_secs(600));
        let mut slim = spec.clone();
        slim.slim_presence = true;
        let presence = ev("presence", json!({"user_id": 3, "email": "a@x"}));
        let (one, two) = (slim.shape(&presence, "q1"), slim.shape(&presence, "q2"));
        assert!(Arc::ptr_eq(&one[0], &two[0]));
        assert_eq!(one[0].json(), r#"{"type":"presence","user_id":3}"#);
        assert!(Arc::ptr_eq(&spec.shape(&presence, "q3")[0], &presence), "the full form is the event itself");

        let deletion = ev("delete_message", json!({"message_type": "private", "message_ids": [4, 5]}));
        assert_eq!(spec.shaped_len(&deletion), 2);
        let (one, two) = (spec.shape(&deletion, "q1"), spec.shape(&deletion, "q2"));
        assert!(Arc::ptr_eq(&one, &two), "one split for every queue without bulk deletion");
        let mut bulk = spec.clone();
        bulk.capabilities.bulk_message_deletion = true;
        assert_eq!(bulk.shaped_len(&deletion), 1);
    }

    #[test]
    fn a_presence_event_takes_the_form_of_each_client() {
        let legacy = json!({"website": {"client": "website", "status": "active", "timestamp": 7, "pushable": false}});
        let modern = json!({"3": {"active_timestamp": 7, "idle_timestamp": 7}});
        let body =
            json!({"email": "a@x", "user_id": 3, "server_timestamp": 7.5, "presence": legacy, "presences": modern});
        let presence = ev("presence", body);
        let spec = QueueSpec::new(std::time::Duration::from_secs(600));
        let mut slim = spec.clone();
        slim.slim_presence = true;
        let mut simplified = spec.clone();
        simplified.capabilities.simplified_presence_events = true;
        simplified.slim_presence = true;
        let json = |spec: &QueueSpec| spec.shape(&presence, "q")[0].json().to_owned();
        assert_eq!(
            json(&spec),
            json!({"type": "presence", "email": "a@x", "user_id": 3, "server_timestamp": 7.5, "presence": legacy})
                .to_string()
        );
        assert_eq!(
            json(&slim),
            json!({"type": "presence", "user_id": 3, "server_timestamp": 7.5, "presence": legacy}).to_string()
        );
        assert_eq!(json(&simplified), json!({"type": "presence", "presences": modern}).to_string());
        assert!(Arc::ptr_eq(&slim.shape(&presence, "q1")[0], &slim.shape(&presence, "q2")[0]));
    }

    #[test]
    fn capabilities_decode_strictly() {
        let caps = ClientCapabilities::from_object(&json_map(
            json!({"notification_settings_null": false, "empty_topic_name": true, "future_thing": true}),
        ))
        .unwrap();
        assert!(caps.empty_topic_name && !caps.bulk_message_deletion);
        let missing = ClientCapabilities::from_object(&json_map(json!({"bulk_message_deletion": true}))).unwrap_err();
        assert_eq!(missing.msg, "notification_settings_null key is missing from client_capabilities");
        let bad = ClientCapabilities::from_object(&json_map(json!({"notification_settings_null": 1}))).unwrap_err();
        assert_eq!(bad.msg, "client_capabilities[\"notification_settings_null\"] is not a boolean");
    }

    fn json_map(v: Value) -> Map<String, Value> {
        crate::json_object(v)
    }
}
