//! This area's register data sets: `recent_private_conversations` (fetched with
//! `recent_private_conversations`), `starred_messages` (with `starred_messages`) and
//! `unread_msgs` (only with both `message` and `update_message_flags`, as Zulip). A
//! storage failure is logged and leaves the data set empty.

use serde_json::{Map, Value};

use super::unread;
use crate::realm::register::Context;
use crate::store::StoreResult;

/// The value of a stored data set, or `fallback` (logged) if storage failed.
fn or_logged(name: &str, value: StoreResult<Value>, fallback: Value) -> Value {
    value.unwrap_or_else(|err| {
        tracing::error!(error = %err, data_set = name, "register data set failed");
        fallback
    })
}

/// `recent_private_conversations`: most recent first.
pub fn recent_private_conversations(ctx: &Context<'_>, out: &mut Map<String, Value>) {
    if ctx.want("recent_private_conversations") {
        let list = unread::recent_private_conversations(ctx.store, ctx.user.id).map(Value::Array);
        out.insert(
            "recent_private_conversations".into(),
            or_logged("recent_private_conversations", list, Value::Array(Vec::new())),
        );
    }
}

/// `starred_messages`: the ids, ascending.
pub fn starred_messages(ctx: &Context<'_>, out: &mut Map<String, Value>) {
    if ctx.want("starred_messages") {
        let list = unread::starred_messages(ctx.store, ctx.user.id).map(Value::from);
        out.insert("starred_messages".into(), or_logged("starred_messages", list, Value::Array(Vec::new())));
    }
}

/// `unread_msgs`: the aggregated unread state.
pub fn unread_msgs(ctx: &Context<'_>, out: &mut Map<String, Value>) {
    if ctx.want("message") && ctx.want("update_message_flags") {
        let empty_topic_name = ctx.spec.capabilities.empty_topic_name;
        let value = unread::raw_unread(ctx.state, ctx.store, ctx.user.id).map(|raw| raw.to_json(empty_topic_name));
        let fallback = unread::RawUnread::default().to_json(empty_topic_name);
        out.insert("unread_msgs".into(), or_logged("unread_msgs", value, fallback));
    }
}
