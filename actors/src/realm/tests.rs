//! Tests of the realm state and its operations, against a real (temporary) database.

use serde_json::{json, Value};

use super::format::UserDictOptions;
use super::model::{EmailVisibility, Role, SystemGroup};
use super::organization::{create_realm, NewRealm};
use super::state::RealmState;
use super::users::{create_user, regenerate_api_key, regenerate_own_api_key, NewUser};
use crate::auth::{AuthSnapshot, KeyRejection};
use crate::config::ServerConfig;
use crate::error::ErrorCode;
use crate::ids::UserId;
use crate::store::Store;

const T0: i64 = 1_795_238_460;

pub(super) fn setup() -> (tempfile::TempDir, Store, ServerConfig, RealmState) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let config = ServerConfig::default();
    let new = NewRealm {
        subdomain: "acme".into(),
        name: "Acme".into(),
        owner: NewUser::human("boss@acme.test", "The Boss", Role::Owner, None),
    };
    let (_, state) = create_realm(&store, &config, new, T0).unwrap();
    (dir, store, config, state)
}

pub(super) fn add(state: &mut RealmState, store: &Store, config: &ServerConfig, email: &str, role: Role) -> UserId {
    let name = format!("User {}", email.split('@').next().unwrap_or(""));
    let new = NewUser::human(email, &name, role, None);
    create_user(state, store, config, new, T0).unwrap().0.user_id
}

#[test]
fn a_new_realm_has_the_system_groups_and_its_owner() {
    let (_dir, _store, _config, state) = setup();
    let names: Vec<&str> = state.groups().map(|g| g.name.as_str()).collect();
    for name in [
        SystemGroup::INTERNET,
        SystemGroup::EVERYONE,
        SystemGroup::MEMBERS,
        SystemGroup::FULL_MEMBERS,
        SystemGroup::MODERATORS,
        SystemGroup::ADMINISTRATORS,
        SystemGroup::OWNERS,
        SystemGroup::NOBODY,
    ] {
        assert!(names.contains(&name), "missing {name}");
    }
    let owner = state.user_by_delivery_email("BOSS@acme.test").unwrap();
    assert_eq!(owner.role, Role::Owner);
    assert_eq!(owner.email, "boss@acme.test");
    let owners = state.system_group_id(SystemGroup::OWNERS).unwrap();
    let admins = state.system_group_id(SystemGroup::ADMINISTRATORS).unwrap();
    let internet = state.system_group_id(SystemGroup::INTERNET).unwrap();
    let nobody = state.system_group_id(SystemGroup::NOBODY).unwrap();
    assert_eq!(state.group(owners).unwrap().members.iter().copied().collect::<Vec<_>>(), vec![owner.id]);
    // Owners are administrators (and everything below) through the subgroup chain only.
    assert!(state.group(admins).unwrap().members.is_empty());
    assert!(state.is_member_recursive(admins, owner.id));
    assert!(state.is_member_recursive(internet, owner.id));
    assert!(!state.is_member_recursive(nobody, owner.id));
}

#[test]
fn roles_map_to_direct_system_group_membership() {
    let (_dir, store, config, mut state) = setup();
    let member = add(&mut state, &store, &config, "m@acme.test", Role::Member);
    let guest = add(&mut state, &store, &config, "g@acme.test", Role::Guest);
    let moderator = add(&mut state, &store, &config, "mod@acme.test", Role::Moderator);
    let direct = |name: &str| state.group(state.system_group_id(name).unwrap()).unwrap().members.clone();
    assert!(direct(SystemGroup::MEMBERS).contains(&member));
    assert!(direct(SystemGroup::FULL_MEMBERS).contains(&member));
    assert!(direct(SystemGroup::EVERYONE).contains(&guest));
    assert!(direct(SystemGroup::MODERATORS).contains(&moderator));
    let members = state.system_group_id(SystemGroup::MEMBERS).unwrap();
    assert!(state.is_member_recursive(members, moderator));
    assert!(!state.is_member_recursive(members, guest));
}

#[test]
fn state_survives_a_reload_from_the_database() {
    let (_dir, store, config, mut state) = setup();
    add(&mut state, &store, &config, "m@acme.test", Role::Member);
    let conn = store.conn().unwrap();
    let reloaded = RealmState::load_by_subdomain(&conn, "acme").unwrap().unwrap();
    assert_eq!(reloaded.users().cloned().collect::<Vec<_>>(), state.users().cloned().collect::<Vec<_>>());
    assert_eq!(reloaded.groups().cloned().collect::<Vec<_>>(), state.groups().cloned().collect::<Vec<_>>());
    assert_eq!(reloaded.realm(), state.realm());
}

#[test]
fn duplicate_and_invalid_accounts_are_refused_without_changes() {
    let (_dir, store, config, mut state) = setup();
    let before = state.users().count();
    let dup = NewUser::human("Boss@ACME.test", "Another Boss", Role::Member, None);
    let err = create_user(&mut state, &store, &config, dup, T0).unwrap_err();
    assert_eq!((err.code, err.msg.as_str()), (Some(ErrorCode::BadRequest), "Email is already in use."));
    let bad = NewUser::human("not-an-email", "Someone", Role::Member, None);
    assert_eq!(create_user(&mut state, &store, &config, bad, T0).unwrap_err().msg, "Bad name or username");
    let short = NewUser::human("x@acme.test", "X", Role::Member, None);
    assert_eq!(create_user(&mut state, &store, &config, short, T0).unwrap_err().msg, "Name too short!");
    assert_eq!(state.users().count(), before);
}

#[test]
fn taken_subdomains_are_refused() {
    let (_dir, store, config, _state) = setup();
    let again = NewRealm {
        subdomain: "acme".into(),
        name: "Acme 2".into(),
        owner: NewUser::human("x@acme.test", "Someone", Role::Owner, None),
    };
    let err = create_realm(&store, &config, again, T0).unwrap_err();
    assert_eq!(err.msg, "Subdomain already in use. Please choose a different one.");
}

#[test]
fn creating_a_user_tells_every_active_user() {
    let (_dir, store, config, mut state) = setup();
    let owner = state.user_by_delivery_email("boss@acme.test").unwrap().id;
    let new = NewUser::human("new@acme.test", "New Person", Role::Member, None);
    let (created, events) = create_user(&mut state, &store, &config, new, T0).unwrap();
    let add = &events[0];
    assert_eq!(add.users, vec![owner, created.user_id]);
    assert_eq!(add.event.kind(), "realm_user");
    assert_eq!(add.event.op(), Some("add"));
    let person = &add.event.body()["person"];
    assert_eq!(person["user_id"], json!(created.user_id));
    assert_eq!(person["full_name"], json!("New Person"));
    assert_eq!(person["delivery_email"], json!("new@acme.test"));
    assert_eq!(person["profile_data"], json!({}));
    // Then add_members for role:members and role:fullmembers.
    let groups: Vec<Value> = events[1..].iter().map(|o| o.event.body()["group_id"].clone()).collect();
    let members = state.system_group_id(SystemGroup::MEMBERS).unwrap();
    let full = state.system_group_id(SystemGroup::FULL_MEMBERS).unwrap();
    assert_eq!(groups, vec![json!(members), json!(full)]);
    assert_eq!(events[1].event.body()["user_ids"], json!([created.user_id]));
}

#[test]
fn hidden_emails_give_fake_api_addresses_and_null_delivery_emails() {
    let (_dir, store, config, mut state) = setup();
    // Gravatars, whose URL a client may compute from a real address.
    let mut realm = state.realm().clone();
    realm.settings.insert("default_avatar_source".into(), json!("G"));
    state =
        RealmState::new(realm, state.users().cloned().collect(), state.groups().map(|g| (g.id, g.clone())).collect());
    let viewer = add(&mut state, &store, &config, "viewer@acme.test", Role::Member);
    let admin = add(&mut state, &store, &config, "admin@acme.test", Role::Administrator);
    // Hide the next user's address from non-administrators.
    let mut realm = state.realm().clone();
    realm.user_defaults.insert("email_address_visibility".into(), json!(EmailVisibility::Administrators as i64));
    state =
        RealmState::new(realm, state.users().cloned().collect(), state.groups().map(|g| (g.id, g.clone())).collect());
    let hidden = add(&mut state, &store, &config, "hidden@acme.test", Role::Member);
    let target = state.user(hidden).unwrap();
    assert_eq!(target.email, format!("user{hidden}@acme.localhost"));

    let opts = UserDictOptions { client_gravatar: true, include_custom_profile_fields: false };
    let as_member = state.user_dict(state.user(viewer).unwrap(), target, opts);
    assert_eq!(as_member["delivery_email"], Value::Null);
    assert_eq!(as_member["email"], json!(format!("user{hidden}@acme.localhost")));
    // The client cannot compute a gravatar from a fake address, so the URL is given.
    assert!(as_member["avatar_url"].as_str().unwrap().starts_with("https://secure.gravatar.com/avatar/"));
    assert!(!as_member.contains_key("profile_data"));
    let as_admin = state.user_dict(state.user(admin).unwrap(), target, opts);
    assert_eq!(as_admin["delivery_email"], json!("hidden@acme.test"));
    // A visible address lets the client compute the gravatar itself.
    let as_member_of_admin = state.user_dict(state.user(viewer).unwrap(), state.user(admin).unwrap(), opts);
    assert_eq!(as_member_of_admin["avatar_url"], Value::Null);
}

#[test]
fn regenerated_keys_replace_the_old_ones_in_the_auth_index() {
    let (_dir, store, _config, mut state) = setup();
    let owner = state.user_by_delivery_email("boss@acme.test").unwrap().clone();
    let snapshot = AuthSnapshot::of(&state);
    assert_eq!(snapshot.check_api_key("BOSS@acme.test", &owner.api_key).unwrap().user_id, owner.id);
    let new_key = regenerate_api_key(&mut state, &store, owner.id).unwrap();
    assert_ne!(new_key, owner.api_key);
    let snapshot = AuthSnapshot::of(&state);
    assert_eq!(snapshot.check_api_key("boss@acme.test", &owner.api_key).unwrap_err(), KeyRejection::Unknown);
    assert!(snapshot.check_api_key("boss@acme.test", &new_key).is_ok());
    match snapshot.check_api_key("boss@acme.test", "short") {
        Err(KeyRejection::Refused(e)) => assert_eq!(e.msg, "Malformed API key"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn deactivated_accounts_are_refused_and_announced() {
    let (_dir, store, config, mut state) = setup();
    let user = add(&mut state, &store, &config, "m@acme.test", Role::Member);
    let key = state.user(user).unwrap().api_key.clone();
    let events = super::users::set_active(&mut state, &store, user, false).unwrap().events;
    assert_eq!(events[0].event.body()["person"], json!({"user_id": user, "is_active": false}));
    assert!(!events[0].users.contains(&user));
    match AuthSnapshot::of(&state).check_api_key("m@acme.test", &key) {
        Err(KeyRejection::Refused(e)) => {
            assert_eq!((e.status, e.msg.as_str()), (401, "Account is deactivated"))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        super::users::set_active(&mut state, &store, user, false).unwrap_err().msg,
        "User is already deactivated"
    );
    super::users::set_active(&mut state, &store, user, true).unwrap();
    assert!(AuthSnapshot::of(&state).check_api_key("m@acme.test", &key).is_ok());
}

#[test]
fn incoming_webhook_bots_may_not_use_the_api_and_bots_keep_their_keys() {
    let (_dir, store, config, mut state) = setup();
    let owner = state.user_by_delivery_email("boss@acme.test").unwrap().id;
    let bot = NewUser {
        bot_type: Some(2),
        bot_owner_id: Some(owner),
        ..NewUser::human("hook-bot@acme.test", "Hook Bot", Role::Member, None)
    };
    let (created, _) = create_user(&mut state, &store, &config, bot, T0).unwrap();
    match AuthSnapshot::of(&state).check_api_key("hook-bot@acme.test", &created.api_key) {
        Err(KeyRejection::Refused(e)) => assert_eq!(e.msg, "This API is not available to incoming webhook bots."),
        other => panic!("{other:?}"),
    }
    let err = regenerate_own_api_key(&mut state, &store, created.user_id).unwrap_err();
    assert_eq!(err.msg, "This endpoint does not accept bot requests.");
    // Bots always show their real address, whatever the organization's default.
    let bot = state.user(created.user_id).unwrap();
    assert_eq!(bot.email, "hook-bot@acme.test");
    let dict = state.user_dict(
        state.user(owner).unwrap(),
        bot,
        UserDictOptions { client_gravatar: true, include_custom_profile_fields: true },
    );
    assert_eq!((dict["bot_type"].clone(), dict["bot_owner_id"].clone()), (json!(2), json!(owner)));
    assert!(!dict.contains_key("profile_data"));
}

/// Organizations built in memory, with no database: for the tests of plans and of their
/// application to the state.
pub(super) mod memory {
    use crate::ids::UserId;
    use crate::realm::fixture_tests;
    use crate::realm::model::Role;
    use crate::realm::state::RealmState;

    pub(crate) const T0: i64 = super::T0;

    /// "acme": the eight system groups (ids 1 to 8, chained as `create_realm` chains them)
    /// and its owner `boss@acme.test`, "The Boss" (id 1).
    pub(crate) fn state() -> RealmState {
        let mut state = fixture_tests::organization();
        let owner = user(&mut state, "boss@acme.test", Role::Owner);
        state.user_mut(owner).unwrap().full_name = "The Boss".into();
        state
    }

    /// Adds an active human of `role` with the next id, named after its address ("User m"
    /// for `m@acme.test`), in its role's system groups.
    pub(crate) fn user(state: &mut RealmState, email: &str, role: Role) -> UserId {
        let id = UserId(state.users().map(|u| u.id.0).max().unwrap_or(0) + 1);
        let name = format!("User {}", email.split('@').next().unwrap_or(""));
        fixture_tests::human(state, id, email, &name, &format!("{:0>32}", id.0), role)
    }
}
