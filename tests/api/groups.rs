//! User groups: `/user_groups*`, the `user_group` events and the `realm_user_groups` data set.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use agora_actors::ids::UserId;
use agora_actors::realm::users::SetUserActive;

use crate::helpers::{error, expect, json, post, register, spawn_app, spawn_app_at, success, Creds, TestApp, Watch};

/// System group ids of the root organization (created in `SystemGroup::DEFINITIONS` order).
const OWNERS: i64 = 1;
const ADMINISTRATORS: i64 = 2;
const MODERATORS: i64 = 3;
const MEMBERS: i64 = 5;
const EVERYONE: i64 = 6;
const INTERNET: i64 = 7;
const NOBODY: i64 = 8;

async fn patch(app: &TestApp, who: &Creds, path: &str, form: &[(&str, &str)]) -> Response {
    app.as_user(who, Method::PATCH, path).form(form).send().await.unwrap()
}

async fn get(app: &TestApp, who: &Creds, path: &str) -> (u16, Value) {
    json(app.as_user(who, Method::GET, path).send().await.unwrap()).await
}

/// Creates a group as `who` with extra form fields; returns its id.
async fn create(app: &TestApp, who: &Creds, name: &str, members: &str, extra: &[(&str, &str)]) -> i64 {
    let mut form = vec![("name", name), ("description", "A group"), ("members", members)];
    form.extend_from_slice(extra);
    let (status, body) = json(post(app, who, "/user_groups/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["group_id"].as_i64().unwrap()
}

/// A group as `GET /user_groups` lists it.
async fn listed(app: &TestApp, who: &Creds, id: i64) -> Value {
    let (status, body) = get(app, who, "/user_groups?include_deactivated_groups=true").await;
    assert_eq!(status, 200);
    body["user_groups"].as_array().unwrap().iter().find(|g| g["id"] == id).cloned().unwrap_or(Value::Null)
}

async fn users(app: &TestApp) -> (Creds, Creds, Creds) {
    let alice = app.create_user("", "alice@agora.test", "Alice Adams", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob Brown", 400).await;
    let guest = app.create_user("", "gus@agora.test", "Gus Guest", 600).await;
    (alice, bob, guest)
}

#[actix_web::test]
async fn python_client_create_and_the_group_object() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    let members = format!("[{}, {}]", alice.user_id, bob.user_id);
    // `create_user_group` of the Python client: form-encoded, lists as JSON.
    let response = post(
        &app,
        &app.owner,
        "/user_groups/create",
        &[("name", "golden-group"), ("description", "golden group"), ("members", &members)],
    )
    .await;
    expect(response, 200, json!({"result": "success", "msg": "", "group_id": 9})).await;

    let (status, body) = get(&app, &app.owner, "/user_groups").await;
    assert_eq!(status, 200);
    let groups = body["user_groups"].as_array().unwrap();
    assert_eq!(groups.len(), 9);
    let date_created = groups[8]["date_created"].clone();
    assert!(date_created.as_i64().unwrap() > 1_700_000_000);
    let expected = json!({
        "id": 9,
        "name": "golden-group",
        "creator_id": 1,
        "date_created": date_created,
        "description": "golden group",
        "members": [alice.user_id, bob.user_id],
        "direct_subgroup_ids": [],
        "is_system_group": false,
        "can_add_members_group": {"direct_members": [1], "direct_subgroups": []},
        "can_join_group": NOBODY,
        "can_leave_group": EVERYONE,
        "can_manage_group": {"direct_members": [1], "direct_subgroups": []},
        "can_mention_group": EVERYONE,
        "can_remove_members_group": NOBODY,
        "deactivated": false,
    });
    assert_eq!(groups[8], expected);
    let owners = json!({
        "id": OWNERS, "name": "role:owners", "creator_id": null, "date_created": groups[0]["date_created"],
        "description": "Owners of this organization", "members": [1], "direct_subgroup_ids": [],
        "is_system_group": true, "can_add_members_group": NOBODY, "can_join_group": NOBODY,
        "can_leave_group": NOBODY, "can_manage_group": NOBODY, "can_mention_group": NOBODY,
        "can_remove_members_group": NOBODY, "deactivated": false,
    });
    assert_eq!(groups[0], owners);

    // The register data set shows the same objects.
    let state = register(&app, &app.owner, &[("fetch_event_types", r#"["realm_user_groups"]"#)]).await;
    assert_eq!(state["realm_user_groups"], body["user_groups"]);
    app.stop().await;
}

#[actix_web::test]
async fn create_with_settings_and_subgroups_sends_add_then_add_subgroups_to_everyone() {
    let app = spawn_app().await;
    let (alice, bob, guest) = users(&app).await;
    let other_org = app.create_realm("acme", "boss@acme.test").await;
    let mut watchers = Vec::new();
    for who in [&app.owner, &alice, &guest] {
        watchers.push(Watch::new(&app, who, r#"["user_group"]"#).await);
    }
    let mut outsider = Watch::new(&app, &other_org, r#"["user_group"]"#).await;

    let manage = format!(r#"{{"direct_members": [{}], "direct_subgroups": [{MODERATORS}]}}"#, bob.user_id);
    let members = format!("[{}]", alice.user_id);
    let subgroups = format!("[{ADMINISTRATORS}]");
    let id = create(
        &app,
        &alice,
        "support",
        &members,
        &[
            ("subgroups", &subgroups),
            ("can_manage_group", &manage),
            ("can_mention_group", r#"{"direct_members": [], "direct_subgroups": [3]}"#),
        ],
    )
    .await;
    let group = listed(&app, &alice, id).await;
    for watch in &mut watchers {
        let events = watch.events(&app).await;
        let expected = json!([
            {"type": "user_group", "op": "add", "group": {
                "name": "support", "creator_id": alice.user_id, "date_created": group["date_created"],
                "members": [alice.user_id], "description": "A group", "id": id, "is_system_group": false,
                "direct_subgroup_ids": [],
                "can_add_members_group": {"direct_members": [alice.user_id], "direct_subgroups": []},
                "can_join_group": NOBODY, "can_leave_group": EVERYONE,
                "can_manage_group": {"direct_members": [bob.user_id], "direct_subgroups": [MODERATORS]},
                "can_mention_group": MODERATORS, "can_remove_members_group": NOBODY, "deactivated": false,
            }},
            {"type": "user_group", "op": "add_subgroups", "group_id": id, "direct_subgroup_ids": [ADMINISTRATORS]},
        ]);
        assert_eq!(Value::Array(events), expected, "{}", watch.who.email);
    }
    assert_eq!(outsider.events(&app).await, Vec::<Value>::new());
    assert_eq!(group["direct_subgroup_ids"], json!([ADMINISTRATORS]));
    app.stop().await;
}

/// A refused creation: name, members, other fields, message.
type Case<'a> = (&'a str, &'a str, Vec<(&'a str, String)>, &'a str);

#[actix_web::test]
async fn create_refuses_bad_names_members_and_settings() {
    let app = spawn_app().await;
    let (alice, _, guest) = users(&app).await;
    create(&app, &alice, "support", "[]", &[]).await;
    let long = "x".repeat(101);
    let cases: Vec<Case<'_>> = vec![
        ("  ", "[]", vec![], "User group name can't be empty!"),
        (&long, "[]", vec![], "User group name cannot exceed 100 characters."),
        ("@team", "[]", vec![], "User group name cannot start with '@'."),
        ("role:team", "[]", vec![], "User group name cannot start with 'role:'."),
        ("user:x", "[]", vec![], "User group name cannot start with 'user:'."),
        ("stream:x", "[]", vec![], "User group name cannot start with 'stream:'."),
        ("channel:x", "[]", vec![], "User group name cannot start with 'channel:'."),
        ("support", "[]", vec![], "User group 'support' already exists."),
        ("new", "[1111]", vec![], "Invalid user ID: 1111"),
        ("new", "[]", vec![("subgroups", "[123456]".into())], "Invalid user group ID: 123456"),
        (
            "new",
            "[]",
            vec![("can_manage_group", INTERNET.to_string())],
            "'can_manage_group' setting cannot be set to 'role:internet' group.",
        ),
        (
            "new",
            "[]",
            vec![("can_manage_group", EVERYONE.to_string())],
            "'can_manage_group' setting cannot be set to 'role:everyone' group.",
        ),
        (
            "new",
            "[]",
            vec![("can_mention_group", INTERNET.to_string())],
            "'can_mention_group' setting cannot be set to 'role:internet' group.",
        ),
        ("new", "[]", vec![("can_join_group", "4242".into())], "Invalid user group"),
        (
            "new",
            "[]",
            vec![("can_join_group", r#"{"direct_members": [999], "direct_subgroups": []}"#.into())],
            "Invalid user ID: 999",
        ),
        ("new", "[]", vec![("can_join_group", r#"{"direct_members": []}"#.into())], "Invalid can_join_group"),
    ];
    for (name, members, extra, msg) in cases {
        let mut form = vec![("name", name), ("description", ""), ("members", members)];
        form.extend(extra.iter().map(|(k, v)| (*k, v.as_str())));
        expect(post(&app, &alice, "/user_groups/create", &form).await, 400, error(msg)).await;
    }
    let response = post(&app, &alice, "/user_groups/create", &[("name", "x"), ("description", "")]).await;
    expect(response, 400, json!({"result": "error", "msg": "Missing 'members' argument", "var_name": "members", "code": "REQUEST_VARIABLE_MISSING"})).await;
    let form = [("name", "g"), ("description", ""), ("members", "[]")];
    expect(post(&app, &guest, "/user_groups/create", &form).await, 400, error("Not allowed for guest users")).await;
    let (_, body) = get(&app, &alice, "/user_groups").await;
    assert_eq!(body["user_groups"].as_array().unwrap().len(), 9);
    app.stop().await;
}

#[actix_web::test]
async fn update_name_description_and_settings_with_the_old_value_check() {
    let app = spawn_app().await;
    let (alice, bob, guest) = users(&app).await;
    let id = create(&app, &alice, "support", "[]", &[]).await;
    create(&app, &alice, "taken", "[]", &[]).await;
    let path = format!("/user_groups/{id}");
    let mut watch = Watch::new(&app, &bob, r#"["user_group"]"#).await;

    expect(patch(&app, &alice, &path, &[]).await, 400, error("No new data supplied")).await;
    expect(patch(&app, &bob, &path, &[("name", "x")]).await, 400, error("Insufficient permission")).await;
    expect(patch(&app, &guest, &path, &[("name", "x")]).await, 400, error("Not allowed for guest users")).await;
    expect(patch(&app, &alice, "/user_groups/4242", &[("name", "x")]).await, 400, error("Invalid user group")).await;
    let sys = format!("/user_groups/{MEMBERS}");
    expect(patch(&app, &app.owner, &sys, &[("name", "x")]).await, 400, error("Insufficient permission")).await;
    expect(patch(&app, &alice, &path, &[("name", "taken")]).await, 400, error("User group 'taken' already exists."))
        .await;
    let mismatch = format!(r#"{{"new": {MODERATORS}, "old": {EVERYONE}}}"#);
    let response = patch(&app, &alice, &path, &[("can_join_group", &mismatch)]).await;
    expect(response, 400, json!({"result": "error", "msg": "'old' value does not match the expected value.", "code": "EXPECTATION_MISMATCH"})).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());

    let join = format!(r#"{{"new": {{"direct_members": [], "direct_subgroups": [{MODERATORS}]}}, "old": {NOBODY}}}"#);
    let manage = format!(r#"{{"new": {{"direct_members": [{}], "direct_subgroups": []}}}}"#, alice.user_id);
    let form =
        [("name", "helpers"), ("description", "New text"), ("can_join_group", &join), ("can_manage_group", &manage)];
    expect(patch(&app, &alice, &path, &form).await, 200, success()).await;
    let update = |data: Value| json!({"type": "user_group", "op": "update", "group_id": id, "data": data});
    // The unchanged can_manage_group sends nothing.
    assert_eq!(
        watch.events(&app).await,
        vec![
            update(json!({"name": "helpers"})),
            update(json!({"description": "New text"})),
            update(json!({"can_join_group": MODERATORS})),
        ]
    );
    let group = listed(&app, &bob, id).await;
    assert_eq!((group["name"].clone(), group["can_join_group"].clone()), (json!("helpers"), json!(MODERATORS)));

    // The organization's can_manage_all_groups (owners) may change any group.
    let response = patch(&app, &app.owner, &path, &[("can_manage_group", r#"{"new": 4242}"#)]).await;
    expect(response, 400, error("Invalid user group")).await;
    let give = format!(r#"{{"new": {{"direct_members": [{}], "direct_subgroups": []}}}}"#, bob.user_id);
    expect(patch(&app, &app.owner, &path, &[("can_manage_group", &give)]).await, 200, success()).await;
    expect(patch(&app, &alice, &path, &[("description", "mine")]).await, 400, error("Insufficient permission")).await;
    expect(patch(&app, &bob, &path, &[("description", "mine")]).await, 200, success()).await;
    app.stop().await;
}

#[actix_web::test]
async fn membership_permissions_messages_and_events() {
    let app = spawn_app().await;
    let (alice, bob, guest) = users(&app).await;
    let id = create(&app, &alice, "support", "[]", &[]).await;
    let path = format!("/user_groups/{id}/members");
    let mut watch = Watch::new(&app, &guest, r#"["user_group"]"#).await;
    let me = |c: &Creds| format!("[{}]", c.user_id);

    expect(
        post(&app, &alice, &path, &[]).await,
        400,
        error("Nothing to do. Specify at least one of \"add\", \"delete\", \"add_subgroups\" or \"delete_subgroups\"."),
    )
    .await;
    // Joining needs can_join_group (nobody by default) or can_add_members_group.
    expect(post(&app, &bob, &path, &[("add", &me(&bob))]).await, 400, error("Insufficient permission")).await;
    expect(post(&app, &guest, &path, &[("add", &me(&guest))]).await, 400, error("Not allowed for guest users")).await;
    expect(post(&app, &alice, &path, &[("add", "[4242]")]).await, 400, error("Invalid user ID: 4242")).await;
    // `update_user_group_members` of the Python client.
    let both = format!("[{}, {}]", alice.user_id, bob.user_id);
    expect(post(&app, &alice, &path, &[("add", &both)]).await, 200, success()).await;
    let already = format!("User {} is already a member of this group", bob.user_id);
    expect(post(&app, &alice, &path, &[("add", &me(&bob))]).await, 400, error(&already)).await;
    // Leaving needs can_leave_group (everyone by default).
    expect(post(&app, &bob, &path, &[("delete", &me(&bob))]).await, 200, success()).await;
    let missing = format!("There is no member '{}' in this user group", bob.user_id);
    expect(post(&app, &alice, &path, &[("delete", &me(&bob))]).await, 400, error(&missing)).await;
    // Removing others needs can_remove_members_group (nobody) or can_manage_group.
    expect(post(&app, &bob, &path, &[("delete", &me(&alice))]).await, 400, error("Insufficient permission")).await;
    let open = format!(r#"{{"new": {MEMBERS}}}"#);
    expect(patch(&app, &alice, &format!("/user_groups/{id}"), &[("can_join_group", &open)]).await, 200, success())
        .await;
    expect(post(&app, &bob, &path, &[("add", &me(&bob))]).await, 200, success()).await;
    // A failing step undoes the whole request.
    let form = [("delete", me(&bob)), ("add", me(&alice))];
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let already = format!("User {} is already a member of this group", alice.user_id);
    expect(post(&app, &alice, &path, &form).await, 400, error(&already)).await;
    let (_, body) = get(&app, &alice, &format!("/user_groups/{id}/members")).await;
    assert_eq!(body["members"], json!([alice.user_id, bob.user_id]));
    let sys = format!("/user_groups/{MEMBERS}/members");
    expect(post(&app, &app.owner, &sys, &[("add", &me(&guest))]).await, 400, error("Insufficient permission")).await;

    let ev =
        |op: &str, user: &Creds| json!({"type": "user_group", "op": op, "group_id": id, "user_ids": [user.user_id]});
    let mut expected = vec![
        json!({"type": "user_group", "op": "add_members", "group_id": id, "user_ids": [alice.user_id, bob.user_id]}),
    ];
    expected.push(ev("remove_members", &bob));
    expected.push(json!({"type": "user_group", "op": "update", "group_id": id, "data": {"can_join_group": MEMBERS}}));
    expected.push(ev("add_members", &bob));
    assert_eq!(watch.events(&app).await, expected);
    app.stop().await;
}

#[actix_web::test]
async fn subgroups_recursion_and_cycles() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    let outer = create(&app, &alice, "outer", &format!("[{}]", alice.user_id), &[]).await;
    let inner = create(&app, &alice, "inner", &format!("[{}]", bob.user_id), &[]).await;
    let leaf = create(&app, &alice, "leaf", "[]", &[]).await;
    let mut watch = Watch::new(&app, &bob, r#"["user_group"]"#).await;

    let path = |id: i64| format!("/user_groups/{id}/subgroups");
    expect(
        post(&app, &alice, &path(outer), &[]).await,
        400,
        error("Nothing to do. Specify at least one of \"add\" or \"delete\"."),
    )
    .await;
    expect(post(&app, &alice, &path(outer), &[("add", &format!("[{inner}]"))]).await, 200, success()).await;
    expect(
        post(&app, &alice, &format!("/user_groups/{inner}/members"), &[("add_subgroups", &format!("[{leaf}]"))]).await,
        200,
        success(),
    )
    .await;
    let msg = format!("User group {inner} is already a subgroup of this group.");
    expect(post(&app, &alice, &path(outer), &[("add", &format!("[{inner}]"))]).await, 400, error(&msg)).await;
    let msg = format!("User group {leaf} is already a subgroup of one of the passed subgroups.");
    expect(post(&app, &alice, &path(leaf), &[("add", &format!("[{outer}]"))]).await, 400, error(&msg)).await;
    let msg = format!("User group {leaf} is already a subgroup of one of the passed subgroups.");
    expect(post(&app, &alice, &path(leaf), &[("add", &format!("[{leaf}]"))]).await, 400, error(&msg)).await;
    expect(post(&app, &alice, &path(outer), &[("add", "[4242]")]).await, 400, error("Invalid user group ID: 4242"))
        .await;
    let msg = format!("User group {leaf} is not a subgroup of this group.");
    expect(post(&app, &alice, &path(outer), &[("delete", &format!("[{leaf}]"))]).await, 400, error(&msg)).await;
    expect(
        post(&app, &bob, &path(outer), &[("add", &format!("[{leaf}]"))]).await,
        400,
        error("Insufficient permission"),
    )
    .await;

    let (_, body) = get(&app, &bob, &format!("/user_groups/{outer}/members")).await;
    assert_eq!(body, json!({"result": "success", "msg": "", "members": [alice.user_id, bob.user_id]}));
    let (_, body) = get(&app, &bob, &format!("/user_groups/{outer}/members?direct_member_only=true")).await;
    assert_eq!(body["members"], json!([alice.user_id]));
    let (_, body) = get(&app, &bob, &format!("/user_groups/{outer}/members/{}", bob.user_id)).await;
    assert_eq!(body, json!({"result": "success", "msg": "", "is_user_group_member": true}));
    let (_, body) =
        get(&app, &bob, &format!("/user_groups/{outer}/members/{}?direct_member_only=true", bob.user_id)).await;
    assert_eq!(body["is_user_group_member"], json!(false));
    let (status, body) = get(&app, &bob, &format!("/user_groups/{outer}/members/4242")).await;
    assert_eq!((status, body), (400, error("No such user")));
    let (_, body) = get(&app, &bob, &format!("/user_groups/{outer}/subgroups")).await;
    assert_eq!(body, json!({"result": "success", "msg": "", "subgroups": [inner, leaf]}));
    let (_, body) = get(&app, &bob, &format!("/user_groups/{outer}/subgroups?direct_subgroup_only=true")).await;
    assert_eq!(body["subgroups"], json!([inner]));
    let (_, body) = get(&app, &bob, &format!("/user_groups/{MEMBERS}/members")).await;
    assert_eq!(body["members"], json!([1, alice.user_id, bob.user_id]));
    let (status, body) = get(&app, &bob, "/user_groups/4242/members").await;
    assert_eq!((status, body), (400, error("Invalid user group")));

    expect(post(&app, &alice, &path(outer), &[("delete", &format!("[{inner}]"))]).await, 200, success()).await;
    let sub = |op: &str, group: i64, ids: Value| json!({"type": "user_group", "op": op, "group_id": group, "direct_subgroup_ids": ids});
    assert_eq!(
        watch.events(&app).await,
        vec![
            sub("add_subgroups", outer, json!([inner])),
            sub("add_subgroups", inner, json!([leaf])),
            sub("remove_subgroups", outer, json!([inner])),
        ]
    );
    app.stop().await;
}

#[actix_web::test]
async fn deactivation_objections_events_and_reactivation() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    let target = create(&app, &alice, "target", "[]", &[]).await;
    let parent = create(&app, &alice, "parent", "[]", &[("subgroups", &format!("[{target}]"))]).await;
    let setting = format!(r#"{{"direct_members": [{}], "direct_subgroups": [{target}]}}"#, bob.user_id);
    let user =
        create(&app, &alice, "user", "[]", &[("can_mention_group", &setting), ("can_join_group", &target.to_string())])
            .await;
    let deactivate = format!("/user_groups/{target}/deactivate");

    expect(post(&app, &bob, &deactivate, &[]).await, 400, error("Insufficient permission")).await;
    let response = post(&app, &alice, &deactivate, &[]).await;
    expect(
        response,
        400,
        json!({
            "result": "error", "msg": "Cannot deactivate user group in use.",
            "objections": [
                {"type": "subgroup", "supergroup_ids": [parent]},
                {"type": "user_group", "group_id": user, "settings": ["can_join_group", "can_mention_group"]},
            ],
            "code": "CANNOT_DEACTIVATE_GROUP_IN_USE",
        }),
    )
    .await;
    expect(
        post(&app, &app.owner, &format!("/user_groups/{MEMBERS}/deactivate"), &[]).await,
        400,
        error("Insufficient permission"),
    )
    .await;
    expect(post(&app, &alice, "/user_groups/4242/deactivate", &[]).await, 400, error("Invalid user group")).await;

    // Deactivated groups stop counting as users of the group.
    for id in [parent, user] {
        expect(post(&app, &alice, &format!("/user_groups/{id}/deactivate"), &[]).await, 200, success()).await;
    }
    let mut modern = Watch::new(&app, &bob, r#"["user_group"]"#).await;
    let mut legacy = Watch::with_form(&app, &bob, &[("event_types", r#"["user_group"]"#)]).await;
    expect(post(&app, &alice, &deactivate, &[]).await, 200, success()).await;
    expect(post(&app, &alice, &deactivate, &[]).await, 400, error("User group is deactivated.")).await;
    let update = |data: Value| json!({"type": "user_group", "op": "update", "group_id": target, "data": data});
    assert_eq!(modern.events(&app).await, vec![update(json!({"deactivated": true}))]);
    assert_eq!(legacy.events(&app).await, vec![json!({"type": "user_group", "op": "remove", "group_id": target})]);

    let (_, body) = get(&app, &bob, "/user_groups").await;
    assert!(body["user_groups"].as_array().unwrap().iter().all(|g| g["id"] != target));
    assert_eq!(listed(&app, &bob, target).await["deactivated"], json!(true));
    let (status, body) = get(&app, &bob, &format!("/user_groups/{target}/members")).await;
    assert_eq!((status, body), (400, error("User group is deactivated.")));
    let form = [("name", "n"), ("description", ""), ("members", "[]"), ("can_join_group", &target.to_string())];
    expect(post(&app, &alice, "/user_groups/create", &form).await, 400, error("User group is deactivated.")).await;

    // Renames of a deactivated group reach only clients that show deactivated groups.
    expect(patch(&app, &alice, &format!("/user_groups/{target}"), &[("name", "renamed")]).await, 200, success()).await;
    assert_eq!(modern.events(&app).await, vec![update(json!({"name": "renamed"}))]);
    assert_eq!(legacy.events(&app).await, Vec::<Value>::new());

    expect(patch(&app, &alice, &format!("/user_groups/{target}"), &[("deactivated", "false")]).await, 200, success())
        .await;
    assert_eq!(modern.events(&app).await, vec![update(json!({"deactivated": false}))]);
    let readded = legacy.events(&app).await;
    assert_eq!(readded.len(), 1);
    assert_eq!(readded[0]["op"], json!("add"));
    assert_eq!(readded[0]["group"], listed(&app, &bob, target).await);
    app.stop().await;
}

#[actix_web::test]
async fn guests_cannot_read_groups_and_delete_is_not_a_method() {
    let app = spawn_app().await;
    let (alice, _, guest) = users(&app).await;
    let id = create(&app, &alice, "support", "[]", &[]).await;
    let (status, body) = get(&app, &guest, "/user_groups").await;
    assert_eq!((status, body), (400, error("Not allowed for guest users")));
    let (status, body) = get(&app, &guest, &format!("/user_groups/{id}/members")).await;
    assert_eq!((status, body), (400, error("Not allowed for guest users")));
    // DELETE /user_groups/{id} is gone since deactivation replaced it.
    let response = app.as_user(&alice, Method::DELETE, &format!("/user_groups/{id}")).send().await.unwrap();
    expect(response, 405, json!({"result": "error", "msg": "Method Not Allowed", "allowed_methods": ["PATCH"]})).await;
    app.stop().await;
}

#[actix_web::test]
async fn groups_survive_a_restart() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    let inner = create(&app, &alice, "inner", &format!("[{}]", bob.user_id), &[]).await;
    let outer =
        create(&app, &alice, "outer", &format!("[{}]", alice.user_id), &[("subgroups", &format!("[{inner}]"))]).await;
    let join = format!(r#"{{"new": {{"direct_members": [{}], "direct_subgroups": [{inner}]}}}}"#, bob.user_id);
    expect(patch(&app, &alice, &format!("/user_groups/{outer}"), &[("can_join_group", &join)]).await, 200, success())
        .await;
    expect(
        post(&app, &alice, &format!("/user_groups/{inner}/deactivate"), &[]).await,
        400,
        json!({
            "result": "error", "msg": "Cannot deactivate user group in use.",
            "objections": [
                {"type": "subgroup", "supergroup_ids": [outer]},
                {"type": "user_group", "group_id": outer, "settings": ["can_join_group"]},
            ],
            "code": "CANNOT_DEACTIVATE_GROUP_IN_USE",
        }),
    )
    .await;
    let (_, before) = get(&app, &alice, "/user_groups?include_deactivated_groups=true").await;
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;

    let app = spawn_app_at(&data_dir).await;
    let (_, after) = get(&app, &alice, "/user_groups?include_deactivated_groups=true").await;
    assert_eq!(after, before);
    let (_, body) = get(&app, &alice, &format!("/user_groups/{outer}/members")).await;
    assert_eq!(body["members"], json!([alice.user_id, bob.user_id]));
    app.stop().await;
    drop(tmp);
}

#[actix_web::test]
async fn deactivated_users_are_hidden_and_refused() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    let admin = app.create_user("", "ada@agora.test", "Ada Admin", 200).await;
    let both = format!("[{}, {}]", alice.user_id, bob.user_id);
    let id = create(&app, &alice, "support", &both, &[]).await;
    let setting =
        format!(r#"{{"new": {{"direct_members": [{}, {}], "direct_subgroups": []}}}}"#, alice.user_id, bob.user_id);
    expect(
        patch(&app, &alice, &format!("/user_groups/{id}"), &[("can_mention_group", &setting)]).await,
        200,
        success(),
    )
    .await;
    let deactivate = SetUserActive { user_id: UserId(bob.user_id), active: false };
    app.realm("").addr.send(deactivate).await.unwrap().unwrap();

    let group = listed(&app, &alice, id).await;
    assert_eq!(group["members"], json!([alice.user_id]));
    assert_eq!(group["can_mention_group"], json!({"direct_members": [alice.user_id], "direct_subgroups": []}));
    let (_, body) = get(&app, &alice, &format!("/user_groups/{id}/members")).await;
    assert_eq!(body["members"], json!([alice.user_id]));
    let path = format!("/user_groups/{id}/members");
    let msg = format!("Invalid user ID: {}", bob.user_id);
    expect(post(&app, &alice, &path, &[("add", &format!("[{}]", bob.user_id))]).await, 400, error(&msg)).await;
    // can_manage_all_groups is role:owners by default: administrators manage only what
    // the group's own settings give them.
    expect(
        patch(&app, &admin, &format!("/user_groups/{id}"), &[("name", "x")]).await,
        400,
        error("Insufficient permission"),
    )
    .await;
    expect(patch(&app, &app.owner, &format!("/user_groups/{id}"), &[("name", "x")]).await, 200, success()).await;
    app.stop().await;
}
