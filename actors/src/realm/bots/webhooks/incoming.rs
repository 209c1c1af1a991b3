//! Incoming webhooks (`/api/v1/external/...`): the messages Zulip's integrations make of a
//! third party's payload, and where they go (Zulip's `check_send_webhook_message`): the
//! `stream` (a name, or an id) and its topic (the integration's, unless `topic` is given),
//! or, without `stream`, a direct message to the bot's owner.

use actix::prelude::*;
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::UserId;
use crate::realm::actor::RealmActor;
use crate::realm::chat::send::{plan_send, ChannelRef, DirectRef, SendMessage, SendTo};

/// Python's `json.dumps(value, indent=2)`: two-space indents, `": "` between keys and
/// values, and every non-ASCII character escaped (`ensure_ascii`).
pub fn python_json_dumps(value: &Value) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut out = String::with_capacity(pretty.len());
    for c in pretty.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// Zulip's generic JSON integration (`zerver/webhooks/json`): the payload, pretty-printed
/// in a code block, in topic `JSON`.
pub fn json_message(payload: &Value) -> (String, String) {
    ("JSON".to_owned(), format!("```json\n{}\n```", python_json_dumps(payload)))
}

fn missing(path: &str) -> ApiError {
    ApiError::bad_request(format!("{path} is missing"))
}

fn string_at<'a>(value: &'a Value, path: &str) -> ApiResult<&'a str> {
    value.as_str().ok_or_else(|| ApiError::bad_request(format!("{path} is not a string")))
}

/// Zulip's Alertmanager integration (`zerver/webhooks/alertmanager`): alerts grouped by
/// the label (or annotation) `name_field` into topics, each described by `desc_field`
/// with a link to its source; one message per topic and status, firing first.
pub fn alertmanager_messages(payload: &Value, name_field: &str, desc_field: &str) -> ApiResult<Vec<(String, String)>> {
    let alerts = payload.get("alerts").ok_or_else(|| missing("payload['alerts']"))?;
    let alerts = alerts.as_array().ok_or_else(|| ApiError::bad_request("payload['alerts'] is not a list"))?;
    // Topic -> (firing, resolved), in order of first appearance.
    let mut topics: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
    let empty = Value::Object(Map::new());
    for (i, alert) in alerts.iter().enumerate() {
        let labels = alert.get("labels").unwrap_or(&empty);
        let annotations = alert.get("annotations").unwrap_or(&empty);
        let field = |name: &str| labels.get(name).or_else(|| annotations.get(name));
        let name = match field(name_field) {
            Some(v) => string_at(v, &format!("payload['alerts'][{i}]['{name_field}']"))?.to_owned(),
            None => "(unknown)".to_owned(),
        };
        let desc = match field(desc_field) {
            Some(v) => string_at(v, &format!("payload['alerts'][{i}]['{desc_field}']"))?.to_owned(),
            None => format!("<missing field: {desc_field}>"),
        };
        let body = match alert.get("generatorURL") {
            Some(url) => {
                let url = string_at(url, &format!("payload['alerts'][{i}]['generatorURL']"))?.replace("tab=1", "tab=0");
                format!("{desc} ([source]({url}))")
            }
            None => desc,
        };
        let status = alert.get("status").ok_or_else(|| missing(&format!("payload['alerts'][{i}]['status']")))?;
        let status = string_at(status, &format!("payload['alerts'][{i}]['status']"))?;
        let slot = match topics.iter().position(|(t, _, _)| *t == name) {
            Some(i) => i,
            None => {
                topics.push((name, Vec::new(), Vec::new()));
                topics.len() - 1
            }
        };
        match status {
            "firing" => topics[slot].1.push(body),
            "resolved" => topics[slot].2.push(body),
            other => return Err(ApiError::bad_request(format!("Unknown alert status '{other}'"))),
        }
    }
    let mut out = Vec::new();
    for (topic, firing, resolved) in topics {
        for (icon, title, messages) in [(":alert:", "FIRING", firing), (":squared_ok:", "Resolved", resolved)] {
            let body = match messages.as_slice() {
                [] => continue,
                [one] => format!("{icon} **{title}** {one}"),
                many => {
                    let list: Vec<String> = many.iter().map(|m| format!("* {m}")).collect();
                    format!("{icon} **{title}**\n{}", list.join("\n"))
                }
            };
            out.push((topic.clone(), body));
        }
    }
    Ok(out)
}

/// Posts an integration's messages as `sender` (the webhook's user).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct PostWebhookMessages {
    pub sender: UserId,
    /// `ZulipAlertmanagerWebhook`, ...
    pub client: String,
    /// The `stream` parameter: a channel name or id; none for a direct message to the
    /// bot's owner.
    pub stream: Option<String>,
    /// The `topic` parameter, overriding the integration's topics.
    pub topic: Option<String>,
    /// (topic, content) of each message.
    pub messages: Vec<(String, String)>,
}

impl Handler<PostWebhookMessages> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: PostWebhookMessages, _: &mut Self::Context) -> Self::Result {
        let sender = self.viewer(msg.sender)?;
        let to = match &msg.stream {
            None => SendTo::Direct(DirectRef::Ids(vec![sender.bot_owner_id.unwrap_or(sender.id).0])),
            Some(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                SendTo::Channel(ChannelRef::Id(s.parse().unwrap_or(-1)))
            }
            Some(name) => SendTo::Channel(ChannelRef::Name(name.clone())),
        };
        for (topic, content) in msg.messages {
            self.alert_bot_owner(msg.sender, &to, &content);
            let send = SendMessage {
                sender: msg.sender,
                to: to.clone(),
                topic: Some(msg.topic.clone().unwrap_or(topic)),
                content,
                client: msg.client.clone(),
                queue_id: None,
                local_id: None,
                read_by_sender: None,
            };
            let listeners = self.all_public_streams_listeners();
            let change = match plan_send(&self.state, send, &listeners, crate::clock::now()) {
                Ok(change) => change,
                // As Zulip: a missing channel is not the third party's error.
                Err(e) if e.code == Some(ErrorCode::StreamDoesNotExist) => {
                    tracing::info!(user.id = %msg.sender, error = %e.msg, "incoming webhook to a missing channel");
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            // Through the outgoing-webhook services too, as Zulip's webhook messages go
            // through its normal send.
            self.commit(super::outgoing::sending(self, change))?;
        }
        Ok(())
    }
}
