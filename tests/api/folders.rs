//! Channel folders over HTTP: `/channel_folders...`, the `channel_folder` events and who
//! receives them, the `channel_folders` register data set and persistence.

use std::path::Path;

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{
    assert_same, error, expect, json, register, send, spawn_app, spawn_app_at, success, Creds, TestApp, Watch,
};

fn must_be_admin() -> Value {
    json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"})
}

/// `POST /channel_folders/create` as `who`.
async fn create_as(app: &TestApp, who: &Creds, name: &str, description: &str) -> Response {
    send(app, who, Method::POST, "/channel_folders/create", &[("name", name), ("description", description)]).await
}

/// Creates a folder as the owner; its id.
async fn create(app: &TestApp, name: &str, description: &str) -> i64 {
    let (status, body) = json(create_as(app, &app.owner, name, description).await).await;
    assert_eq!(status, 200, "{body}");
    body["channel_folder_id"].as_i64().unwrap()
}

/// `PATCH /channel_folders/{id}` as `who`.
async fn update_as(app: &TestApp, who: &Creds, id: i64, form: &[(&str, &str)]) -> Response {
    send(app, who, Method::PATCH, &format!("/channel_folders/{id}"), form).await
}

/// `PATCH /channel_folders` as `who` with `order`.
async fn reorder_as(app: &TestApp, who: &Creds, order: &str) -> Response {
    send(app, who, Method::PATCH, "/channel_folders", &[("order", order)]).await
}

/// `GET /channel_folders` as `who` (with `query`): the `channel_folders` list.
async fn folders(app: &TestApp, who: &Creds, query: &str) -> Value {
    let (status, body) =
        json(app.as_user(who, Method::GET, &format!("/channel_folders{query}")).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["channel_folders"].clone()
}

/// The names of a folder list, in order.
fn names(list: &Value) -> Vec<&str> {
    list.as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect()
}

/// The folder object Zulip shows (`date_created` taken from `actual`, the server's clock).
fn folder(actual: &Value, id: i64, name: &str, description: &str, rendered: &str, creator: i64) -> Value {
    json!({
        "id": id, "name": name, "description": description, "rendered_description": rendered,
        "order": id, "date_created": actual["date_created"].as_i64().unwrap(), "creator_id": creator,
        "is_archived": false,
    })
}

/// Members, moderators and guests of the root organization.
async fn non_admins(app: &TestApp) -> Vec<Creds> {
    vec![
        app.create_user("", "member@agora.test", "Member", 400).await,
        app.create_user("", "moderator@agora.test", "Moderator", 300).await,
        app.create_user("", "guest@agora.test", "Guest", 600).await,
    ]
}

#[actix_web::test]
async fn only_administrators_create_folders() {
    let app = spawn_app().await;
    for who in non_admins(&app).await {
        expect(create_as(&app, &who, "Frontend", "").await, 400, must_be_admin()).await;
        // The role is checked before the parameters.
        expect(send(&app, &who, Method::POST, "/channel_folders/create", &[]).await, 400, must_be_admin()).await;
    }
    let admin = app.create_user("", "admin@agora.test", "Admin", 200).await;
    let (status, body) = json(create_as(&app, &admin, "Frontend", "").await).await;
    let id = body["channel_folder_id"].as_i64().unwrap();
    assert_same(&body, &json!({"result": "success", "msg": "", "channel_folder_id": id}));
    assert_eq!(status, 200);
    let list = folders(&app, &app.owner, "").await;
    assert_same(&list, &json!([folder(&list[0], id, "Frontend", "", "", admin.user_id)]));
    app.stop().await;
}

#[actix_web::test]
async fn creation_checks_names_and_descriptions() {
    let app = spawn_app().await;
    let missing = |name: &str| json!({"result": "error", "msg": format!("Missing '{name}' argument"), "var_name": name, "code": "REQUEST_VARIABLE_MISSING"});
    let only_name = send(&app, &app.owner, Method::POST, "/channel_folders/create", &[("name", "A")]).await;
    expect(only_name, 400, missing("description")).await;
    let only_description =
        send(&app, &app.owner, Method::POST, "/channel_folders/create", &[("description", "")]).await;
    expect(only_description, 400, missing("name")).await;
    expect(create_as(&app, &app.owner, "", "x").await, 400, error("Channel folder name can't be empty.")).await;
    expect(create_as(&app, &app.owner, "   ", "x").await, 400, error("Channel folder name can't be empty.")).await;
    let nul = error("Invalid character in channel folder name, at position 4.");
    expect(create_as(&app, &app.owner, "abc\0", "x").await, 400, nul).await;
    let long_name = "n".repeat(61);
    let too_long = error("name is too long (limit: 60 characters)");
    expect(create_as(&app, &app.owner, &long_name, "").await, 400, too_long).await;
    let long_description = "d".repeat(1025);
    let too_long = error("description is too long (limit: 1024 characters)");
    expect(create_as(&app, &app.owner, "A", &long_description).await, 400, too_long).await;
    assert_eq!(folders(&app, &app.owner, "?include_archived=true").await, json!([]));

    // The limits themselves are fine, counted in characters.
    create(&app, &"é".repeat(60), &"d".repeat(1024)).await;
    let id = create(&app, "Frontend", "").await;
    let in_use = |name: &str| error(&format!("Channel folder '{name}' already exists"));
    expect(create_as(&app, &app.owner, "Frontend", "").await, 400, in_use("Frontend")).await;
    expect(create_as(&app, &app.owner, "frontEND", "").await, 400, in_use("frontEND")).await;
    // An archived folder keeps its name.
    expect(update_as(&app, &app.owner, id, &[("is_archived", "true")]).await, 200, success()).await;
    expect(create_as(&app, &app.owner, "FRONTEND", "").await, 400, in_use("FRONTEND")).await;
    app.stop().await;
}

#[actix_web::test]
async fn everyone_lists_folders_in_order_and_archived_ones_on_request() {
    let app = spawn_app().await;
    let frontend = create(&app, "Frontend", "Channels for frontend discussions").await;
    let backend = create(&app, "Backend", "Channels for **backend** discussions").await;
    let marketing = create(&app, "Marketing", "").await;
    let list = folders(&app, &app.owner, "").await;
    let expected = json!([
        folder(
            &list[0],
            frontend,
            "Frontend",
            "Channels for frontend discussions",
            "<p>Channels for frontend discussions</p>",
            app.owner.user_id
        ),
        folder(
            &list[1],
            backend,
            "Backend",
            "Channels for **backend** discussions",
            "<p>Channels for <strong>backend</strong> discussions</p>",
            app.owner.user_id
        ),
        folder(&list[2], marketing, "Marketing", "", "", app.owner.user_id),
    ]);
    assert_same(&list, &expected);
    for who in non_admins(&app).await {
        assert_same(&folders(&app, &who, "").await, &expected);
    }

    expect(update_as(&app, &app.owner, marketing, &[("is_archived", "true")]).await, 200, success()).await;
    assert_eq!(names(&folders(&app, &app.owner, "").await), ["Frontend", "Backend"]);
    assert_eq!(names(&folders(&app, &app.owner, "?include_archived=false").await), ["Frontend", "Backend"]);
    let all = folders(&app, &app.owner, "?include_archived=true").await;
    assert_eq!(names(&all), ["Frontend", "Backend", "Marketing"]);
    assert_eq!(all[2]["is_archived"], json!(true));
    let bad = app.as_user(&app.owner, Method::GET, "/channel_folders?include_archived=maybe").send().await.unwrap();
    assert_eq!(json(bad).await.1["msg"], "include_archived is not valid JSON");
    app.stop().await;
}

#[actix_web::test]
async fn folders_of_another_organization_are_invisible() {
    let app = spawn_app().await;
    let other_owner = app.create_realm("other", "boss@other.test").await;
    let mut outsider = Watch::new(&app, &other_owner, r#"["channel_folder"]"#).await;
    let id = create(&app, "Frontend", "").await;
    assert_eq!(outsider.events(&app).await, Vec::<Value>::new());
    assert_eq!(folders(&app, &other_owner, "?include_archived=true").await, json!([]));
    expect(update_as(&app, &other_owner, id, &[("name", "Mine")]).await, 400, error("Invalid channel folder ID")).await;
    expect(reorder_as(&app, &other_owner, "[]").await, 200, success()).await;
    assert_eq!(names(&folders(&app, &app.owner, "").await), ["Frontend"]);
    app.stop().await;
}

#[actix_web::test]
async fn creation_is_announced_to_every_active_user() {
    let app = spawn_app().await;
    let users = non_admins(&app).await;
    let mut watches = vec![Watch::new(&app, &app.owner, r#"["channel_folder"]"#).await];
    for who in &users {
        watches.push(Watch::new(&app, who, r#"["channel_folder"]"#).await);
    }
    let mut uninterested = Watch::new(&app, &users[0], r#"["realm_user"]"#).await;
    let id = create(&app, "Backend", "Channels for **backend** discussions").await;
    let list = folders(&app, &app.owner, "").await;
    let expected = json!({"type": "channel_folder", "op": "add", "channel_folder": folder(&list[0], id, "Backend", "Channels for **backend** discussions", "<p>Channels for <strong>backend</strong> discussions</p>", app.owner.user_id)});
    for watch in &mut watches {
        let events = watch.events(&app).await;
        assert_eq!(events.len(), 1);
        assert_same(&events[0], &expected);
    }
    assert_eq!(uninterested.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

#[actix_web::test]
async fn only_administrators_update_folders() {
    let app = spawn_app().await;
    let id = create(&app, "Frontend", "").await;
    for who in non_admins(&app).await {
        for form in [&[("name", "Web")][..], &[("description", "x")], &[("is_archived", "true")], &[]] {
            expect(update_as(&app, &who, id, form).await, 400, must_be_admin()).await;
        }
        expect(update_as(&app, &who, 999, &[]).await, 400, must_be_admin()).await;
    }
    let admin = app.create_user("", "admin@agora.test", "Admin", 200).await;
    expect(update_as(&app, &admin, id, &[("name", "Web")]).await, 200, success()).await;
    assert_eq!(names(&folders(&app, &app.owner, "").await), ["Web"]);
    app.stop().await;
}

#[actix_web::test]
async fn updates_check_the_folder_and_the_values() {
    let app = spawn_app().await;
    let id = create(&app, "Frontend", "").await;
    create(&app, "Backend", "").await;
    let invalid = error("Invalid channel folder ID");
    expect(update_as(&app, &app.owner, 999, &[("name", "Web")]).await, 400, invalid.clone()).await;
    expect(update_as(&app, &app.owner, 99_999_999_999_999_999, &[]).await, 400, invalid.clone()).await;
    let overflow = send(&app, &app.owner, Method::PATCH, "/channel_folders/99999999999999999999999", &[]).await;
    expect(overflow, 400, invalid).await;
    let not_found = json!({"result": "error", "msg": "Not Found", "code": "NOT_FOUND"});
    expect(send(&app, &app.owner, Method::PATCH, "/channel_folders/abc", &[]).await, 404, not_found).await;
    let (long_name, long_description) = ("n".repeat(61), "d".repeat(1025));
    let cases: [(&[(&str, &str)], &str); 7] = [
        (&[("name", "")], "Channel folder name can't be empty."),
        (&[("name", " ")], "Channel folder name can't be empty."),
        (&[("name", "Backend")], "Channel folder 'Backend' already exists"),
        (&[("name", "backEND")], "Channel folder 'backEND' already exists"),
        (&[("name", "abc\0")], "Invalid character in channel folder name, at position 4."),
        (&[("name", &long_name)], "name is too long (limit: 60 characters)"),
        (&[("description", &long_description)], "description is too long (limit: 1024 characters)"),
    ];
    for (form, msg) in cases {
        expect(update_as(&app, &app.owner, id, form).await, 400, error(msg)).await;
    }
    let bad = update_as(&app, &app.owner, id, &[("is_archived", "yes")]).await;
    assert_eq!(json(bad).await.1["msg"], "is_archived is not valid JSON");
    // A refused change leaves everything as it was, other properties included.
    expect(
        update_as(&app, &app.owner, id, &[("description", "x"), ("name", "Backend")]).await,
        400,
        error("Channel folder 'Backend' already exists"),
    )
    .await;
    let list = folders(&app, &app.owner, "").await;
    assert_eq!((list[0]["name"].as_str(), list[0]["description"].as_str()), (Some("Frontend"), Some("")));
    // Renaming a folder to its own name (even in another case) is allowed.
    expect(update_as(&app, &app.owner, id, &[("name", "Frontend")]).await, 200, success()).await;
    expect(
        update_as(&app, &app.owner, id, &[("name", "FRONTEND")]).await,
        400,
        error("Channel folder 'FRONTEND' already exists"),
    )
    .await;
    app.stop().await;
}

#[actix_web::test]
async fn each_changed_property_sends_its_own_update_event() {
    let app = spawn_app().await;
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let id = create(&app, "Frontend", "Old").await;
    let mut watches = vec![
        Watch::new(&app, &app.owner, r#"["channel_folder"]"#).await,
        Watch::new(&app, &member, r#"["channel_folder"]"#).await,
        Watch::new(&app, &guest, r#"["channel_folder"]"#).await,
    ];
    let other_owner = app.create_realm("other", "boss@other.test").await;
    let mut outsider = Watch::new(&app, &other_owner, r#"["channel_folder"]"#).await;

    let form = [("is_archived", "true"), ("description", "Channels for **frontend**"), ("name", "Web")];
    expect(update_as(&app, &app.owner, id, &form).await, 200, success()).await;
    let update = |data: Value| json!({"type": "channel_folder", "op": "update", "channel_folder_id": id, "data": data});
    let expected = vec![
        update(json!({"name": "Web"})),
        update(
            json!({"description": "Channels for **frontend**", "rendered_description": "<p>Channels for <strong>frontend</strong></p>"}),
        ),
        update(json!({"is_archived": true})),
    ];
    for watch in &mut watches {
        let events = watch.events(&app).await;
        assert_same(&Value::from(events), &Value::from(expected.clone()));
    }

    // Unchanged values are no-ops.
    let same = [("is_archived", "true"), ("description", "Channels for **frontend**"), ("name", "Web")];
    expect(update_as(&app, &app.owner, id, &same).await, 200, success()).await;
    expect(update_as(&app, &app.owner, id, &[]).await, 200, success()).await;
    assert_eq!(watches[1].events(&app).await, Vec::<Value>::new());

    // Unarchiving, and clearing the description.
    expect(update_as(&app, &app.owner, id, &[("is_archived", "false"), ("description", "")]).await, 200, success())
        .await;
    let expected =
        vec![update(json!({"description": "", "rendered_description": ""})), update(json!({"is_archived": false}))];
    assert_same(&Value::from(watches[2].events(&app).await), &Value::from(expected));
    let list = folders(&app, &app.owner, "").await;
    assert_same(&list, &json!([folder(&list[0], id, "Web", "", "", app.owner.user_id)]));
    assert_eq!(outsider.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

#[actix_web::test]
async fn reordering_lists_every_folder() {
    let app = spawn_app().await;
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let a = create(&app, "A", "").await;
    let b = create(&app, "B", "").await;
    let c = create(&app, "C", "").await;
    expect(update_as(&app, &app.owner, c, &[("is_archived", "true")]).await, 200, success()).await;
    let mut watch = Watch::new(&app, &member, r#"["channel_folder"]"#).await;

    for who in non_admins_with(&app, &member).await {
        expect(reorder_as(&app, &who, &format!("[{c},{b},{a}]")).await, 400, must_be_admin()).await;
    }
    let missing = json!({"result": "error", "msg": "Missing 'order' argument", "var_name": "order", "code": "REQUEST_VARIABLE_MISSING"});
    expect(send(&app, &app.owner, Method::PATCH, "/channel_folders", &[]).await, 400, missing).await;
    let invalid = error("Invalid order mapping");
    // Archived folders must be listed too.
    expect(reorder_as(&app, &app.owner, &format!("[{b},{a}]")).await, 400, invalid.clone()).await;
    expect(reorder_as(&app, &app.owner, "[100,200,300]").await, 400, invalid).await;
    let bad = reorder_as(&app, &app.owner, "[1,\"x\"]").await;
    assert_eq!(json(bad).await.0, 400);
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());

    expect(reorder_as(&app, &app.owner, &format!("[{c},{b},{a}]")).await, 200, success()).await;
    assert_same(
        &Value::from(watch.events(&app).await),
        &json!([{"type": "channel_folder", "op": "reorder", "order": [c, b, a]}]),
    );
    let all = folders(&app, &member, "?include_archived=true").await;
    assert_eq!(names(&all), ["C", "B", "A"]);
    let orders: Vec<i64> = all.as_array().unwrap().iter().map(|f| f["order"].as_i64().unwrap()).collect();
    assert_eq!(orders, [0, 1, 2]);
    assert_eq!(names(&folders(&app, &member, "").await), ["B", "A"]);

    // Unknown ids are ignored and a repeated id takes its last place, as in Zulip.
    expect(reorder_as(&app, &app.owner, &format!("[{a},{b},999,{c},{a}]")).await, 200, success()).await;
    assert_eq!(names(&folders(&app, &member, "?include_archived=true").await), ["B", "C", "A"]);
    // A new folder goes last.
    create(&app, "D", "").await;
    assert_eq!(names(&folders(&app, &member, "").await), ["B", "A", "D"]);
    app.stop().await;
}

/// `member` plus a moderator and a guest.
async fn non_admins_with(app: &TestApp, member: &Creds) -> Vec<Creds> {
    vec![
        member.clone(),
        app.create_user("", "moderator@agora.test", "Moderator", 300).await,
        app.create_user("", "guest@agora.test", "Guest", 600).await,
    ]
}

#[actix_web::test]
async fn register_includes_archived_folders() {
    let app = spawn_app().await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let a = create(&app, "A", "").await;
    let b = create(&app, "B", "").await;
    expect(update_as(&app, &app.owner, a, &[("is_archived", "true")]).await, 200, success()).await;
    expect(reorder_as(&app, &app.owner, &format!("[{b},{a}]")).await, 200, success()).await;
    let state = register(&app, &guest, &[("fetch_event_types", r#"["channel_folders"]"#)]).await;
    assert_same(&state["channel_folders"], &folders(&app, &guest, "?include_archived=true").await);
    assert_eq!(names(&state["channel_folders"]), ["B", "A"]);
    let state = register(&app, &guest, &[("fetch_event_types", r#"["realm_user"]"#)]).await;
    assert!(state.get("channel_folders").is_none());
    app.stop().await;
}

/// Puts a channel (archived or not) in `folder`, straight into the database of a stopped
/// server: channels are created by another area's endpoints.
/// Stops `app` and starts a new server on its data directory, after `between`.
async fn restart(app: TestApp, between: impl FnOnce(&Path)) -> (TestApp, Option<tempfile::TempDir>) {
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;
    between(&data_dir);
    (spawn_app_at(&data_dir).await, tmp)
}

#[actix_web::test]
async fn a_folder_holding_channels_cannot_be_archived() {
    let app = spawn_app().await;
    let id = create(&app, "Frontend", "").await;
    let folder = id.to_string();
    let form = [("name", "ui"), ("subscribers", "[]"), ("folder_id", folder.as_str())];
    let response = send(&app, &app.owner, Method::POST, "/channels/create", &form).await;
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
    let channel = body["id"].as_i64().unwrap();
    let refused = error("You need to remove all the channels from this folder to archive it.");
    expect(update_as(&app, &app.owner, id, &[("is_archived", "true")]).await, 400, refused.clone()).await;
    // Even an archived channel keeps the folder in use.
    expect(send(&app, &app.owner, Method::DELETE, &format!("/streams/{channel}"), &[]).await, 200, success()).await;
    expect(update_as(&app, &app.owner, id, &[("is_archived", "true")]).await, 400, refused).await;
    assert_eq!(folders(&app, &app.owner, "").await[0]["is_archived"], json!(false));
    app.stop().await;
}

#[actix_web::test]
async fn folders_survive_a_restart() {
    let app = spawn_app().await;
    let a = create(&app, "A", "*a*").await;
    let b = create(&app, "B", "").await;
    expect(update_as(&app, &app.owner, a, &[("name", "Renamed"), ("is_archived", "true")]).await, 200, success()).await;
    expect(reorder_as(&app, &app.owner, &format!("[{b},{a}]")).await, 200, success()).await;
    let before = folders(&app, &app.owner, "?include_archived=true").await;
    let (app, _tmp) = restart(app, |_| {}).await;
    assert_same(&folders(&app, &app.owner, "?include_archived=true").await, &before);
    assert_eq!(names(&before), ["B", "Renamed"]);
    assert_eq!(before[1]["rendered_description"], "<p><em>a</em></p>");
    // The next folder still goes last.
    let c = create(&app, "C", "").await;
    assert!(c > b);
    assert_eq!(names(&folders(&app, &app.owner, "?include_archived=true").await), ["B", "Renamed", "C"]);
    app.stop().await;
}

#[actix_web::test]
async fn unknown_methods_get_405() {
    let app = spawn_app().await;
    for (method, path) in [
        (Method::POST, "/channel_folders"),
        (Method::GET, "/channel_folders/create"),
        (Method::GET, "/channel_folders/1"),
        (Method::DELETE, "/channel_folders/1"),
    ] {
        assert_eq!(send(&app, &app.owner, method, path, &[]).await.status().as_u16(), 405, "{path}");
    }
    app.stop().await;
}
