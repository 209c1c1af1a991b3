//! The administrator's commands on a state built in memory: what they print, the changes
//! they apply and the events those send, and their refusals.

use serde_json::{json, Value};

use super::ops::{execute, AdminOp};
use super::Committer;
use crate::config::ServerConfig;
use crate::error::ApiResult;
use crate::events::Outgoing;
use crate::ids::{ChannelId, UserId};
use crate::realm::fixture_tests;
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::tests::memory;
use crate::realm::Change;

/// Applies changes to the state without a database, keeping their events.
struct Memory {
    state: RealmState,
    config: ServerConfig,
    events: Vec<Outgoing>,
    auth_published: bool,
}

impl Committer for Memory {
    fn state(&self) -> &RealmState {
        &self.state
    }

    fn config(&self) -> &ServerConfig {
        &self.config
    }

    fn commit<C: Change>(&mut self, change: C) -> ApiResult<C::Output> {
        let applied = change.apply(&mut self.state);
        self.events.extend(applied.events);
        self.auth_published |= applied.auth;
        Ok(applied.output)
    }
}

/// "acme" with its owner (1), a member Bob (2) and an administrator Ada (3).
fn acme() -> Memory {
    let mut state = memory::state();
    memory::user(&mut state, "bob@acme.test", Role::Member);
    memory::user(&mut state, "ada@acme.test", Role::Administrator);
    Memory { state, config: ServerConfig::default(), events: Vec::new(), auth_published: false }
}

fn run(m: &mut Memory, op: AdminOp) -> ApiResult<Value> {
    execute(m, op, memory::T0)
}

fn refused(m: &mut Memory, op: AdminOp) -> String {
    let err = run(m, op).unwrap_err();
    assert_eq!(err.status, 400);
    err.msg
}

fn bodies(m: &Memory) -> Vec<Value> {
    m.events.iter().map(|o| Value::Object(o.event.body().clone())).collect()
}

fn user(name: &str) -> String {
    name.to_owned()
}

#[test]
fn list_users_prints_every_account() {
    let mut m = acme();
    m.state.set_user_active(UserId(2), false);
    let out = run(&mut m, AdminOp::ListUsers).unwrap();
    let users = out["users"].as_array().unwrap();
    assert_eq!(users.len(), 3);
    assert_eq!(
        users[1],
        json!({"user_id": 2, "email": "bob@acme.test", "full_name": "User bob", "role": "member",
               "is_active": false, "is_bot": false, "bot_owner_id": null, "date_joined": memory::T0})
    );
    assert_eq!(
        users.iter().map(|u| u["role"].as_str().unwrap()).collect::<Vec<_>>(),
        ["owner", "member", "administrator"]
    );
    assert!(m.events.is_empty());
}

#[test]
fn a_role_change_moves_the_system_groups_with_their_events() {
    let mut m = acme();
    // By real address, in any case.
    let out = run(&mut m, AdminOp::ChangeRole { user: user("BOB@acme.test"), role: 300 }).unwrap();
    assert_eq!(out, json!({"user_id": 2, "old_role": "member", "role": "moderator"}));
    assert_eq!(m.state.user(UserId(2)).unwrap().role, Role::Moderator);
    assert!(m.auth_published);
    let (moderators, full_members, members) = (3, 4, 5);
    assert_eq!(
        bodies(&m),
        vec![
            json!({"type": "realm_user", "op": "update", "person": {"user_id": 2, "role": 300}}),
            json!({"type": "user_group", "op": "remove_members", "group_id": members, "user_ids": [2]}),
            json!({"type": "user_group", "op": "remove_members", "group_id": full_members, "user_ids": [2]}),
            json!({"type": "user_group", "op": "add_members", "group_id": moderators, "user_ids": [2]}),
        ]
    );
    // Everyone hears of it.
    assert!(m.events.iter().all(|o| o.users == vec![UserId(1), UserId(2), UserId(3)]));
}

#[test]
fn role_changes_keep_an_owner_and_name_real_users_and_roles() {
    let mut m = acme();
    assert_eq!(
        refused(&mut m, AdminOp::ChangeRole { user: user("1"), role: 400 }),
        "The owner permission cannot be removed from the only organization owner."
    );
    assert_eq!(refused(&mut m, AdminOp::ChangeRole { user: user("2"), role: 400 }), "User already has this role.");
    assert_eq!(refused(&mut m, AdminOp::ChangeRole { user: user("2"), role: 250 }), "Invalid role 250");
    assert_eq!(
        refused(&mut m, AdminOp::ChangeRole { user: user("nobody@acme.test"), role: 400 }),
        "No such user: nobody@acme.test"
    );
    assert_eq!(refused(&mut m, AdminOp::ChangeRole { user: user("99"), role: 400 }), "No such user: 99");
    assert!(m.events.is_empty());
    // With a second owner, the first may step down.
    run(&mut m, AdminOp::ChangeRole { user: user("3"), role: 100 }).unwrap();
    run(&mut m, AdminOp::ChangeRole { user: user("1"), role: 200 }).unwrap();
    assert_eq!(m.state.user(UserId(1)).unwrap().role, Role::Administrator);
}

#[test]
fn deactivation_and_reactivation() {
    let mut m = acme();
    let out = run(&mut m, AdminOp::SetActive { user: user("bob@acme.test"), active: false }).unwrap();
    assert_eq!(out, json!({"user_id": 2, "is_active": false}));
    assert!(!m.state.user(UserId(2)).unwrap().is_active);
    assert_eq!(
        bodies(&m),
        vec![json!({"type": "realm_user", "op": "update", "person": {"user_id": 2, "is_active": false}})]
    );
    assert_eq!(refused(&mut m, AdminOp::SetActive { user: user("2"), active: false }), "User is already deactivated");
    assert_eq!(
        refused(&mut m, AdminOp::SetActive { user: user("1"), active: false }),
        "Cannot deactivate the only organization owner"
    );
    let out = run(&mut m, AdminOp::SetActive { user: user("2"), active: true }).unwrap();
    assert_eq!(out, json!({"user_id": 2, "is_active": true}));
    assert!(m.state.user(UserId(2)).unwrap().is_active);
    assert_eq!(refused(&mut m, AdminOp::SetActive { user: user("2"), active: true }), "User is already active");
}

#[test]
fn new_api_keys_and_passwords() {
    let mut m = acme();
    let old = m.state.user(UserId(2)).unwrap().api_key.clone();
    let out = run(&mut m, AdminOp::ResetApiKey { user: user("2") }).unwrap();
    let key = out["api_key"].as_str().unwrap();
    assert_eq!((out["user_id"].as_i64(), key.len()), (Some(2), 32));
    assert_ne!(key, old);
    assert_eq!(m.state.user(UserId(2)).unwrap().api_key, key);
    assert!(m.auth_published);

    let out =
        run(&mut m, AdminOp::SetPassword { user: user("bob@acme.test"), password_hash: "$argon2id$x".into() }).unwrap();
    assert_eq!(out, json!({"user_id": 2}));
    assert_eq!(m.state.user(UserId(2)).unwrap().password_hash.as_deref(), Some("$argon2id$x"));
    assert!(m.events.is_empty(), "no event for keys and passwords");
    m.state.user_mut(UserId(2)).unwrap().is_bot = true;
    assert_eq!(
        refused(&mut m, AdminOp::SetPassword { user: user("2"), password_hash: "h".into() }),
        "Bots log in with their API key, not a password"
    );
}

#[test]
fn organization_settings_are_decoded_as_patch_realm_decodes_them() {
    let mut m = acme();
    let settings = vec![
        ("name".to_owned(), "Acme Corp".to_owned()),
        ("invite_required".to_owned(), "false".to_owned()),
        ("message_retention_days".to_owned(), "unlimited".to_owned()),
        ("can_create_public_channel_group".to_owned(), "role:administrators".to_owned()),
    ];
    let out = run(&mut m, AdminOp::UpdateSettings { settings }).unwrap();
    assert_eq!(out["changed"], json!({"name": "updated", "invite_required": false}));
    assert_eq!(m.state.realm().name, "Acme Corp");
    let administrators = m.state.system_group_id("role:administrators").unwrap();
    let events = bodies(&m);
    assert_eq!(events[0], json!({"type": "realm", "op": "update", "property": "name", "value": "Acme Corp"}));
    assert_eq!(events[1], json!({"type": "realm", "op": "update", "property": "invite_required", "value": false}));
    assert_eq!(
        events[2],
        json!({"type": "realm", "op": "update_dict", "property": "default",
               "data": {"can_create_public_channel_group": administrators.0}})
    );

    let one = |name: &str, value: &str| AdminOp::UpdateSettings { settings: vec![(name.to_owned(), value.to_owned())] };
    assert_eq!(refused(&mut m, one("invite_required", "maybe")), "Invalid invite_required");
    assert_eq!(refused(&mut m, one("waiting_period_threshold", "soon")), "Invalid waiting_period_threshold");
    assert_eq!(refused(&mut m, one("colour", "blue")), "Unknown organization setting: colour");
    assert_eq!(
        refused(&mut m, one("can_create_public_channel_group", "role:kings")),
        "Invalid can_create_public_channel_group"
    );
    // Owner-only settings pass: the command acts with an owner's rights.
    run(&mut m, one("waiting_period_threshold", "3")).unwrap();
    m.state.set_user_active(UserId(1), false);
    assert_eq!(refused(&mut m, one("name", "X")), "The organization has no active owner");
}

#[test]
fn invitation_links_through_the_invitations_plans() {
    let mut m = acme();
    m.state.put_channel(fixture_tests::channel(ChannelId(7), "general", false, true));
    let link = |role: i64, channels: &[&str], expires: Option<i64>, never: bool| AdminOp::CreateInviteLink {
        role,
        channels: channels.iter().map(|c| c.to_string()).collect(),
        include_default_channels: false,
        expires_in_minutes: expires,
        never_expires: never,
    };
    assert_eq!(refused(&mut m, link(250, &[], None, false)), "Invalid role 250");
    assert_eq!(refused(&mut m, link(400, &["nowhere"], None, false)), "Invalid channel: nowhere");
    assert_eq!(refused(&mut m, link(400, &["general"], Some(0), false)), "expires_in_minutes must be positive");
    assert!(m.events.is_empty());

    // The server's validity by default; the link names the organization.
    let out = run(&mut m, link(400, &["General", "7"], None, false)).unwrap();
    let url = out["link"].as_str().unwrap();
    assert!(url.starts_with("http://acme.localhost:9991/join/") && url.ends_with('/'), "{url}");
    assert_eq!(out["expires_in_minutes"], m.config.invites.validity_minutes);
    let key = url.trim_end_matches('/').rsplit('/').next().unwrap();
    let invite = m.state.invites().by_key(key).unwrap();
    assert_eq!((invite.multiuse, invite.referred_by), (true, UserId(1)));
    assert_eq!(bodies(&m), vec![json!({"type": "invites_changed"})]);
    let out = run(&mut m, link(300, &[], None, true)).unwrap();
    assert_eq!(out["expires_in_minutes"], Value::Null);

    assert_eq!(refused(&mut m, AdminOp::RevokeInviteLink { id: 99 }), "No such invitation");
}
