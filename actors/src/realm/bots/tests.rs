//! Bots: plans applied to a state built in memory (no database).

use serde_json::json;

use super::ops::{access_bot, plan_create_bot, BotRequest};
use super::update::{plan_update_bot, BotUpdate};
use crate::config::ServerConfig;
use crate::ids::UserId;
use crate::realm::bot_data::{bot_dict, bot_owner_user_ids, realm_bots};
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::tests::memory;
use crate::realm::Change;

fn request(short_name: &str, bot_type: i64) -> BotRequest {
    BotRequest {
        full_name: format!("Bot {short_name}"),
        short_name: short_name.into(),
        bot_type,
        interface_type: 1,
        ..Default::default()
    }
}

/// A bot of `owner`, applied to the state (the id the write would give).
fn bot(state: &mut RealmState, owner: UserId, email: &str) -> UserId {
    let id = memory::user(state, email, Role::Member);
    let user = state.user_mut(id).unwrap();
    user.is_bot = true;
    user.bot_type = Some(1);
    user.bot_owner_id = Some(owner);
    id
}

#[test]
fn creation_is_checked_in_zulips_order() {
    let mut state = memory::state();
    let member = memory::user(&mut state, "m@acme.test", Role::Member);
    let guest = memory::user(&mut state, "g@acme.test", Role::Guest);
    let config = ServerConfig::default();
    let refusal = |who: UserId, req: BotRequest| plan_create_bot(&state, &config, who, req, 0).err().unwrap().msg;
    assert_eq!(refusal(guest, request("x", 1)), "Not allowed for guest users");
    assert_eq!(refusal(member, request(" ", 1)), "Bad name or username");
    assert_eq!(
        refusal(member, BotRequest { full_name: "User m".into(), ..request("x", 1) }),
        "Name is already in use!"
    );
    assert_eq!(refusal(member, request("x", 4)), "Embedded bots are not enabled.");
    assert_eq!(refusal(member, request("x", 9)), "Invalid bot type");
    assert_eq!(refusal(member, BotRequest { interface_type: 5, ..request("x", 3) }), "Invalid interface type");
    let hook = BotRequest { service_name: Some("github".into()), ..request("x", 2) };
    assert_eq!(refusal(member, hook), "Invalid integration 'github'.");
    assert!(plan_create_bot(&state, &config, member, request("x", 1), 0).is_ok());
}

#[test]
fn owners_and_administrators_hear_of_bots_and_see_them() {
    let mut state = memory::state();
    let boss = UserId(1);
    let member = memory::user(&mut state, "m@acme.test", Role::Member);
    let other = memory::user(&mut state, "o@acme.test", Role::Member);
    let id = bot(&mut state, member, "b-bot@acme.test");
    let b = state.user(id).unwrap().clone();
    assert_eq!(bot_owner_user_ids(&state, &b), vec![boss, member]);
    let dict = bot_dict(&state, &b);
    // Since feature level 474 a bot object carries no owner, email or activity.
    assert_eq!(
        (dict.get("owner_id"), &dict["services"], &dict["default_sending_stream"]),
        (None, &json!([]), &json!(null))
    );
    assert_eq!(realm_bots(&state, state.user(other).unwrap()), json!([]));
    assert_eq!(realm_bots(&state, state.user(member).unwrap()).as_array().unwrap().len(), 1);
    assert_eq!(realm_bots(&state, state.user(boss).unwrap()).as_array().unwrap().len(), 1);
    // Only its owner and administrators administer it.
    assert_eq!(access_bot(&state, state.user(other).unwrap(), id).err().unwrap().msg, "Insufficient permission");
    assert_eq!(access_bot(&state, state.user(member).unwrap(), other).err().unwrap().msg, "No such bot");
    assert!(access_bot(&state, state.user(boss).unwrap(), id).is_ok());
}

#[test]
fn an_owner_change_tells_each_side_what_it_needs() {
    let mut state = memory::state();
    let member = memory::user(&mut state, "m@acme.test", Role::Member);
    let other = memory::user(&mut state, "o@acme.test", Role::Member);
    let id = bot(&mut state, member, "b-bot@acme.test");
    let update = BotUpdate { bot_owner_id: Some(other.0), service_interface: 1, ..Default::default() };
    let applied = plan_update_bot(&state, &ServerConfig::default(), member, id, update).unwrap().apply(&mut state);
    let kinds: Vec<(String, Vec<UserId>)> = applied
        .events
        .iter()
        .map(|o| {
            (
                format!("{}/{}", o.event.body()["type"].as_str().unwrap(), o.event.body()["op"].as_str().unwrap()),
                o.users.clone(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("realm_bot/delete".to_owned(), vec![member]),
            ("realm_bot/add".to_owned(), vec![other]),
            // No `realm_bot` update to administrators since feature level 474.
            ("realm_user/update".to_owned(), vec![UserId(1), member, other, id]),
        ]
    );
    assert_eq!(state.user(id).unwrap().bot_owner_id, Some(other));
    assert_eq!(applied.output["bot_owner"], json!("o@acme.test"));
}
