//! The replies: `POST /users/me/presence`, `GET /realm/presence`,
//! `GET /users/{user_id_or_email}/presence` and the register data set, all answered from
//! memory (Zulip's `get_presence_dict_by_realm` and `get_presence_backend`).

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::audience::{self, UserSet};
use super::blocks::ModernBlocks;
use super::format;
use super::state::{seconds, PresenceState, Row};
use super::{DEFAULT_HISTORY_DAYS, MICROS};
use crate::config::PresenceConfig;
use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;
use crate::realm::state::RealmState;

/// What a presence fetch asks for (`POST /users/me/presence` unless `ping_only`, and the
/// register data set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresenceQuery {
    /// The modern format, keyed by user id (`slim_presence`, implied by `last_update_id`).
    pub slim: bool,
    /// `last_update_id`: when positive, only the rows changed after it.
    pub last_update_id: Option<i64>,
    /// `history_limit_days` (14 when absent): only users connected within that many days,
    /// unless `last_update_id` is positive; 0 asks for nothing.
    pub history_limit_days: Option<i64>,
}

impl PresenceQuery {
    /// Zulip's rule: passing `last_update_id` means the modern format.
    pub fn new(slim_presence: bool, last_update_id: Option<i64>, history_limit_days: Option<i64>) -> Self {
        PresenceQuery { slim: slim_presence || last_update_id.is_some(), last_update_id, history_limit_days }
    }
}

/// Who a reply is for: the organization as of now, the users reported at all, and, when
/// the server limits presence for this viewer, the users they can access.
pub struct Audience<'a> {
    pub realm: &'a RealmState,
    pub reported: &'a UserSet,
    pub access: Option<&'a UserSet>,
}

impl Audience<'_> {
    fn sees(&self, user: UserId) -> bool {
        self.reported.contains(user) && self.access.is_none_or(|set| set.contains(user))
    }
}

/// The rows a fetch returns, by ascending `update_id`, and its `presence_last_update_id`:
/// the largest id returned, else the client's own, else -1.
pub fn select<'a>(
    presence: &'a PresenceState,
    audience: &Audience<'_>,
    query: &PresenceQuery,
    now_micros: i64,
) -> (Vec<&'a Arc<Row>>, i64) {
    if audience.realm.realm().presence_disabled() {
        return (Vec::new(), -1);
    }
    let mut rows = Vec::new();
    let days = query.history_limit_days.unwrap_or(DEFAULT_HISTORY_DAYS);
    if days != 0 {
        match query.last_update_id {
            // Rows changed since the client's last fetch, however old.
            Some(after) if after > 0 => {
                rows.extend(presence.rows_after(after).filter(|row| audience.sees(row.user_id)));
            }
            after => {
                let since = now_micros.saturating_sub(days.saturating_mul(86_400 * MICROS));
                let recent = |row: &&Arc<Row>| row.last_connected.is_some_and(|t| t >= since);
                let changed = |row: &&Arc<Row>| after.is_none_or(|after| row.update_id > after);
                rows.extend(presence.rows().filter(recent).filter(changed).filter(|row| audience.sees(row.user_id)));
            }
        }
    }
    let last_update_id = match rows.last() {
        Some(row) => row.update_id,
        None => query.last_update_id.unwrap_or(-1),
    };
    (rows, last_update_id)
}

/// The `presences` object of `rows` as JSON, in the modern or the legacy format.
pub fn presences_json(rows: &[&Arc<Row>], realm: &RealmState, slim: bool) -> String {
    let mut out = String::with_capacity(2 + rows.len() * if slim { 68 } else { 220 });
    out.push('{');
    for row in rows {
        if slim {
            out.push_str(row.modern_member());
        } else {
            let Some(user) = realm.user(row.user_id) else { continue };
            out.push_str(&Value::from(user.email.as_str()).to_string());
            out.push(':');
            out.push_str(&format::legacy_object(row).to_string());
        }
        out.push(',');
    }
    if out.len() > 1 {
        out.pop();
    }
    out.push('}');
    out
}

/// The data of `POST /users/me/presence` as JSON members: none for `ping_only` (`query`
/// `None`), else `presences`, `server_timestamp` and `presence_last_update_id`.
pub fn update_reply(
    presence: &PresenceState,
    audience: &Audience<'_>,
    query: Option<&PresenceQuery>,
    now: i64,
) -> String {
    update_reply_from(presence, audience, query, now, None).text()
}

/// JSON object members (`"a":1,"b":{...}`) in pieces, sent one after the other: the
/// cached blocks of an incremental reply go out without being copied together first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields(pub Vec<Bytes>);

impl Fields {
    /// The members as one string.
    pub fn text(&self) -> String {
        let bytes: Vec<u8> = self.0.iter().flat_map(|part| part.iter().copied()).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// The same, taking the rows of an incremental modern fetch from `blocks` when the viewer
/// sees everyone reported (the reply is the same, built from fewer, larger pieces).
pub fn update_reply_from(
    presence: &PresenceState,
    audience: &Audience<'_>,
    query: Option<&PresenceQuery>,
    now: i64,
    blocks: Option<&mut ModernBlocks>,
) -> Fields {
    let Some(query) = query else { return Fields::default() };
    let incremental = query.slim
        && audience.access.is_none()
        && query.history_limit_days != Some(0)
        && !audience.realm.realm().presence_disabled();
    let mut parts = vec![Bytes::from_static(b"\"presences\":{")];
    let last_update_id = match (blocks, query.last_update_id) {
        (Some(blocks), Some(after)) if incremental && after > 0 => {
            blocks.presences_after(presence, audience.reported, after, &mut parts).unwrap_or(after)
        }
        _ => {
            let (rows, last_update_id) = select(presence, audience, query, now);
            // Without its braces (it is at least `{}`): the pieces around it hold them.
            let presences = Bytes::from(presences_json(&rows, audience.realm, query.slim));
            parts.push(presences.slice(1..presences.len().saturating_sub(1).max(1)));
            last_update_id
        }
    };
    parts.push(Bytes::from(format!(
        "}},\"server_timestamp\":{},\"presence_last_update_id\":{last_update_id}",
        format::server_timestamp(now)
    )));
    Fields(parts)
}

/// The data of `GET /realm/presence`: every user in the legacy format (two weeks of
/// history), and `server_timestamp`.
pub fn realm_reply(presence: &PresenceState, audience: &Audience<'_>, now: i64) -> String {
    let query = PresenceQuery::new(false, None, None);
    let (rows, _) = select(presence, audience, &query, now);
    let presences = presences_json(&rows, audience.realm, false);
    format!("\"presences\":{presences},\"server_timestamp\":{}", format::server_timestamp(now))
}

/// `GET /users/{user_id_or_email}/presence`: `{"presence": ...}` with Zulip's errors, in
/// their order.
pub fn user_reply(
    presence: &PresenceState,
    realm: &RealmState,
    config: &PresenceConfig,
    viewer: UserId,
    target: &str,
    now: i64,
) -> ApiResult<Map<String, Value>> {
    let user = if !target.is_empty() && target.bytes().all(|b| b.is_ascii_digit()) {
        target.parse().ok().and_then(|id| realm.user(UserId(id)))
    } else {
        realm.user_by_api_email(target)
    };
    let user = user.filter(|u| u.is_active).ok_or_else(|| ApiError::bad_request("No such user"))?;
    if user.bot_type.is_some() {
        return Err(ApiError::bad_request("Presence is not supported for bot users."));
    }
    if !audience::can_access(config, realm, viewer, user.id) {
        return Err(ApiError::bad_request("Insufficient permission"));
    }
    let row = presence.row(user.id).ok_or_else(|| ApiError::bad_request(format!("No presence data for {target}")))?;
    let presence = format::single(row, seconds(now));
    Ok(crate::json_object(json!({ "server_timestamp": format::server_timestamp(now), "presence": presence })))
}

/// The register data set `presence`: `presences` (in the modern format for `slim_presence`
/// or `simplified_presence_events`), `presence_last_update_id` and `server_timestamp`.
pub fn register_data(
    presence: &PresenceState,
    audience: &Audience<'_>,
    query: &PresenceQuery,
    now: i64,
    out: &mut Map<String, Value>,
) {
    let (rows, last_update_id) = select(presence, audience, query, now);
    let presences: Map<String, Value> = rows
        .iter()
        .filter_map(|row| {
            if query.slim {
                Some((row.user_id.to_string(), format::modern_object(row)))
            } else {
                audience.realm.user(row.user_id).map(|u| (u.email.clone(), format::legacy_object(row)))
            }
        })
        .collect();
    out.insert("presences".into(), Value::Object(presences));
    out.insert("presence_last_update_id".into(), Value::from(last_update_id));
    out.insert("server_timestamp".into(), format::server_timestamp(now));
}
