//! Invitations as `GET /invites` lists them (Zulip's `do_get_invites_controlled_by_user`).

use serde_json::{json, Value};

use super::mail::invite_link;
use crate::config::ServerConfig;
use crate::realm::invite_data::Invite;
use crate::realm::model::User;
use crate::realm::state::RealmState;

/// The valid invitations `viewer` controls (all of them for administrators, their own for
/// others): email invitations first, then reusable links, each by id.
pub fn list_invites(state: &RealmState, config: &ServerConfig, viewer: &User, now: i64) -> Vec<Value> {
    let controlled = |i: &&Invite| {
        i.is_valid(now) && (viewer.role.is_admin() || i.referred_by == viewer.id) && state.user(i.referred_by).is_some()
    };
    let mut out: Vec<Value> = state
        .invites()
        .all()
        .filter(|i| !i.multiuse)
        .filter(controlled)
        .map(|i| {
            json!({
                "email": i.email,
                "invited_by_user_id": i.referred_by,
                "invited": i.invited_at,
                "expiry_date": i.expiry_date,
                "id": i.id,
                "invited_as": i.invited_as.as_i64(),
                "is_multiuse": false,
                "notify_referrer_on_join": i.notify_referrer_on_join,
            })
        })
        .collect();
    out.extend(state.invites().all().filter(|i| i.multiuse).filter(controlled).map(|i| {
        json!({
            "invited_by_user_id": i.referred_by,
            "invited": i.invited_at,
            "expiry_date": i.expiry_date,
            "id": i.id,
            "link_url": invite_link(config, state, i),
            "invited_as": i.invited_as.as_i64(),
            "is_multiuse": true,
        })
    }));
    out
}
