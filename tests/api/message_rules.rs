//! The rules every message path applies whatever a client sends, over HTTP: search
//! operands and the other narrow operands never reach SQL unsafely (no 500), who may
//! write where (Zulip's `access_stream_for_send_message`, `check_can_send_direct_message`,
//! `validate_recipient_user_profiles`) and the characters Zulip refuses in topics and
//! names (`check_string_is_printable`).

use agora_actors::ids::UserId;
use agora_actors::realm::model::Role;
use agora_actors::realm::users::CreateUser;
use agora_actors::realm::users::NewUser;
use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{error, expect, json, post, register, send, spawn_app, Creds, TestApp, HOST};

async fn get(app: &TestApp, who: &Creds, path: &str, query: &[(&str, &str)]) -> Response {
    app.as_user(who, Method::GET, path).query(query).send().await.unwrap()
}

/// A channel created by the owner (who is subscribed) with `subscribers`.
async fn channel(app: &TestApp, name: &str, invite_only: bool, subscribers: &[&Creds]) -> i64 {
    let mut ids: Vec<i64> = subscribers.iter().map(|c| c.user_id).collect();
    ids.push(app.owner.user_id);
    let (ids, invite_only) = (json!(ids).to_string(), invite_only.to_string());
    let form = [
        ("name", name),
        ("subscribers", ids.as_str()),
        ("invite_only", invite_only.as_str()),
        ("history_public_to_subscribers", "true"),
    ];
    let (status, body) = json(post(app, &app.owner, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// `POST /messages` to a channel.
async fn to_channel(app: &TestApp, who: &Creds, channel: &str, topic: &str, content: &str) -> Response {
    post(app, who, "/messages", &[("type", "channel"), ("to", channel), ("topic", topic), ("content", content)]).await
}

/// `POST /messages` to users by id.
async fn direct(app: &TestApp, who: &Creds, to: &[i64], content: &str) -> Response {
    let to = json!(to).to_string();
    post(app, who, "/messages", &[("type", "direct"), ("to", to.as_str()), ("content", content)]).await
}

/// The id of a message that must be sent.
async fn sent(response: Response) -> i64 {
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// `GET /messages` (newest 100) with `narrow`.
async fn fetch(app: &TestApp, who: &Creds, narrow: &Value) -> Response {
    let narrow = narrow.to_string();
    get(app, who, "/messages", &[("anchor", "newest"), ("num_before", "100"), ("narrow", &narrow)]).await
}

/// The ids `GET /messages` finds for `narrow`.
async fn found(app: &TestApp, who: &Creds, narrow: Value) -> Vec<i64> {
    let (status, body) = json(fetch(app, who, &narrow).await).await;
    assert_eq!(status, 200, "{narrow}: {body}");
    body["messages"].as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap()).collect()
}

fn bad_narrow(desc: &str) -> Value {
    json!({"result": "error", "msg": format!("Invalid narrow operator: {desc}"), "code": "BAD_NARROW"})
}

/// `PATCH /realm` as the owner, which must succeed.
async fn set_realm(app: &TestApp, form: &[(&str, &str)]) {
    let (status, body) = json(send(app, &app.owner, Method::PATCH, "/realm", form).await).await;
    assert_eq!(status, 200, "{body}");
}

/// The id of a system group, from the register data.
async fn system_group(app: &TestApp, name: &str) -> i64 {
    let state = register(app, &app.owner, &[("fetch_event_types", r#"["realm_user_groups"]"#)]).await;
    let groups = state["realm_user_groups"].as_array().unwrap();
    groups.iter().find(|g| g["name"] == name).unwrap()["id"].as_i64().unwrap()
}

/// A generic bot owned by `owner`, made through the realm actor (bots have no endpoint).
async fn bot(app: &TestApp, owner: &Creds, email: &str) -> Creds {
    let new = NewUser {
        bot_type: Some(1),
        bot_owner_id: Some(UserId(owner.user_id)),
        ..NewUser::human(email, "Helper Bot", Role::Member, None)
    };
    let created = app.realm("").addr.send(CreateUser(new)).await.unwrap().unwrap();
    Creds {
        email: email.into(),
        password: String::new(),
        api_key: created.api_key,
        user_id: created.user_id.0,
        host: HOST.into(),
    }
}

/// `POST /typing` in a channel.
async fn typing(app: &TestApp, who: &Creds, stream: i64) -> Response {
    let stream = stream.to_string();
    post(app, who, "/typing", &[("type", "channel"), ("op", "start"), ("stream_id", stream.as_str()), ("topic", "t")])
        .await
}

/// `PATCH /messages/{id}` of the topic, as the owner.
async fn edit_topic(app: &TestApp, id: i64, topic: &str) -> Response {
    send(app, &app.owner, Method::PATCH, &format!("/messages/{id}"), &[("topic", topic)]).await
}

// --- Finding: a NUL (or any control character) in a search operand gave a 500. ---

#[actix_web::test]
async fn search_operands_with_control_characters_are_words_apart_and_never_fail() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    channel(&app, "denmark", false, &[&hamlet]).await;
    let ghost = sent(to_channel(&app, &app.owner, "denmark", "castle", "the ghost walks").await).await;
    let quote = sent(to_channel(&app, &app.owner, "denmark", "castle", "say \"ghost\" and OR NEAR").await).await;

    // Control characters separate words (as PostgreSQL's parser, which Zulip searches
    // with, treats them); a NUL no longer ends the FTS5 query early.
    let search = |operand: &str| json!([{"operator": "search", "operand": operand}]);
    assert_eq!(found(&app, &hamlet, search("ghost\u{0}")).await, vec![ghost, quote]);
    assert_eq!(found(&app, &hamlet, search("\u{0}walks\u{1b}ghost\n")).await, vec![ghost]);
    assert_eq!(found(&app, &hamlet, search("\u{7f}\u{0}\u{1}")).await, Vec::<i64>::new());
    // FTS5 syntax in what the user types is only text.
    assert_eq!(found(&app, &hamlet, search("\"ghost\" OR")).await, vec![quote]);
    assert_eq!(found(&app, &hamlet, search("NEAR(ghost walks) *")).await, Vec::<i64>::new());
    assert_eq!(found(&app, &hamlet, json!([["search", "gho\u{0}st"]])).await, Vec::<i64>::new());

    // The same on the other two endpoints that take a narrow.
    let narrow = search("ghost\u{0}").to_string();
    let msg_ids = json!([ghost]).to_string();
    expect(
        get(&app, &hamlet, "/messages/matches_narrow", &[("msg_ids", &msg_ids), ("narrow", &narrow)]).await,
        200,
        json!({"result": "success", "msg": "", "messages": {ghost.to_string(): {
            "match_content": "<p>the <span class=\"highlight\">ghost</span> walks</p>", "match_subject": "castle"}}}),
    )
    .await;
    let form = [
        ("anchor", "oldest"),
        ("num_before", "0"),
        ("num_after", "10"),
        ("narrow", narrow.as_str()),
        ("op", "add"),
        ("flag", "read"),
    ];
    expect(
        post(&app, &hamlet, "/messages/flags/narrow", &form).await,
        200,
        json!({"result": "success", "msg": "", "processed_count": 2, "updated_count": 2,
               "first_processed_id": ghost, "last_processed_id": quote, "found_oldest": true,
               "found_newest": true, "ignored_because_not_subscribed_channels": []}),
    )
    .await;
}

/// Zulip's `check_required_string` for search operands, while parsing the narrow.
#[actix_web::test]
async fn blank_search_operands_are_refused_as_zulip_refuses_them() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    for operand in [json!(""), json!(" \t\n"), json!("\u{1f}")] {
        let narrow = json!([{"operator": "search", "operand": operand}]);
        expect(fetch(&app, &hamlet, &narrow).await, 400, error("operand cannot be blank.")).await;
    }
    let narrow = json!([{"operator": "search", "operand": 7}]);
    expect(fetch(&app, &hamlet, &narrow).await, 400, error("operand is not a string")).await;
}

#[actix_web::test]
async fn every_narrow_operand_takes_nul_huge_and_negative_values_without_failing() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    channel(&app, "denmark", false, &[&hamlet]).await;
    sent(to_channel(&app, &app.owner, "denmark", "castle", "hello").await).await;
    let long = "x".repeat(2_000);

    for narrow in [
        json!([["topic", "cas\u{0}tle"]]),
        json!([["topic", long]]),
        json!([["search", long]]),
        json!([{"operator": "topic", "operand": 12}]),
        json!([["is", "dm"], ["topic", "\u{0}"]]),
        json!([{"operator": "near", "operand": "\u{0}"}]),
        json!([{"operator": "with", "operand": -9_223_372_036_854_775_808i64}]),
        json!([{"operator": "search", "operand": "x", "negated": true}, ["search", "y"]]),
    ] {
        let (status, body) = json(fetch(&app, &hamlet, &narrow).await).await;
        assert_eq!(status, 200, "{narrow}: {body}");
    }
    let refused = [
        (json!([["channel", "den\u{0}mark"]]), "unknown channel"),
        (json!([{"operator": "channel", "operand": 18_446_744_073_709_551_615u64}]), "unknown channel"),
        (json!([{"operator": "channel", "operand": -1}]), "unknown channel"),
        (json!([["sender", "\u{0}"]]), "unknown user"),
        (json!([{"operator": "sender", "operand": 18_446_744_073_709_551_615u64}]), "unknown user"),
        (json!([{"operator": "dm", "operand": [-1]}]), "unknown user"),
        (json!([["dm", "a@b,\u{0}"]]), "unknown user"),
        (json!([{"operator": "dm-including", "operand": 1e300}]), "unknown user"),
        (json!([["is", "\u{0}"]]), "unknown 'is' operand \u{0}"),
        (json!([["has", long]]), &format!("unknown 'has' operand {long}")),
        (json!([["\u{0}", "x"]]), "unknown operator \u{0}"),
    ];
    for (narrow, desc) in refused {
        expect(fetch(&app, &hamlet, &narrow).await, 400, bad_narrow(desc)).await;
    }
}

/// Zulip's `by_id`: `str(operand).isdigit()`, no sign, no fraction.
#[actix_web::test]
async fn message_id_operands_are_digits_only() {
    let app = spawn_app().await;
    channel(&app, "denmark", false, &[]).await;
    let id = sent(to_channel(&app, &app.owner, "denmark", "castle", "hello").await).await;
    assert_eq!(found(&app, &app.owner, json!([["id", id.to_string()]])).await, vec![id]);
    assert_eq!(found(&app, &app.owner, json!([{"operator": "id", "operand": id}])).await, vec![id]);
    for narrow in [
        json!([{"operator": "id", "operand": -1}]),
        json!([["id", "-1"]]),
        json!([["id", "+1"]]),
        json!([["id", "99999999999999999999"]]),
        json!([{"operator": "id", "operand": 1.5}]),
        json!([["id", "\u{0}"]]),
    ] {
        expect(fetch(&app, &app.owner, &narrow).await, 400, bad_narrow("Invalid message ID")).await;
    }
}

// --- Finding: a guest could post to a public channel they are not subscribed to. ---

fn not_authorized(name: &str) -> Value {
    error(&format!("Not authorized to send to channel '{name}'"))
}

#[actix_web::test]
async fn guests_write_only_to_channels_they_are_subscribed_to() {
    let app = spawn_app().await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let public = channel(&app, "public", false, &[]).await;
    channel(&app, "guests", false, &[&guest]).await;
    expect(to_channel(&app, &guest, "public", "t", "hi").await, 400, not_authorized("public")).await;
    sent(to_channel(&app, &guest, "guests", "t", "hi").await).await;
    sent(to_channel(&app, &member, "public", "t", "hi").await).await;
    // Typing needs access to the channel first, as in Zulip's typing view.
    expect(typing(&app, &guest, public).await, 400, error("Invalid channel ID")).await;
}

#[actix_web::test]
async fn a_bot_writes_to_private_channels_its_owner_is_subscribed_to() {
    let app = spawn_app().await;
    let keeper = app.create_user("", "keeper@agora.test", "Keeper", 400).await;
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let helper = bot(&app, &keeper, "helper-bot@agora.test").await;
    channel(&app, "kept", true, &[&keeper]).await;
    sent(to_channel(&app, &helper, "kept", "t", "beep").await).await;
    expect(to_channel(&app, &member, "kept", "t", "hi").await, 400, not_authorized("kept")).await;
}

#[actix_web::test]
async fn groups_granting_content_access_may_write_where_history_is_shared() {
    let app = spawn_app().await;
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let shared = channel(&app, "shared", true, &[]).await;
    expect(to_channel(&app, &member, "shared", "t", "hi").await, 400, not_authorized("shared")).await;
    let grant = json!({"new": {"direct_members": [member.user_id], "direct_subgroups": []}}).to_string();
    let form = [("can_subscribe_group", grant.as_str())];
    let (status, body) = json(send(&app, &app.owner, Method::PATCH, &format!("/streams/{shared}"), &form).await).await;
    assert_eq!(status, 200, "{body}");
    sent(to_channel(&app, &member, "shared", "t", "hi").await).await;
    expect(to_channel(&app, &guest, "shared", "t", "hi").await, 400, not_authorized("shared")).await;
    // Not where history is protected.
    let form = [("history_public_to_subscribers", "false")];
    let (status, body) = json(send(&app, &app.owner, Method::PATCH, &format!("/streams/{shared}"), &form).await).await;
    assert_eq!(status, 200, "{body}");
    expect(to_channel(&app, &member, "shared", "t", "hi").await, 400, not_authorized("shared")).await;
}

#[actix_web::test]
async fn nobody_types_in_an_archived_channel() {
    let app = spawn_app().await;
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let archived = channel(&app, "old", false, &[&member]).await;
    assert_eq!(typing(&app, &member, archived).await.status(), 200);
    let (status, body) = json(send(&app, &app.owner, Method::DELETE, &format!("/streams/{archived}"), &[]).await).await;
    assert_eq!(status, 200, "{body}");
    expect(typing(&app, &member, archived).await, 400, error("Invalid channel ID")).await;
    expect(to_channel(&app, &member, "old", "t", "hi").await, 400, not_authorized("old")).await;
}

#[actix_web::test]
async fn direct_messages_follow_the_organizations_permission_groups() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let helper = bot(&app, &alice, "helper-bot@agora.test").await;
    let admins = system_group(&app, "role:administrators").await;
    let nobody = system_group(&app, "role:nobody").await;

    // Only conversations with an administrator in them may go on.
    let setting = |id: i64| json!({"new": id}).to_string();
    set_realm(&app, &[("direct_message_permission_group", &setting(admins))]).await;
    let unauthorized = error("This conversation does not include any users who can authorize it.");
    expect(direct(&app, &alice, &[bob.user_id], "hi").await, 400, unauthorized.clone()).await;
    expect(direct(&app, &alice, &[bob.user_id, guest.user_id], "hi").await, 400, unauthorized).await;
    sent(direct(&app, &alice, &[app.owner.user_id], "hi").await).await;
    // Oneself, bots, and messages sent by bots are exempt.
    sent(direct(&app, &alice, &[alice.user_id], "note").await).await;
    sent(direct(&app, &alice, &[helper.user_id], "hi bot").await).await;
    sent(direct(&app, &helper, &[bob.user_id], "beep").await).await;
    set_realm(&app, &[("direct_message_permission_group", &setting(nobody))]).await;
    let disabled = error("Direct messages are disabled in this organization.");
    expect(direct(&app, &app.owner, &[bob.user_id], "hi").await, 400, disabled).await;
}

/// Who may not start conversations may still answer in existing ones.
#[actix_web::test]
async fn only_the_initiator_group_starts_direct_message_conversations() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let admins = system_group(&app, "role:administrators").await;
    let setting = |id: i64| json!({"new": id}).to_string();
    set_realm(&app, &[("direct_message_initiator_group", &setting(admins))]).await;
    let initiate = error("You do not have permission to initiate direct message conversations.");
    expect(direct(&app, &alice, &[bob.user_id], "hi").await, 400, initiate.clone()).await;
    sent(direct(&app, &app.owner, &[alice.user_id, bob.user_id], "group").await).await;
    sent(direct(&app, &alice, &[bob.user_id, app.owner.user_id], "answer").await).await;
    expect(direct(&app, &alice, &[bob.user_id, guest.user_id], "new group").await, 400, initiate).await;
    sent(direct(&app, &app.owner, &[bob.user_id], "one to one").await).await;
    sent(direct(&app, &bob, &[app.owner.user_id], "answer").await).await;
}

#[actix_web::test]
async fn deactivated_users_bots_included_receive_no_direct_messages() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let helper = bot(&app, &alice, "helper-bot@agora.test").await;
    sent(direct(&app, &app.owner, &[helper.user_id], "hi bot").await).await;
    let (_, user) = json(get(&app, &app.owner, &format!("/users/{}", helper.user_id), &[]).await).await;
    let bot_email = user["user"]["email"].as_str().unwrap().to_owned();
    let (_, user) = json(get(&app, &app.owner, &format!("/users/{}", alice.user_id), &[]).await).await;
    let alice_email = user["user"]["email"].as_str().unwrap().to_owned();
    // Deactivating Alice deactivates her bot too.
    let (status, body) =
        json(send(&app, &app.owner, Method::DELETE, &format!("/users/{}", alice.user_id), &[]).await).await;
    assert_eq!(status, 200, "{body}");
    let gone = |email: &str| error(&format!("'{email}' is no longer using Zulip."));
    expect(direct(&app, &app.owner, &[helper.user_id], "still there?").await, 400, gone(&bot_email)).await;
    expect(direct(&app, &app.owner, &[alice.user_id], "still there?").await, 400, gone(&alice_email)).await;
}

// --- Finding: control characters were accepted in topics on send and edit. ---

#[actix_web::test]
async fn topics_with_characters_zulip_refuses_are_refused_on_send_and_edit() {
    let app = spawn_app().await;
    channel(&app, "denmark", false, &[]).await;
    let cases = [
        ("Test\n\rTopic", "Invalid character in topic, at position 5!"),
        ("Test\u{fffe}Topic", "Invalid character in topic, at position 5!"),
        ("\u{7}", "Invalid character in topic, at position 1!"),
        ("a\u{0}b", "Invalid character in topic, at position 2!"),
        ("  é\u{1b}[31m", "Invalid character in topic, at position 2!"),
        ("\u{fdd0}", "Invalid character in topic, at position 1!"),
        ("x\u{10ffff}", "Invalid character in topic, at position 2!"),
    ];
    for (topic, msg) in cases {
        expect(to_channel(&app, &app.owner, "denmark", topic, "hello").await, 400, error(msg)).await;
    }
    // Stripped first: surrounding whitespace (and Python's separators) is no character of
    // the topic; a refused character past the length limit still counts.
    sent(to_channel(&app, &app.owner, "denmark", "\u{1f} \tfine\n", "hello").await).await;
    let long = format!("{}\u{7}", "t".repeat(70));
    let position = error("Invalid character in topic, at position 71!");
    expect(to_channel(&app, &app.owner, "denmark", &long, "hello").await, 400, position).await;
}

/// Zulip's order: the addressee's topic, then the content, then the channel.
#[actix_web::test]
async fn the_topic_and_the_content_are_checked_before_the_channel() {
    let app = spawn_app().await;
    expect(
        to_channel(&app, &app.owner, "nowhere", "a\u{0}", "b\u{0}").await,
        400,
        error("Invalid character in topic, at position 2!"),
    )
    .await;
    expect(
        to_channel(&app, &app.owner, "nowhere", "a", "b\u{0}").await,
        400,
        error("Message must not contain null bytes"),
    )
    .await;
}

#[actix_web::test]
async fn edits_and_moves_refuse_topics_with_characters_zulip_refuses() {
    let app = spawn_app().await;
    channel(&app, "denmark", false, &[]).await;
    let id = sent(to_channel(&app, &app.owner, "denmark", "fine", "hello").await).await;
    let long = format!("{}\u{7}", "t".repeat(70));
    let position = error("Invalid character in topic, at position 71!");
    expect(edit_topic(&app, id, "editing\nfun").await, 400, error("Invalid character in topic, at position 8!")).await;
    expect(edit_topic(&app, id, "\u{7}").await, 400, error("Invalid character in topic, at position 1!")).await;
    expect(edit_topic(&app, id, &long).await, 400, position).await;
    expect(edit_topic(&app, id, "fine").await, 400, error("Nothing to change")).await;
    let renamed = json!({"result": "success", "msg": "", "detached_uploads": []});
    expect(edit_topic(&app, id, " renamed ").await, 200, renamed).await;
}

#[actix_web::test]
async fn sending_by_name_checks_the_name_as_a_channel_name() {
    let app = spawn_app().await;
    channel(&app, "denmark", false, &[]).await;
    // Sending by name checks the name as a channel name, after stripping it.
    sent(to_channel(&app, &app.owner, "  denmark\n", "t", "hello").await).await;
    expect(
        to_channel(&app, &app.owner, "den\u{7}mark", "t", "hello").await,
        400,
        error("Invalid character in channel name, at position 4."),
    )
    .await;
    expect(to_channel(&app, &app.owner, " \n", "t", "hello").await, 400, error("Channel name can't be empty.")).await;
}

#[actix_web::test]
async fn full_names_refuse_non_characters_as_well_as_control_characters() {
    let app = spawn_app().await;
    for name in ["Ada\u{fffe}", "Ada\u{7}x", "Ada\u{fdef}"] {
        let response = send(&app, &app.owner, Method::PATCH, "/settings", &[("full_name", name)]).await;
        expect(response, 400, error("Invalid characters in name!")).await;
    }
}

// --- Edits: who may move messages (Zulip's `can_edit_topic`, `can_move_messages_*`). ---

/// An organization whose members may move nothing by themselves: the realm's move groups
/// are `role:nobody`; Alice posted in `general`; `other` is a second channel.
async fn no_movers() -> (TestApp, Creds, Creds, i64, i64, i64) {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let admin = app.create_user("", "admin@agora.test", "Admin", 200).await;
    let nobody = system_group(&app, "role:nobody").await;
    let setting = json!({"new": nobody}).to_string();
    set_realm(&app, &[("can_move_messages_between_topics_group", &setting)]).await;
    set_realm(&app, &[("can_move_messages_between_channels_group", &setting)]).await;
    let general = channel(&app, "general", false, &[&alice, &admin]).await;
    let other = channel(&app, "other", false, &[&alice, &admin]).await;
    let id = sent(to_channel(&app, &alice, "general", "lunch", "hi").await).await;
    (app, alice, admin, general, other, id)
}

fn edited() -> Value {
    json!({"result": "success", "msg": "", "detached_uploads": []})
}

#[actix_web::test]
async fn administrators_move_messages_whatever_the_organizations_move_groups() {
    let (app, alice, admin, _, other, id) = no_movers().await;
    let other = other.to_string();
    expect(
        send(&app, &alice, Method::PATCH, &format!("/messages/{id}"), &[("topic", "dinner")]).await,
        400,
        error("You don't have permission to edit this message"),
    )
    .await;
    expect(send(&app, &admin, Method::PATCH, &format!("/messages/{id}"), &[("topic", "dinner")]).await, 200, edited())
        .await;
    let form = [("stream_id", other.as_str())];
    expect(
        send(&app, &alice, Method::PATCH, &format!("/messages/{id}"), &form).await,
        400,
        error("You don't have permission to move this message"),
    )
    .await;
    expect(send(&app, &admin, Method::PATCH, &format!("/messages/{id}"), &form).await, 200, edited()).await;
}

#[actix_web::test]
async fn channel_administrators_move_messages_out_of_and_within_their_channel() {
    let (app, alice, _, general, other, id) = no_movers().await;
    let grant = json!({"new": {"direct_members": [alice.user_id], "direct_subgroups": []}}).to_string();
    let form = [("can_administer_channel_group", grant.as_str())];
    let (status, body) = json(send(&app, &app.owner, Method::PATCH, &format!("/streams/{general}"), &form).await).await;
    assert_eq!(status, 200, "{body}");
    expect(send(&app, &alice, Method::PATCH, &format!("/messages/{id}"), &[("topic", "dinner")]).await, 200, edited())
        .await;
    let other = other.to_string();
    let form = [("stream_id", other.as_str())];
    expect(send(&app, &alice, Method::PATCH, &format!("/messages/{id}"), &form).await, 200, edited()).await;
}

#[actix_web::test]
async fn the_target_channels_move_group_lets_one_rename_the_topic_on_the_way() {
    let (app, alice, _, general, other, id) = no_movers().await;
    let grant = json!({"new": {"direct_members": [alice.user_id], "direct_subgroups": []}}).to_string();
    let allow = |channel: i64, setting: &'static str| {
        let (grant, app) = (grant.clone(), &app);
        async move {
            let form = [(setting, grant.as_str())];
            let response = send(app, &app.owner, Method::PATCH, &format!("/streams/{channel}"), &form).await;
            let (status, body) = json(response).await;
            assert_eq!(status, 200, "{body}");
        }
    };
    allow(general, "can_move_messages_out_of_channel_group").await;
    let target = other.to_string();
    let form = [("stream_id", target.as_str()), ("topic", "dinner")];
    let path = format!("/messages/{id}");
    expect(
        send(&app, &alice, Method::PATCH, &path, &form).await,
        400,
        error("You don't have permission to edit this message"),
    )
    .await;
    allow(other, "can_move_messages_within_channel_group").await;
    expect(send(&app, &alice, Method::PATCH, &path, &form).await, 200, edited()).await;
}
