//! The initial state of `POST /register` (Zulip's `fetch_initial_state_data` and
//! `post_process_state`): the data sets a client asked for, as of the moment its queue was
//! created.
//!
//! Each data set is one entry of [`DATA_SETS`], in Zulip's order: a feature adds its data
//! by adding a function there (and its events where it changes state).

use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::personal::{
    alert_words, muted_users, push_devices, recent_private_conversations, saved_snippets_views_drafts,
    starred_messages, user_status,
};
use super::FetchOptions;
use crate::config::ServerConfig;
use crate::error::ApiResult;
use crate::queue::QueueSpec;
use crate::realm::catalog;
use crate::realm::chat::flags::register as message_sets;
use crate::realm::format::{self, UserDictOptions};
use crate::realm::model::{Role, User};
use crate::realm::state::RealmState;
use crate::server_info;

/// Everything a data set may look at.
pub struct Context<'a> {
    pub state: &'a RealmState,
    pub config: &'a ServerConfig,
    pub user: &'a User,
    pub spec: &'a QueueSpec,
    pub fetch: &'a FetchOptions,
    /// For the data sets kept in SQLite (unread state, starred messages, conversations,
    /// drafts, push devices): the reader thread's connection.
    pub conn: &'a rusqlite::Connection,
    /// The largest id of a message the user received (-1: none) when the queue was made.
    /// The message data sets read nothing newer: a message sent since is an event in the
    /// queue, and the client must not get it twice (in `unread_msgs` and as an event).
    pub max_message_id: i64,
    /// The organization's presence, as its presence actor last published it.
    pub presence: &'a crate::presence::PresenceState,
    /// Members already written as JSON (their places in the map hold nulls).
    pub raw: std::cell::RefCell<Vec<(&'static str, String)>>,
}

impl Context<'_> {
    /// Adds a member already written as JSON.
    fn put_raw(&self, out: &mut Map<String, Value>, key: &'static str, json: String) {
        out.insert(key.into(), Value::Null);
        self.raw.borrow_mut().push((key, json));
    }

    /// The newest message the message data sets may read.
    pub fn upto(&self) -> crate::ids::MessageId {
        crate::ids::MessageId(self.max_message_id)
    }

    /// Whether the client fetches the data set `name`.
    pub fn want(&self, name: &str) -> bool {
        self.fetch.fetch_event_types.as_ref().is_none_or(|types| types.contains(name))
    }
}

/// A data set: adds its keys to the state when the client wants them.
type DataSet = fn(&Context<'_>, &mut Map<String, Value>) -> ApiResult<()>;

/// The data sets, in the order Zulip adds their keys.
const DATA_SETS: &[DataSet] = &[
    custom_profile_fields,
    message,
    saved_snippets_views_drafts,
    muted_topics,
    realm_user_groups,
    realm,
    realm_user_settings_defaults,
    realm_emoji,
    realm_linkifiers,
    realm_playgrounds,
    realm_user,
    realm_bots,
    subscription,
    starred_messages,
    channel_folders,
    streams,
    default_streams,
    user_settings,
    user_topic,
    unread_msgs,
    alert_words,
    muted_users,
    // Zulip adds it right after `muted_users`.
    presence,
    user_status,
    push_devices,
    not_built_yet,
];

/// `realm_bots`: every bot for administrators, one's own bots for others.
fn realm_bots(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("realm_bot") {
        out.insert("realm_bots".into(), crate::realm::bot_data::realm_bots(ctx.state, ctx.user));
    }
    Ok(())
}

/// The data sets of features not built yet, with Zulip's empty values.
fn not_built_yet(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    super::pending::not_built_yet(|name| ctx.want(name), out);
    Ok(())
}

/// `presences` (modern for `slim_presence` or the `simplified_presence_events` capability),
/// `presence_last_update_id` and `server_timestamp`.
fn presence(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    use crate::presence::{audience, reads};
    if ctx.want("presence") {
        let slim = ctx.spec.slim_presence || ctx.spec.capabilities.simplified_presence_events;
        let query = reads::PresenceQuery::new(slim, None, ctx.fetch.presence_history_limit_days);
        let reported = audience::reported_users(ctx.state);
        let access = audience::viewer_access(&ctx.config.presence, ctx.state, ctx.user.id);
        let audience = reads::Audience { realm: ctx.state, reported: &reported, access: access.as_ref() };
        reads::register_data(ctx.presence, &audience, &query, crate::clock::now_micros(), out);
    }
    Ok(())
}

/// `unread_msgs`: the aggregated unread state (only with both `message` and
/// `update_message_flags`, as Zulip).
fn unread_msgs(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("message") && ctx.want("update_message_flags") {
        let empty_topic_name = ctx.spec.capabilities.empty_topic_name;
        out.insert(
            "unread_msgs".into(),
            message_sets::unread_msgs(ctx.state, ctx.conn, ctx.user.id, ctx.upto(), empty_topic_name)?,
        );
    }
    Ok(())
}

/// The initial state for a client of `user` whose queue is `queue_id`, as the JSON members
/// of the response (`"queue_id":...,...`, without braces). The user lists, the large part
/// in big organizations, are written straight to JSON.
pub fn initial_state(ctx: &Context<'_>, queue_id: &str) -> ApiResult<Vec<Bytes>> {
    let mut out = Map::new();
    out.insert("queue_id".into(), Value::from(queue_id));
    out.insert("zulip_version".into(), Value::from(server_info::zulip_version()));
    out.insert("zulip_feature_level".into(), Value::from(server_info::FEATURE_LEVEL));
    out.insert("zulip_merge_base".into(), Value::from(server_info::ZULIP_MERGE_BASE));
    if server_info::FEATURE_LEVEL >= server_info::IDLE_QUEUE_TIMEOUT_LEVEL {
        out.insert("idle_queue_timeout_secs".into(), Value::from(ctx.spec.timeout_ms / 1000));
    }
    for data_set in DATA_SETS {
        data_set(ctx, &mut out)?;
    }
    let mut raw = post_process(ctx, &mut out);
    raw.extend(ctx.raw.take());
    // Zulip's post-processing appends it after the user lists.
    recent_private_conversations(ctx, &mut out)?;
    // Agora always sends the limits, fetched with `realm` or not.
    for (key, value) in catalog::always_present_limits() {
        out.entry(key).or_insert(value);
    }
    out.insert("max_file_upload_size_mib".into(), Value::from(ctx.config.uploads.max_file_upload_size_mib));
    // Every event since the snapshot is still in the queue: the realm actor built this
    // state and created the queue in one step.
    out.insert("last_event_id".into(), Value::from(-1));
    Ok(write_members(&out, raw))
}

/// `map`'s members as JSON, with the values of `raw`'s keys taken as already written, in
/// pieces: a large written value (the user lists, the subscriptions) is a piece of its own,
/// moved rather than copied, so that the reply goes out without being copied together.
fn write_members(map: &Map<String, Value>, mut raw: Vec<(&str, String)>) -> Vec<Bytes> {
    let (mut parts, mut text) = (Vec::with_capacity(2 * raw.len() + 1), String::with_capacity(16 * 1024));
    for (i, (key, value)) in map.iter().enumerate() {
        text.push_str(if i > 0 { "," } else { "" });
        text.push_str(&Value::from(key.as_str()).to_string());
        text.push(':');
        match raw.iter().position(|(k, _)| k == key).map(|at| raw.swap_remove(at).1) {
            // 16 KiB and more: a piece of its own.
            Some(json) if json.len() >= 16 * 1024 => {
                parts.push(Bytes::from(std::mem::take(&mut text)));
                parts.push(Bytes::from(json));
            }
            Some(json) => text.push_str(&json),
            None => text.push_str(&value.to_string()),
        }
    }
    parts.push(Bytes::from(text));
    parts.retain(|part| !part.is_empty());
    parts
}

fn custom_profile_fields(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("custom_profile_fields") {
        let mut fields = crate::realm::profile_fields::field_dicts(ctx.state);
        let mut types = catalog::custom_profile_field_types();
        // Clients that do not know the pronouns type see such fields as short text.
        if !ctx.spec.capabilities.pronouns_field_type_supported {
            crate::queue::spec::pronouns_as_short_text(&mut fields);
            types.shift_remove("PRONOUNS");
        }
        out.insert("custom_profile_fields".into(), Value::Array(fields));
        out.insert("custom_profile_field_types".into(), Value::Object(types));
    }
    Ok(())
}

/// Muted topics in the legacy form; left out for clients that also ask for `user_topic`.
fn muted_topics(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("muted_topics") && (ctx.fetch.fetch_event_types.is_none() || !ctx.want("user_topic")) {
        out.insert(
            "muted_topics".into(),
            Value::Array(crate::realm::topics::muted_topics_list(ctx.state, ctx.user.id)),
        );
    }
    Ok(())
}

fn message(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("message") {
        out.insert("max_message_id".into(), Value::from(ctx.max_message_id));
    }
    Ok(())
}

fn realm_user_groups(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("realm_user_groups") {
        let with_deactivated = ctx.spec.capabilities.include_deactivated_groups;
        let groups: Vec<Value> = ctx
            .state
            .groups()
            .filter(|g| with_deactivated || !g.deactivated)
            .map(|g| Value::Object(ctx.state.group_dict(g)))
            .collect();
        out.insert("realm_user_groups".into(), Value::Array(groups));
    }
    Ok(())
}

fn realm(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("realm") {
        out.extend(catalog::realm_data(ctx.state, ctx.config));
    }
    Ok(())
}

fn realm_user_settings_defaults(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("realm_user_settings_defaults") {
        let defaults = catalog::realm_user_settings_defaults(ctx.state.realm());
        out.insert("realm_user_settings_defaults".into(), Value::Object(defaults));
    }
    Ok(())
}

/// `realm_emoji`: the organization's custom emoji by id, deactivated ones included.
fn realm_emoji(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("realm_emoji") {
        let emoji = ctx.state.uploads().emoji_dicts(ctx.state.realm().id);
        out.insert("realm_emoji".into(), Value::Object(emoji));
    }
    Ok(())
}

/// `realm_linkifiers` (for clients with `linkifier_url_template`) and the legacy `realm_filters`.
fn realm_linkifiers(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    let capable = ctx.spec.capabilities.linkifier_url_template;
    crate::realm::linkifiers::register_data(ctx.state.linkifiers(), capable, |name| ctx.want(name), out);
    Ok(())
}

/// `realm_playgrounds`: the organization's code playgrounds.
fn realm_playgrounds(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    crate::realm::playgrounds::register_data(ctx.state.playgrounds(), |name| ctx.want(name), out);
    Ok(())
}

fn realm_user(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if !ctx.want("realm_user") {
        return Ok(());
    }
    let (state, user) = (ctx.state, ctx.user);
    let realm_settings = &state.realm().settings;
    let member_of = |setting: &str| {
        catalog::realm_setting(setting)
            .is_some_and(|s| state.group_setting_contains(&s.value(realm_settings, Some(state)), user.id))
    };
    let can_create_public = member_of("can_create_public_channel_group");
    let can_create_private = member_of("can_create_private_channel_group");

    out.insert("cross_realm_bots".into(), Value::Array(state.cross_realm_bots(user)));
    out.extend(crate::json_object(json!({
        "avatar_source": user.avatar_source,
        "avatar_url_medium": format::avatar_url_medium(user),
        "avatar_url": format::avatar_url(user),
        "can_create_private_streams": can_create_private,
        "can_create_public_streams": can_create_public,
        // Web-public channels need spectator access, which Agora does not offer yet.
        "can_create_web_public_streams": false,
        "can_create_streams": can_create_public || can_create_private,
        "can_subscribe_other_users": member_of("can_add_subscribers_group"),
        "can_invite_others_to_realm": member_of("can_invite_users_group"),
        "is_admin": user.role.is_admin(),
        "is_owner": user.role == Role::Owner,
        "is_moderator": user.role == Role::Moderator,
        "is_guest": user.role == Role::Guest,
        "user_id": user.id,
        "email": user.email,
        "delivery_email": user.delivery_email,
        "full_name": user.full_name,
    })));
    Ok(())
}

/// Every folder, archived ones included (Zulip adds them right after `subscription`).
fn channel_folders(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("channel_folders") {
        out.insert("channel_folders".into(), Value::Array(crate::realm::folders::folder_dicts(ctx.state, true)));
    }
    Ok(())
}

fn subscription(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("subscription") {
        let archived = ctx.spec.capabilities.archived_channels;
        let (mut subscribed, mut unsubscribed, never) = crate::realm::channels::reads::subscription_sets(
            ctx.state,
            ctx.user,
            ctx.fetch.include_subscribers,
            archived,
        );
        if !ctx.spec.capabilities.notification_settings_null {
            let settings = catalog::user_settings(ctx.user);
            for sub in subscribed.iter_mut().chain(unsubscribed.iter_mut()) {
                crate::realm::channels::format::fill_notification_defaults(sub, &settings);
            }
        }
        out.insert("subscriptions".into(), Value::Array(subscribed));
        out.insert("unsubscribed".into(), Value::Array(unsubscribed));
        ctx.put_raw(out, "never_subscribed", never);
    }
    Ok(())
}

fn default_streams(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("default_streams") {
        // Guests are not told the default channels, as in Zulip.
        let ids = if ctx.user.role == Role::Guest {
            Vec::new()
        } else {
            ctx.state.default_channels().iter().map(|id| Value::from(id.0)).collect()
        };
        out.insert("realm_default_streams".into(), Value::Array(ids));
    }
    Ok(())
}

fn streams(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("stream") {
        let archived = ctx.spec.capabilities.archived_channels;
        ctx.put_raw(out, "streams", crate::realm::channels::reads::register_streams(ctx.state, ctx.user, archived));
    }
    Ok(())
}

fn user_settings(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if !ctx.spec.capabilities.user_settings_object {
        let display = ctx.want("update_display_settings");
        let notifications = ctx.want("update_global_notifications");
        for (key, value) in catalog::legacy_user_settings(ctx.user) {
            let wanted = match catalog::legacy_kind(&key) {
                catalog::Legacy::Display => display,
                catalog::Legacy::Notification => notifications,
                catalog::Legacy::None => display || notifications,
            };
            if wanted {
                out.insert(key, value);
            }
        }
    }
    if ctx.want("user_settings") {
        out.insert("user_settings".into(), Value::Object(catalog::user_settings(ctx.user)));
    }
    Ok(())
}

fn user_topic(ctx: &Context<'_>, out: &mut Map<String, Value>) -> ApiResult<()> {
    if ctx.want("user_topic") {
        let empty_topic_name = ctx.spec.capabilities.empty_topic_name;
        let topics = crate::realm::topics::user_topics_list(ctx.state, ctx.user.id, empty_topic_name);
        out.insert("user_topics".into(), Value::Array(topics));
    }
    Ok(())
}

/// Zulip's `post_process_state`: the user list split into active and deactivated users,
/// sorted by id, without `is_active`. Their places in `out` are held by nulls; the lists
/// come back written as JSON.
fn post_process(ctx: &Context<'_>, out: &mut Map<String, Value>) -> Vec<(&'static str, String)> {
    if !ctx.want("realm_user") {
        return Vec::new();
    }
    let options = UserDictOptions { client_gravatar: ctx.spec.client_gravatar, include_custom_profile_fields: true };
    let users = ctx.state.user_map().values();
    let (active, inactive): (Vec<_>, Vec<_>) = users.partition(|u| u.is_active);
    let json = |list: Vec<&std::sync::Arc<User>>| {
        let mut text = String::with_capacity(list.len() * 400 + 2);
        ctx.state.write_users_json(ctx.user, list.into_iter(), options, false, &mut text);
        text
    };
    out.insert("realm_users".into(), Value::Null);
    out.insert("realm_non_active_users".into(), Value::Null);
    vec![("realm_users", json(active)), ("realm_non_active_users", json(inactive))]
}
