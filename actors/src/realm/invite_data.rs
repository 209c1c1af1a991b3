//! The plain data of invitations (Zulip's `PreregistrationUser` and `MultiuseInvite`, with
//! their confirmation key and expiry), held in the organization's state; and the state's
//! accessors of invitations and system bots.

use std::sync::Arc;

use imbl::{HashMap, OrdMap};
use rusqlite::Connection;

use super::model::{Role, User};
use super::state::RealmState;
use crate::ids::{ChannelId, GroupId, RealmId, UserId};
use crate::store::{self, StoreResult};

/// Where an invitation stands (Zulip's confirmation statuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InviteStatus {
    /// It can still be used.
    Usable,
    /// An email invitation that created its account.
    Used,
    /// Revoked by its inviter or an administrator.
    Revoked,
}

impl InviteStatus {
    /// The stored value (Zulip's `STATUS_USED` 1, `STATUS_REVOKED` 2).
    pub fn as_i64(self) -> i64 {
        match self {
            InviteStatus::Usable => 0,
            InviteStatus::Used => 1,
            InviteStatus::Revoked => 2,
        }
    }

    /// The status of a stored value.
    pub fn from_i64(v: i64) -> InviteStatus {
        match v {
            1 => InviteStatus::Used,
            2 => InviteStatus::Revoked,
            _ => InviteStatus::Usable,
        }
    }
}

/// An invitation: by email (one account) or a reusable link (`multiuse`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invite {
    pub id: i64,
    pub multiuse: bool,
    /// The invited address (email invitations only).
    pub email: Option<String>,
    pub referred_by: UserId,
    pub invited_as: Role,
    pub streams: Vec<ChannelId>,
    pub groups: Vec<GroupId>,
    pub include_realm_default_subscriptions: bool,
    pub notify_referrer_on_join: bool,
    /// `None`: the organization's text; `""`: no custom message.
    pub welcome_message_custom_text: Option<String>,
    /// When it was created (or last mailed), Unix seconds.
    pub invited_at: i64,
    /// `None`: never expires.
    pub expiry_date: Option<i64>,
    pub key: String,
    pub status: InviteStatus,
    pub created_user: Option<UserId>,
}

impl Invite {
    /// Whether its link has expired at `now`.
    pub fn expired(&self, now: i64) -> bool {
        self.expiry_date.is_some_and(|expiry| now > expiry)
    }

    /// Whether it is still valid (Zulip's `filter_to_valid_prereg_users` and the multiuse
    /// confirmation filter): neither used, revoked nor expired.
    pub fn is_valid(&self, now: i64) -> bool {
        self.status == InviteStatus::Usable && !self.expired(now)
    }
}

/// An organization's invitations, by id and by key, with the times of the invitation mails
/// of the last day (the daily limit counts them).
#[derive(Debug, Clone, Default)]
pub struct Invites {
    by_id: OrdMap<i64, Arc<Invite>>,
    by_key: HashMap<String, i64>,
    /// Unix seconds of each invitation mail sent lately, ascending.
    sends: Vec<i64>,
}

/// How far back the daily limit looks.
pub const DAY_SECS: i64 = 24 * 3600;

impl Invites {
    /// Loads an organization's invitations and the invitation mails of the last day.
    pub fn load(conn: &Connection, realm_id: RealmId) -> StoreResult<Invites> {
        let mut invites = Invites::default();
        for invite in store::invites::in_realm(conn, realm_id)? {
            invites.put(invite);
        }
        invites.sends = store::invites::sends_since(conn, realm_id, crate::clock::now() - DAY_SECS)?;
        Ok(invites)
    }

    /// An invitation by id.
    pub fn get(&self, id: i64) -> Option<&Invite> {
        self.by_id.get(&id).map(|i| &**i)
    }

    /// An invitation by its link's key.
    pub fn by_key(&self, key: &str) -> Option<&Invite> {
        self.by_key.get(key).and_then(|id| self.get(*id))
    }

    /// Every invitation, by id.
    pub fn all(&self) -> impl Iterator<Item = &Invite> {
        self.by_id.values().map(|i| &**i)
    }

    /// How many invitation mails went out in the day before `now`.
    pub fn sent_since(&self, since: i64) -> usize {
        self.sends.iter().filter(|t| **t > since).count()
    }

    /// Adds or replaces an invitation.
    pub(crate) fn put(&mut self, invite: Invite) {
        self.by_key.insert(invite.key.clone(), invite.id);
        self.by_id.insert(invite.id, Arc::new(invite));
    }

    /// Records invitation mails sent at `now` (and forgets those older than a day).
    pub(crate) fn note_sends(&mut self, now: i64, count: usize) {
        self.sends.retain(|t| *t > now - DAY_SECS);
        self.sends.extend(std::iter::repeat_n(now, count));
    }
}

impl RealmState {
    /// A system bot of this realm by address (`SystemBot::NOTIFICATION_BOT`, ...).
    pub fn system_bot(&self, email: &str) -> Option<&User> {
        self.system_bots.values().map(|u| &**u).find(|u| u.delivery_email.eq_ignore_ascii_case(email))
    }

    /// The system bots, by id.
    pub fn system_bots(&self) -> impl Iterator<Item = &User> {
        self.system_bots.values().map(|u| &**u)
    }

    /// The organization's invitations.
    pub fn invites(&self) -> &Invites {
        &self.invites
    }

    /// The organization's invitations, to change once committed.
    pub(crate) fn invites_mut(&mut self) -> &mut Invites {
        &mut self.invites
    }
}
