//! A new human account with everything Zulip gives it at once (`process_new_human_user`):
//! its default (and invited) channels, its invited groups, and the invitation it used.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Transaction;

use crate::error::ApiResult;
use crate::ids::{ChannelId, GroupId, UserId};
use crate::realm::channels::ops::events::{peer_events, subscription_add_events};
use crate::realm::channels::ops::new_channel::pick_color;
use crate::realm::groups::format::membership_event;
use crate::realm::invite_data::{Invite, InviteStatus};
use crate::realm::invites::ops::invites_changed;
use crate::realm::model::Subscription;
use crate::realm::state::RealmState;
use crate::realm::users::create::NewAccount;
use crate::realm::users::CreatedUser;
use crate::realm::{Applied, Change};
use crate::store;

/// A new member, planned: the account, the channels and groups it joins, and the
/// invitation it consumes (with the others to its address, which it revokes).
#[derive(Debug, Clone)]
pub struct NewMember {
    account: NewAccount,
    channels: Vec<ChannelId>,
    groups: Vec<GroupId>,
    invite: Option<Invite>,
    /// Other usable email invitations to the same address, revoked.
    others: Vec<Invite>,
    /// Set by the write.
    subscriptions: Vec<Subscription>,
}

impl NewMember {
    /// The account with the organization's default channels (unless an invitation leaves
    /// them out) and the invitation's channels and groups.
    pub fn plan(state: &RealmState, account: NewAccount, invite: Option<&Invite>) -> NewMember {
        let mut channels: Vec<ChannelId> = Vec::new();
        if invite.is_none_or(|i| i.include_realm_default_subscriptions) {
            channels.extend(state.default_channels().iter().copied());
        }
        if let Some(invite) = invite {
            channels.extend(invite.streams.iter().copied());
        }
        let mut seen = BTreeSet::new();
        channels.retain(|c| seen.insert(*c) && state.channel(*c).is_some_and(|c| !c.is_archived));
        let groups = invite
            .map(|i| i.groups.iter().copied().filter(|g| state.group(*g).is_some_and(|g| !g.deactivated)).collect())
            .unwrap_or_default();
        let email = account.user().delivery_email.to_lowercase();
        let others = state
            .invites()
            .all()
            .filter(|i| i.status == InviteStatus::Usable && !i.multiuse)
            .filter(|i| invite.is_none_or(|used| used.id != i.id))
            .filter(|i| i.email.as_deref().is_some_and(|e| e.to_lowercase() == email))
            .map(|i| Invite { status: InviteStatus::Revoked, ..i.clone() })
            .collect();
        let invite =
            invite.map(|i| Invite { status: if i.multiuse { i.status } else { InviteStatus::Used }, ..i.clone() });
        NewMember { account, channels, groups, invite, others, subscriptions: Vec::new() }
    }

    /// The account.
    pub fn account(&self) -> &NewAccount {
        &self.account
    }

    /// The invitation consumed, as it will be stored.
    pub fn invite(&self) -> Option<&Invite> {
        self.invite.as_ref()
    }
}

impl Change for NewMember {
    type Output = CreatedUser;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.account.write(tx)?;
        let user = self.account.user().id;
        let mut used = Vec::new();
        for channel in &self.channels {
            let sub = Subscription::new(user, *channel, pick_color(&mut used));
            store::channels::put_subscription(tx, &sub)?;
            self.subscriptions.push(sub);
        }
        for group in &self.groups {
            store::groups::add_members(tx, *group, &[user])?;
        }
        if let Some(invite) = &mut self.invite {
            invite.created_user = Some(user);
            store::invites::set_status(tx, invite.id, invite.status, Some(user))?;
        }
        for other in &self.others {
            store::invites::set_status(tx, other.id, other.status, None)?;
        }
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<CreatedUser> {
        let NewMember { account, groups, invite, others, subscriptions, .. } = self;
        let applied = account.apply(state);
        let user = applied.output.user_id;
        let mut events = applied.events;
        let mut per_user: BTreeMap<UserId, Vec<ChannelId>> = BTreeMap::new();
        let mut added: BTreeMap<ChannelId, Vec<UserId>> = BTreeMap::new();
        for sub in subscriptions {
            per_user.entry(user).or_default().push(sub.channel_id);
            added.entry(sub.channel_id).or_default().push(user);
            state.put_subscription(sub);
        }
        events.extend(subscription_add_events(state, &per_user));
        events.extend(peer_events(state, "peer_add", &added));
        for group in groups {
            state.add_group_members(group, &[user]);
            events.push(membership_event(state, "add_members", group, "user_ids", vec![user.0]));
        }
        for other in others {
            state.invites_mut().put(other);
        }
        if let Some(invite) = invite {
            let referrer = invite.referred_by;
            state.invites_mut().put(invite);
            events.push(invites_changed(state, Some(referrer)));
        }
        Applied::new(applied.output, events).with_auth()
    }
}
