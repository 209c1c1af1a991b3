//! Invitations planned and applied on an organization built in memory: the addresses
//! parsed as Zulip parses them, the checks that need no HTTP, the daily limit's window and
//! who hears of changes.

use serde_json::{json, Value};

use super::links::{plan_resend, plan_revoke};
use super::ops::{invitee_emails, plan_invite, InviteRequest};
use crate::config::ServerConfig;
use crate::ids::UserId;
use crate::realm::chat::fixture_tests::{realm, set_realm, user, T0};
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::Change;

fn request(emails: &str) -> InviteRequest {
    InviteRequest {
        emails_raw: emails.into(),
        expires_in_minutes: Some(60),
        invite_as: Role::Member,
        stream_ids: Vec::new(),
        group_ids: None,
        include_realm_default_subscriptions: false,
        notify_referrer_on_join: true,
        welcome_message_custom_text: None,
    }
}

/// Invites as written: the ids of the database given in order.
fn invite(
    state: &mut RealmState,
    config: &ServerConfig,
    acting: UserId,
    emails: &str,
    now: i64,
) -> Vec<(Value, Vec<UserId>)> {
    let mut change = plan_invite(state, config, acting, &request(emails), now).unwrap();
    change.assign_ids_for_tests();
    change.apply(state).events.into_iter().map(|o| (Value::Object(o.event.body().clone()), o.users)).collect()
}

#[test]
fn addresses_are_split_on_commas_and_newlines_named_ones_taken_for_their_address() {
    assert_eq!(
        invitee_emails("a@x.test, Bob Smith <b@x.test>\nc@x.test,a@x.test,"),
        vec!["a@x.test", "b@x.test", "c@x.test", ""]
    );
}

#[test]
fn administrators_and_the_inviter_hear_of_invitations_and_mails_count_for_a_day() {
    let mut state = realm();
    let owner = user(&mut state, "owner", Role::Owner);
    let member = user(&mut state, "member", Role::Member);
    let _other = user(&mut state, "other", Role::Member);
    let config = ServerConfig::default();
    let events = invite(&mut state, &config, member, "a@x.test,b@x.test", T0);
    assert_eq!(events, vec![(json!({"type": "invites_changed"}), vec![owner, member])]);
    assert_eq!(state.invites().sent_since(T0 - 1), 2);
    // The limit counts the mails of the last 24 hours only.
    let limited =
        ServerConfig { invites: crate::config::InviteConfig { daily_limit: 3, ..Default::default() }, ..config };
    let err = plan_invite(&state, &limited, member, &request("c@x.test,d@x.test"), T0 + 60).unwrap_err();
    assert_eq!((err.msg.starts_with("To protect users"), err.data["daily_limit_reached"].clone()), (true, json!(true)));
    assert!(plan_invite(&state, &limited, member, &request("c@x.test,d@x.test"), T0 + 86_401).is_ok());
    // A resend counts too; revoking is told to the administrators and the inviter.
    let id = state.invites().all().next().unwrap().id;
    assert!(plan_resend(&state, &limited, member, id, T0 + 60).is_ok());
    let revoked = plan_revoke(&state, member, id).unwrap().apply(&mut state);
    assert_eq!(revoked.events[0].users, vec![owner, member]);
    assert_eq!(plan_revoke(&state, member, id).unwrap_err().msg, "No such invitation");
}

#[test]
fn new_accounts_may_not_invite_to_open_organizations() {
    let mut state = realm();
    let member = user(&mut state, "member", Role::Member);
    set_realm(&mut state, "invite_required", json!(false));
    let config = ServerConfig::default();
    let err = plan_invite(&state, &config, member, &request("a@x.test"), T0 + 3600).unwrap_err();
    assert_eq!(err.msg, "Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.");
    assert!(plan_invite(&state, &config, member, &request("a@x.test"), T0 + 4 * 86_400).is_ok());
}
