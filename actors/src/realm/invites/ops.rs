//! Invitations planned from the state (Zulip's `invite_users_backend`, `do_invite_users`,
//! the revoke, resend and reusable-link views), written with their mails, applied.

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::mail::invitation_mail;
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, GroupId, RealmId, UserId};
use crate::realm::groups::ops::access::{access_for_update, CAN_ADD_MEMBERS};
use crate::realm::invite_data::{Invite, InviteStatus, DAY_SECS};
use crate::realm::model::{Role, SystemBot, User};
use crate::realm::permissions::{has_realm_permission, require_member};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::secrets::confirmation_key;
use crate::store::{self, outbox::NewMail};
use crate::validate;

/// What `POST /invites` and `POST /invites/multiuse` ask for, as parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InviteRequest {
    /// `invitee_emails` as given (`POST /invites` only).
    pub emails_raw: String,
    /// `None`: never expires.
    pub expires_in_minutes: Option<i64>,
    pub invite_as: Role,
    pub stream_ids: Vec<i64>,
    pub group_ids: Option<Vec<i64>>,
    pub include_realm_default_subscriptions: bool,
    pub notify_referrer_on_join: bool,
    pub welcome_message_custom_text: Option<String>,
}

/// Zulip's `InvitationError`: `INVITATION_FAILED` with the triples of the refused addresses.
pub fn invitation_error(
    msg: &str,
    errors: &[(String, String, bool)],
    sent_invitations: bool,
    daily_limit_reached: bool,
) -> ApiError {
    let triples: Vec<Value> =
        errors.iter().map(|(email, reason, deactivated)| json!([email, reason, deactivated])).collect();
    ApiError::new(ErrorCode::InvitationFailed, 400, msg)
        .with("errors", triples)
        .with("sent_invitations", sent_invitations)
        .with("license_limit_reached", false)
        .with("daily_limit_reached", daily_limit_reached)
}

/// The `invites_changed` event: to the administrators and the invitation's inviter
/// (Zulip's `notify_invites_changed`).
pub fn invites_changed(state: &RealmState, referrer: Option<UserId>) -> Outgoing {
    let mut users: Vec<UserId> = state.users().filter(|u| u.is_active && u.role.is_admin()).map(|u| u.id).collect();
    if let Some(referrer) = referrer.filter(|r| !users.contains(r)) {
        users.push(referrer);
    }
    Outgoing::to(users, Event::new("invites_changed", json!({})))
}

/// Zulip's `check_role_based_permissions`: only owners invite owners; administrators
/// alone invite administrators and moderators (or act on others' invitations).
fn check_role(acting: &User, invited_as: Role, require_admin: bool) -> ApiResult<()> {
    if invited_as == Role::Owner && acting.role != Role::Owner {
        return Err(ApiError::must_be_owner());
    }
    if require_admin && !acting.role.is_admin() {
        return Err(ApiError::bad_request("Must be an organization administrator"));
    }
    Ok(())
}

/// The checks both kinds of invitation share, after the right to invite, in Zulip's order:
/// the role, (the addresses, for email invitations,) the channels, the groups, the custom
/// welcome text.
fn check_role_of(acting: &User, req: &InviteRequest) -> ApiResult<()> {
    let require_admin = matches!(req.invite_as, Role::Owner | Role::Administrator | Role::Moderator);
    check_role(acting, req.invite_as, require_admin)
}

/// Zulip's `access_streams_for_invite`: every channel must exist and be readable by the
/// inviter, and be a default channel or one the inviter may add subscribers to.
fn access_channels(state: &RealmState, acting: &User, ids: &[i64]) -> ApiResult<Vec<ChannelId>> {
    let mut channels = Vec::new();
    for id in ids {
        let channel =
            state
                .channel(ChannelId(*id))
                .filter(|c| !c.is_archived && state.has_content_access(acting, c))
                .ok_or_else(|| ApiError::bad_request(format!("Invalid channel ID {id}. No invites were sent.")))?;
        channels.push(channel);
    }
    let may_add = |c: &crate::realm::model::Channel| {
        state.default_channels().contains(&c.id)
            || state.in_channel_group(c, "can_add_subscribers_group", acting)
            || state.can_administer_channel(acting, c)
            || (has_realm_permission(state, "can_add_subscribers_group", acting.id)
                && state.has_content_access(acting, c))
    };
    if !channels.iter().all(|c| may_add(c)) {
        return Err(ApiError::bad_request("You do not have permission to subscribe other users to channels."));
    }
    Ok(channels.iter().map(|c| c.id).collect())
}

/// Zulip's `access_user_groups_for_invite`: groups the inviter may add members to.
fn access_groups(state: &RealmState, acting: &User, ids: Option<&[i64]>) -> ApiResult<Vec<GroupId>> {
    let mut groups = Vec::new();
    for id in ids.unwrap_or_default() {
        groups.push(access_for_update(state, GroupId(*id), acting.id, CAN_ADD_MEMBERS, false)?.id);
    }
    Ok(groups)
}

/// The rest of the shared checks.
pub(super) fn check_targets(
    state: &RealmState,
    acting: &User,
    req: &InviteRequest,
) -> ApiResult<(Vec<ChannelId>, Vec<GroupId>)> {
    let channels = access_channels(state, acting, &req.stream_ids)?;
    let groups = access_groups(state, acting, req.group_ids.as_deref())?;
    if req.welcome_message_custom_text.is_some() && !acting.role.is_admin() {
        return Err(ApiError::bad_request("Must be an organization administrator"));
    }
    Ok((channels, groups))
}

/// Zulip's `get_invitee_emails_set`: split on commas and newlines, `Name <email>` taken for
/// its address, stripped; each address once (in the order given).
pub fn invitee_emails(raw: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in raw.split([',', '\n']) {
        let address = match (part.find('<'), part.rfind('>')) {
            (Some(open), Some(close)) if open < close => &part[open + 1..close],
            _ => part,
        };
        let address = address.trim().to_owned();
        if !out.contains(&address) {
            out.push(address);
        }
    }
    out
}

/// Zulip's `check_invite_limit` with this server's daily limit.
pub(super) fn check_daily_limit(state: &RealmState, config: &ServerConfig, count: usize, now: i64) -> ApiResult<()> {
    let limit = config.invites.daily_limit;
    if limit > 0 && count + state.invites().sent_since(now - DAY_SECS) > limit {
        return Err(invitation_error(
            "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.",
            &[],
            false,
            true,
        ));
    }
    Ok(())
}

/// Zulip's `get_existing_user_errors` for one address: (reason, deactivated).
pub fn existing_user_error(state: &RealmState, email: &str) -> Option<(&'static str, bool)> {
    if SystemBot::is_reserved(email) {
        return Some(("Reserved for system bots.", false));
    }
    let user = state.user_by_delivery_email(email)?;
    Some(if user.is_active { ("Already has an account.", false) } else { ("Account has been deactivated.", true) })
}

/// Zulip's `validate_email_is_valid` (no restriction to domains: Agora has no
/// organization domains yet).
pub fn email_error(email: &str) -> Option<&'static str> {
    (!validate::is_valid_email(email)).then_some("Invalid address.")
}

/// New invitations with their mails, planned.
#[derive(Debug, Clone)]
pub struct NewInvites {
    realm_id: RealmId,
    invites: Vec<Invite>,
    /// The mail of each invitation (email invitations), in the same order.
    mails: Vec<NewMail>,
    now: i64,
    referrer: UserId,
    /// Addresses that already have accounts (reported after the others are invited).
    skipped: Vec<(String, String, bool)>,
}

/// A new invitation's row (its id comes with the write).
pub(super) fn new_invite(
    acting: &User,
    req: &InviteRequest,
    email: Option<String>,
    targets: &(Vec<ChannelId>, Vec<GroupId>),
    now: i64,
) -> Invite {
    Invite {
        id: 0,
        multiuse: email.is_none(),
        email,
        referred_by: acting.id,
        invited_as: req.invite_as,
        streams: targets.0.clone(),
        groups: targets.1.clone(),
        include_realm_default_subscriptions: req.include_realm_default_subscriptions,
        notify_referrer_on_join: req.notify_referrer_on_join,
        welcome_message_custom_text: req.welcome_message_custom_text.clone(),
        invited_at: now,
        expiry_date: req.expires_in_minutes.map(|m| now.saturating_add(m.saturating_mul(60))),
        key: confirmation_key(),
        status: InviteStatus::Usable,
        created_user: None,
    }
}

/// Zulip's permission checks shared by both kinds of invitation, before the addresses:
/// the acting user is no guest, holds `setting`, and may give the role.
pub(super) fn check_inviter<'s>(
    state: &'s RealmState,
    acting: UserId,
    setting: &str,
    req: &InviteRequest,
) -> ApiResult<&'s User> {
    let acting = require_member(state, acting)?;
    if !has_realm_permission(state, setting, acting.id) {
        return Err(ApiError::bad_request("Insufficient permission"));
    }
    check_role_of(acting, req)?;
    Ok(acting)
}

/// Plans `POST /invites` in Zulip's order of checks.
pub fn plan_invite(
    state: &RealmState,
    config: &ServerConfig,
    acting: UserId,
    req: &InviteRequest,
    now: i64,
) -> ApiResult<NewInvites> {
    let acting = check_inviter(state, acting, "can_invite_users_group", req)?;
    if req.emails_raw.is_empty() {
        return Err(ApiError::bad_request("You must specify at least one email address."));
    }
    let emails = invitee_emails(&req.emails_raw);
    let targets = check_targets(state, acting, req)?;
    check_daily_limit(state, config, emails.len(), now)?;
    let invite_required = state.realm().settings.get("invite_required").and_then(Value::as_bool).unwrap_or(true);
    let min_age = config.invites.min_user_age_days.saturating_mul(DAY_SECS);
    if !invite_required && acting.date_joined > now - min_age && !acting.role.is_admin() {
        return Err(invitation_error(
            "Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.",
            &[],
            false,
            false,
        ));
    }
    let mut errors = Vec::new();
    let mut good = Vec::new();
    for email in emails.iter().filter(|e| !e.is_empty()) {
        match email_error(email) {
            Some(reason) => errors.push((email.clone(), reason.to_owned(), false)),
            None => good.push(email.clone()),
        }
    }
    let mut skipped = Vec::new();
    good.retain(|email| match existing_user_error(state, email) {
        Some((reason, deactivated)) => {
            skipped.push((email.clone(), reason.to_owned(), deactivated));
            false
        }
        None => true,
    });
    if !errors.is_empty() {
        errors.extend(skipped);
        return Err(invitation_error(
            "Some emails did not validate, so we didn't send any invitations.",
            &errors,
            false,
            false,
        ));
    }
    if !skipped.is_empty() && skipped.len() == emails.len() {
        return Err(invitation_error("We weren't able to invite anyone.", &skipped, false, false));
    }
    let mut invites = Vec::new();
    let mut mails = Vec::new();
    for email in good {
        let invite = new_invite(acting, req, Some(email), &targets, now);
        mails.push(invitation_mail(state, config, acting, &invite));
        invites.push(invite);
    }
    Ok(NewInvites { realm_id: state.realm().id, invites, mails, now, referrer: acting.id, skipped })
}

impl NewInvites {
    /// The error `POST /invites` answers with once the others are invited, if any address
    /// already had an account.
    pub fn skipped_error(skipped: &[(String, String, bool)]) -> Option<ApiError> {
        (!skipped.is_empty()).then(|| {
            invitation_error(
                "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
                skipped,
                true,
                false,
            )
        })
    }
}

#[cfg(test)]
impl NewInvites {
    /// The ids a database would give the new invitations (tests without one).
    pub(crate) fn assign_ids_for_tests(&mut self) {
        for (i, invite) in self.invites.iter_mut().enumerate() {
            invite.id = i as i64 + 1;
        }
    }
}

impl Change for NewInvites {
    type Output = Vec<(String, String, bool)>;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        for invite in &mut self.invites {
            invite.id = store::invites::insert(tx, self.realm_id, invite)?;
        }
        for mail in &self.mails {
            store::outbox::enqueue(tx, mail, self.now)?;
        }
        store::invites::record_sends(tx, self.realm_id, self.now, self.mails.len())?;
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<Self::Output> {
        let sent = self.mails.len();
        for invite in self.invites {
            tracing::info!(realm.id = %self.realm_id, invite.id = invite.id, user.id = %self.referrer, "invited");
            state.invites_mut().put(invite);
        }
        state.invites_mut().note_sends(self.now, sent);
        Applied::new(self.skipped, vec![invites_changed(state, Some(self.referrer))])
    }
}
