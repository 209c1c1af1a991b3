//! The register data sets of one user's own things: push devices, snippets, views, drafts,
//! scheduled items, starred messages, alert words, mutes, statuses, recent conversations.

use serde_json::{json, Map, Value};

use super::reads::Context;
use crate::error::ApiResult;
use crate::realm::chat::flags::register as message_sets;

/// `devices` (the user's logged-in devices, from SQLite; Zulip 12, feature level 468, in
/// place of `push_devices`), and `realm_push_notifications_enabled`: true when the server
/// uses a push notification service, as Zulip's `push_notifications_configured`.
pub(super) fn push_devices(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("realm") {
        out.insert("realm_push_notifications_enabled".into(), Value::Bool(ctx.config.push.configured()));
    }
    if ctx.want("device") {
        out.insert("devices".into(), crate::realm::push::devices::devices(ctx.conn, ctx.user.id)?);
    }
    Ok(())
}

/// A user's own things, in Zulip's order: `saved_snippets` (as made), `navigation_views`
/// (as added), `drafts` (kept in the database; the most recently edited first), then
/// `scheduled_messages` and `reminders`.
pub(super) fn saved_snippets_views_drafts(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    use crate::realm::{drafts, navigation_views, saved_snippets};
    let (state, user) = (ctx.state, ctx.user.id);
    if ctx.want("saved_snippets") {
        out.insert("saved_snippets".into(), saved_snippets::saved_snippets_list(state, user));
    }
    if ctx.want("navigation_views") {
        out.insert("navigation_views".into(), navigation_views::navigation_views_list(state, user));
    }
    if ctx.want("drafts") {
        out.insert("drafts".into(), drafts::register_drafts(ctx.conn, user)?);
    }
    crate::realm::scheduled::register_data(|name| ctx.want(name), state, user, out);
    Ok(())
}

/// `starred_messages`: the ids, ascending.
pub(super) fn starred_messages(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("starred_messages") {
        out.insert("starred_messages".into(), message_sets::starred_messages(ctx.conn, ctx.user.id, ctx.upto())?);
    }
    Ok(())
}

/// `alert_words`: the user's alert words, in the order they were added.
pub(super) fn alert_words(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("alert_words") {
        out.insert("alert_words".into(), json!(ctx.state.user_data().alert_words(ctx.user.id)));
    }
    Ok(())
}

/// `muted_users`: whom the user muted (`id`, `timestamp`), in the order they did.
pub(super) fn muted_users(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("muted_users") {
        out.insert("muted_users".into(), crate::realm::muted_users::muted_users_list(ctx.state, ctx.user.id));
    }
    Ok(())
}

/// `user_status`: the statuses of active users who set one, keyed by user id.
pub(super) fn user_status(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("user_status") {
        out.insert("user_status".into(), crate::realm::user_status::format::user_status_data(ctx.state));
    }
    Ok(())
}

/// `recent_private_conversations`: most recent first.
pub(super) fn recent_private_conversations(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("recent_private_conversations") {
        let list = message_sets::recent_private_conversations(ctx.conn, ctx.user.id, ctx.upto())?;
        out.insert("recent_private_conversations".into(), list);
    }
    Ok(())
}
