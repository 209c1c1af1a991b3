//! Creating, editing and deleting drafts (Zulip's `zerver/lib/drafts.py`), planned from the
//! state, written, applied.
//!
//! Every endpoint first refuses users who turned `enable_drafts_synchronization` off
//! (`draft_endpoint`), before their parameters are looked at. A draft is then checked as
//! `further_validated_draft_dict` checks it: its content, its timestamp, then what it is
//! addressed to. An edit or deletion of a draft that is not the user's is "Draft does not
//! exist" (404), found when written: drafts are not kept in memory.

use rusqlite::Transaction;
use serde_json::json;

use super::format::draft_dict;
use super::input::{DraftData, DraftKind};
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, RealmId, UserId};
use crate::realm::catalog::{self, MAX_TOPIC_LENGTH};
use crate::realm::chat::send::{normalize_content, truncate};
use crate::realm::model::User;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;
use crate::store::drafts::{DraftFields, DraftRow};

/// The latest time a draft may carry (9999-12-31T23:59:59Z, Python's largest datetime).
const MAX_TIMESTAMP: f64 = 253_402_300_799.0;

/// Whether `user` keeps their drafts on the server.
pub fn drafts_enabled(user: &User) -> bool {
    catalog::user_setting("enable_drafts_synchronization")
        .is_none_or(|s| catalog::user_value(user, s).as_bool().unwrap_or(true))
}

/// `draft_endpoint`: the user, unless they turned draft synchronization off.
pub fn syncing_user(state: &RealmState, user_id: UserId) -> ApiResult<&User> {
    let user = state.user_or_err(user_id)?;
    if !drafts_enabled(user) {
        return Err(ApiError::bad_request("User has disabled synchronizing drafts."));
    }
    Ok(user)
}

/// Zulip's "Draft does not exist" (404, code `BAD_REQUEST`).
fn no_such_draft() -> ApiError {
    ApiError::resource_not_found("Draft does not exist")
}

/// Checks a draft against the state and makes the fields to store (Zulip's
/// `further_validated_draft_dict`), `now_micros` standing for a missing timestamp; `at`
/// names the draft's timestamp in an error about its range.
pub fn validated(
    state: &RealmState,
    user: &User,
    draft: DraftData,
    now_micros: i64,
    at: &str,
) -> ApiResult<DraftFields> {
    let content = normalize_content(&draft.content)?;
    let last_edit_micros = match draft.timestamp {
        None => now_micros,
        Some(seconds) => {
            let micros = (seconds * 1e6).round();
            if micros < 0.0 {
                return Err(ApiError::bad_request("Timestamp must not be negative."));
            }
            if micros > MAX_TIMESTAMP * 1e6 {
                return Err(ApiError::bad_request(format!("{at} is too large")));
            }
            micros as i64
        }
    };
    let (kind, to, topic) = match draft.kind {
        DraftKind::Channel => {
            let topic = truncate(&draft.topic, MAX_TOPIC_LENGTH, "...");
            if topic.contains('\0') {
                return Err(ApiError::bad_request("Topic must not contain null bytes"));
            }
            let [id] = draft.to[..] else {
                return Err(ApiError::bad_request("Must specify exactly 1 channel ID for channel messages"));
            };
            let channel = state
                .channel(ChannelId(id))
                .filter(|c| !c.is_archived && state.has_content_access(user, c))
                .ok_or_else(|| ApiError::bad_request("Invalid channel ID"))?;
            (DraftKind::Channel, vec![channel.id.0], topic)
        }
        DraftKind::Direct if !draft.to.is_empty() => {
            (DraftKind::Direct, direct_to(state, user, &draft.to)?, String::new())
        }
        // A direct draft to nobody is not addressed yet.
        DraftKind::Direct | DraftKind::None => (DraftKind::None, Vec::new(), String::new()),
    };
    Ok(DraftFields { kind: kind.as_str().to_owned(), to, topic, content, last_edit_micros })
}

/// The `to` of a direct draft to `ids` (Zulip's `get_user_profiles_by_ids` and
/// `recipient_for_user_profiles`): users of the organization, none deactivated; shown as
/// the other participants ascending, or the user alone for a draft to themselves.
fn direct_to(state: &RealmState, user: &User, ids: &[i64]) -> ApiResult<Vec<i64>> {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut users = Vec::with_capacity(ids.len());
    for id in &ids {
        users.push(state.user(UserId(*id)).ok_or_else(|| ApiError::bad_request(format!("Invalid user ID {id}")))?);
    }
    if let Some(gone) = users.iter().find(|u| !u.is_active) {
        return Err(ApiError::bad_request(format!("'{}' is no longer using Zulip.", gone.email)));
    }
    let others: Vec<i64> = users.iter().filter(|u| u.id != user.id).map(|u| u.id.0).collect();
    Ok(if others.is_empty() { vec![user.id.0] } else { others })
}

/// Planned new drafts of a user.
#[derive(Debug, Clone)]
pub struct DraftsCreated {
    realm_id: RealmId,
    user_id: UserId,
    drafts: Vec<DraftFields>,
    /// Set by the write.
    ids: Vec<i64>,
}

/// Plans `POST /drafts`: the user syncs drafts, the parameter is valid, then every draft is
/// checked before any is stored.
pub fn plan_create(
    state: &RealmState,
    user_id: UserId,
    drafts: ApiResult<Vec<DraftData>>,
    now_micros: i64,
) -> ApiResult<DraftsCreated> {
    let user = syncing_user(state, user_id)?;
    let drafts = drafts?
        .into_iter()
        .enumerate()
        .map(|(i, d)| validated(state, user, d, now_micros, &format!("drafts[{i}][\"timestamp\"]")))
        .collect::<ApiResult<Vec<_>>>()?;
    Ok(DraftsCreated { realm_id: state.realm().id, user_id: user.id, drafts, ids: Vec::new() })
}

impl Change for DraftsCreated {
    /// The new drafts' ids, in the order given.
    type Output = Vec<i64>;

    /// No drafts store nothing (the event is still sent, as in Zulip).
    fn writes(&self) -> bool {
        !self.drafts.is_empty()
    }

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.ids = store::drafts::insert(tx, self.realm_id, self.user_id, &self.drafts)?;
        Ok(())
    }

    /// `drafts` `add` with the new drafts, to the user.
    fn apply(self, _state: &mut RealmState) -> Applied<Vec<i64>> {
        let dicts: Vec<_> = self.ids.iter().zip(self.drafts).map(|(id, d)| draft_dict(&row(*id, d))).collect();
        let event = Event::new("drafts", json!({"op": "add", "drafts": dicts}));
        Applied::new(self.ids, vec![Outgoing::to(vec![self.user_id], event)])
    }
}

fn row(id: i64, d: DraftFields) -> DraftRow {
    DraftRow { id, kind: d.kind, to: d.to, topic: d.topic, content: d.content, last_edit_micros: d.last_edit_micros }
}

/// A planned edit of a draft. Whether the draft is the user's is known only when written,
/// and Zulip answers that before the new content's checks: those are kept until then.
#[derive(Debug, Clone)]
pub struct DraftEdited {
    user_id: UserId,
    draft_id: i64,
    checked: ApiResult<DraftFields>,
}

/// Plans `PATCH /drafts/{draft_id}`: the user syncs drafts and the parameter is valid; the
/// draft's existence, then its checks, are decided by the write.
pub fn plan_edit(
    state: &RealmState,
    user_id: UserId,
    draft_id: i64,
    draft: ApiResult<DraftData>,
    now_micros: i64,
) -> ApiResult<DraftEdited> {
    let user = syncing_user(state, user_id)?;
    let draft = draft?;
    let checked = validated(state, user, draft, now_micros, "draft[\"timestamp\"]");
    Ok(DraftEdited { user_id: user.id, draft_id, checked })
}

impl Change for DraftEdited {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if store::drafts::get(tx, self.user_id, self.draft_id)?.is_none() {
            return Err(no_such_draft());
        }
        let fields = self.checked.as_ref().map_err(Clone::clone)?;
        store::drafts::update(tx, self.user_id, self.draft_id, fields)?;
        Ok(())
    }

    /// `drafts` `update` with the draft, to the user.
    fn apply(self, _state: &mut RealmState) -> Applied<()> {
        let Ok(fields) = self.checked else {
            return Applied::events(Vec::new());
        };
        let event = Event::new("drafts", json!({"op": "update", "draft": draft_dict(&row(self.draft_id, fields))}));
        Applied::events(vec![Outgoing::to(vec![self.user_id], event)])
    }
}

/// A planned deletion of a draft.
#[derive(Debug, Clone)]
pub struct DraftDeleted {
    user_id: UserId,
    draft_id: i64,
}

/// Plans `DELETE /drafts/{draft_id}`: the user syncs drafts; whether the draft is theirs
/// is decided by the write.
pub fn plan_delete(state: &RealmState, user_id: UserId, draft_id: i64) -> ApiResult<DraftDeleted> {
    let user = syncing_user(state, user_id)?;
    Ok(DraftDeleted { user_id: user.id, draft_id })
}

impl Change for DraftDeleted {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if !store::drafts::delete(tx, self.user_id, self.draft_id)? {
            return Err(no_such_draft());
        }
        Ok(())
    }

    /// `drafts` `remove` with the draft's id, to the user.
    fn apply(self, _state: &mut RealmState) -> Applied<()> {
        let event = Event::new("drafts", json!({"op": "remove", "draft_id": self.draft_id}));
        Applied::events(vec![Outgoing::to(vec![self.user_id], event)])
    }
}
