//! New members against a real database: the command line's path on a stopped server, and
//! the accounts Zulip's tests of realm creation expect.

use crate::realm::model::{Role, SystemBot};
use crate::realm::onboarding::create_member;
use crate::realm::state::RealmState;
use crate::realm::tests::setup;
use crate::realm::users::NewUser;
use crate::store;

#[test]
fn a_new_organization_has_its_system_bots_outside_its_users() {
    let (_dir, store, _config, state) = setup();
    let bots: Vec<&str> = state.system_bots().map(|b| b.full_name.as_str()).collect();
    assert_eq!(bots, ["Email Gateway", "Notification Bot", "Welcome Bot"]);
    assert!(state.system_bots().all(|b| b.is_system_bot()));
    assert_eq!(state.users().count(), 1);
    // They load again as system bots; their addresses are taken.
    let loaded = RealmState::load(&store.conn().unwrap(), state.realm().id).unwrap().unwrap();
    assert_eq!(loaded.system_bots().count(), 3);
    assert!(loaded.email_taken(SystemBot::WELCOME_BOT, None));
}

#[test]
fn a_member_created_offline_gets_the_welcome_messages() {
    let (_dir, store, config, mut state) = setup();
    let new = NewUser::human("newbie@acme.test", "Newbie", Role::Member, None);
    let created = create_member(&mut state, &store, &config, new, crate::clock::now()).unwrap();
    let conn = store.conn().unwrap();
    // Welcome Bot's message is theirs (the organization announces no signups by default).
    assert!(store::messages::max_message_id(&conn, created.user_id).unwrap() > 0);
    assert!(state.last_message_id().0 > 0);
}
