//! Lists of users that name someone many times, and what one event queue may hold or hand
//! out at once: repeated ids collapse (each person once, in the order first given) in
//! every list of users the API takes; a poll's reply carries a bounded number of events;
//! a queue past its backlog limit is removed and answers `BAD_EVENT_QUEUE_ID`.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    expect, json, poll_now, post, queue_id, register, send, spawn_app, spawn_app_with, success, Creds, TestApp, Watch,
};

fn person(who: &Creds) -> Value {
    json!({"user_id": who.user_id, "email": who.email})
}

/// `who`'s id `times` times, as a JSON list.
fn repeated(who: &Creds, times: usize) -> String {
    json!(vec![who.user_id; times]).to_string()
}

/// A typing notification of `who` to themself (one event on their queues).
async fn typing_to_self(app: &TestApp, who: &Creds, op: &str) {
    let to = json!([who.user_id]).to_string();
    expect(post(app, who, "/typing", &[("op", op), ("to", &to)]).await, 200, success()).await;
}

#[actix_web::test]
async fn typing_to_one_person_named_thousands_of_times_is_one_event_naming_them_once() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let mut w_alice = Watch::new(&app, &alice, r#"["typing"]"#).await;
    let mut w_bob = Watch::new(&app, &bob, r#"["typing"]"#).await;
    let to = repeated(&bob, 3000);
    expect(post(&app, &alice, "/typing", &[("op", "start"), ("to", &to)]).await, 200, success()).await;
    let event = json!({"type": "typing", "message_type": "direct", "op": "start", "sender": person(&alice),
                       "recipients": [person(&bob), person(&alice)]});
    assert_eq!(w_bob.events(&app).await, vec![event.clone()]);
    assert_eq!(w_alice.events(&app).await, vec![event]);
    // The sender named among the others, many times, is still listed once.
    let mixed = json!([alice.user_id, bob.user_id, alice.user_id, bob.user_id]).to_string();
    expect(post(&app, &alice, "/typing", &[("op", "stop"), ("to", &mixed)]).await, 200, success()).await;
    let event = json!({"type": "typing", "message_type": "direct", "op": "stop", "sender": person(&alice),
                       "recipients": [person(&alice), person(&bob)]});
    assert_eq!(w_bob.events(&app).await, vec![event]);
    app.stop().await;
}

#[actix_web::test]
async fn a_poll_reply_is_bounded_and_the_next_poll_gets_the_rest() {
    let app = spawn_app_with(|s| s.queues.max_reply_events = 2).await;
    let owner = app.owner.clone();
    let qid = queue_id(&register(&app, &owner, &[("event_types", r#"["typing"]"#)]).await);
    for op in ["start", "stop", "start", "stop", "start"] {
        typing_to_self(&app, &owner, op).await;
    }
    let event = |op: &str, id: i64| {
        json!({"type": "typing", "message_type": "direct", "op": op, "sender": person(&owner),
               "recipients": [person(&owner)], "id": id})
    };
    let reply = |events: Vec<Value>| json!({"result": "success", "msg": "", "events": events});
    expect(
        poll_now(&app, &owner, &qid, -1).send().await.unwrap(),
        200,
        reply(vec![event("start", 0), event("stop", 1)]),
    )
    .await;
    expect(
        poll_now(&app, &owner, &qid, 1).send().await.unwrap(),
        200,
        reply(vec![event("start", 2), event("stop", 3)]),
    )
    .await;
    expect(poll_now(&app, &owner, &qid, 3).send().await.unwrap(), 200, reply(vec![event("start", 4)])).await;
    expect(poll_now(&app, &owner, &qid, 4).send().await.unwrap(), 200, reply(vec![])).await;
    app.stop().await;
}

#[actix_web::test]
async fn a_queue_past_its_backlog_is_removed_and_answers_bad_event_queue_id() {
    let app = spawn_app_with(|s| s.queues.max_backlog_events = 3).await;
    let owner = app.owner.clone();
    let qid = queue_id(&register(&app, &owner, &[("event_types", r#"["typing"]"#)]).await);
    let other = queue_id(&register(&app, &owner, &[("event_types", r#"["typing"]"#)]).await);
    for op in ["start", "stop", "start"] {
        typing_to_self(&app, &owner, op).await;
    }
    // The other queue keeps up (acknowledges); the first does not.
    let (status, body) = json(poll_now(&app, &owner, &other, -1).send().await.unwrap()).await;
    assert_eq!((status, body["events"].as_array().unwrap().len()), (200, 3));
    expect(
        poll_now(&app, &owner, &other, 2).send().await.unwrap(),
        200,
        json!({"result": "success", "msg": "", "events": []}),
    )
    .await;
    typing_to_self(&app, &owner, "stop").await;
    let bad = json!({"result": "error", "msg": format!("Bad event queue ID: {qid}"), "queue_id": qid,
                     "code": "BAD_EVENT_QUEUE_ID"});
    expect(poll_now(&app, &owner, &qid, -1).send().await.unwrap(), 400, bad).await;
    let (status, body) = json(poll_now(&app, &owner, &other, 2).send().await.unwrap()).await;
    assert_eq!((status, body["events"][0]["id"].clone()), (200, json!(3)));
    app.stop().await;
}

// --- Each list of users collapses repeats. ---

#[actix_web::test]
async fn direct_message_recipients_are_each_named_once() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let mut w_bob = Watch::new(&app, &bob, r#"["message"]"#).await;
    let by_email = json!(vec![bob.email.as_str(); 500]).to_string();
    for to in [repeated(&bob, 500), by_email, format!("{0},{0},{0}", bob.email)] {
        let form = [("type", "direct"), ("to", to.as_str()), ("content", "hi")];
        let (status, body) = json(post(&app, &alice, "/messages", &form).await).await;
        assert_eq!(status, 200, "{body}");
        let events = w_bob.events(&app).await;
        assert_eq!(events.len(), 1, "one event per message");
        let ids: Vec<&Value> =
            events[0]["message"]["display_recipient"].as_array().unwrap().iter().map(|p| &p["id"]).collect();
        assert_eq!(ids, [&json!(alice.user_id), &json!(bob.user_id)], "by email");
    }
    app.stop().await;
}

#[actix_web::test]
async fn subscription_principals_are_each_named_once() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let mut w_bob = Watch::new(&app, &bob, r#"["subscription"]"#).await;
    let mut w_alice = Watch::new(&app, &alice, r#"["subscription"]"#).await;
    let principals = repeated(&bob, 500);
    let form = [("subscriptions", r#"[{"name": "general"}]"#), ("principals", principals.as_str())];
    let subscribed = json!({"result": "success", "msg": "", "subscribed": {bob.user_id.to_string(): ["general"]},
                            "already_subscribed": {}, "new_subscription_messages_sent": true});
    expect(post(&app, &alice, "/users/me/subscriptions", &form).await, 200, subscribed).await;
    let added = w_bob.events(&app).await;
    assert_eq!((added.len(), added[0]["op"].clone()), (1, json!("add")));
    assert_eq!(added[0]["subscriptions"][0]["subscribers"], json!([bob.user_id]));
    // By email, repeated: already subscribed, once.
    let emails = json!(vec![bob.email.as_str(); 500]).to_string();
    let form = [("subscriptions", r#"[{"name": "general"}]"#), ("principals", emails.as_str())];
    let already = json!({"result": "success", "msg": "", "subscribed": {},
                         "already_subscribed": {bob.user_id.to_string(): ["general"]},
                         "new_subscription_messages_sent": true});
    expect(post(&app, &alice, "/users/me/subscriptions", &form).await, 200, already).await;
    // Removing: one removal, one event.
    let form = [("subscriptions", r#"["general"]"#), ("principals", principals.as_str())];
    let removed = json!({"result": "success", "msg": "", "removed": ["general"], "not_removed": []});
    expect(send(&app, &app.owner, Method::DELETE, "/users/me/subscriptions", &form).await, 200, removed).await;
    assert_eq!(
        w_bob.events(&app).await,
        vec![json!({"type": "subscription", "op": "remove", "subscriptions": [{"name": "general", "stream_id": 1}]})]
    );
    // Alice (not subscribed) sees Bob join and leave the public channel, once each.
    let peer = |op: &str| json!({"type": "subscription", "op": op, "stream_ids": [1], "user_ids": [bob.user_id]});
    assert_eq!(w_alice.events(&app).await, vec![peer("peer_add"), peer("peer_remove")]);
    // A channel created with repeated subscribers has each once.
    let form = [("name", "second"), ("subscribers", principals.as_str())];
    let (status, body) = json(post(&app, &alice, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    let (_, members) = json(app.as_user(&alice, Method::GET, "/streams/2/members").send().await.unwrap()).await;
    assert_eq!(members["subscribers"], json!([bob.user_id]));
    app.stop().await;
}

#[actix_web::test]
async fn group_members_and_subgroups_are_each_named_once() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let mut watch = Watch::new(&app, &bob, r#"["user_group"]"#).await;
    let form = [("name", "support"), ("description", "d"), ("members", &repeated(&alice, 500))];
    let (status, body) = json(post(&app, &alice, "/user_groups/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    let id = body["group_id"].as_i64().unwrap();
    let form = [("name", "inner"), ("description", "d"), ("members", "[]")];
    let inner = json(post(&app, &alice, "/user_groups/create", &form).await).await.1["group_id"].as_i64().unwrap();
    let created = watch.events(&app).await;
    assert_eq!(created[0]["group"]["members"], json!([alice.user_id]));

    let members = format!("/user_groups/{id}/members");
    let bobs = repeated(&bob, 500);
    let inners = json!(vec![inner; 500]).to_string();
    for (path, key) in [(&members, "add"), (&members, "delete")] {
        expect(post(&app, &alice, path, &[(key, &bobs)]).await, 200, success()).await;
    }
    let subgroups = format!("/user_groups/{id}/subgroups");
    for key in ["add", "delete"] {
        expect(post(&app, &alice, &subgroups, &[(key, &inners)]).await, 200, success()).await;
    }
    expect(post(&app, &alice, &members, &[("add_subgroups", &inners)]).await, 200, success()).await;
    let ev = |op: &str, key: &str, ids: Value| json!({"type": "user_group", "op": op, "group_id": id, key: ids});
    assert_eq!(
        watch.events(&app).await,
        vec![
            ev("add_members", "user_ids", json!([bob.user_id])),
            ev("remove_members", "user_ids", json!([bob.user_id])),
            ev("add_subgroups", "direct_subgroup_ids", json!([inner])),
            ev("remove_subgroups", "direct_subgroup_ids", json!([inner])),
            ev("add_subgroups", "direct_subgroup_ids", json!([inner])),
        ]
    );
    app.stop().await;
}

#[actix_web::test]
async fn a_profile_field_named_many_times_is_changed_and_announced_once() {
    let app = spawn_app().await;
    let member = app.create_user("", "m@agora.test", "Member", 400).await;
    let form = [("name", "Editor"), ("field_type", "1"), ("hint", "")];
    let (status, body) = json(post(&app, &app.owner, "/realm/profile_fields", &form).await).await;
    assert_eq!(status, 200, "{body}");
    let id = body["id"].as_i64().unwrap();
    let mut watch = Watch::new(&app, &app.owner, r#"["realm_user"]"#).await;
    // Alternating values: applied one after the other they would each change the field.
    let editors = ["vim", "emacs"];
    let mut data: Vec<Value> = (0..1000).map(|i| json!({"id": id, "value": editors[i % 2]})).collect();
    data.push(json!({"id": id, "value": "ed"}));
    let data = Value::Array(data).to_string();
    expect(send(&app, &member, Method::PATCH, "/users/me/profile_data", &[("data", &data)]).await, 200, success())
        .await;
    let update = |field: Value| json!({"type": "realm_user", "op": "update", "person": {"user_id": member.user_id, "custom_profile_field": field}});
    assert_eq!(watch.events(&app).await, vec![update(json!({"id": id, "value": "ed", "rendered_value": "<p>ed</p>"}))]);
    let ids = json!(vec![id; 1000]).to_string();
    expect(send(&app, &member, Method::DELETE, "/users/me/profile_data", &[("data", &ids)]).await, 200, success())
        .await;
    assert_eq!(watch.events(&app).await, vec![update(json!({"id": id, "value": null}))]);
    app.stop().await;
}
