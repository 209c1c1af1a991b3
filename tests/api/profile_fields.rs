//! Custom profile fields over HTTP: `/realm/profile_fields...`, `/users/me/profile_data`,
//! `profile_data` in user objects, events and persistence.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{
    assert_same, error, expect, json, register, send, spawn_app, spawn_app_at, success, Creds, TestApp, Watch,
};

/// A request form.
type Form<'a> = &'a [(&'a str, &'a str)];

fn must_be_admin() -> Value {
    json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"})
}

/// Creates a field as the owner; its id.
async fn create(app: &TestApp, form: &[(&str, &str)]) -> i64 {
    let (status, body) = json(send(app, &app.owner, Method::POST, "/realm/profile_fields", form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// `GET /realm/profile_fields` as `who`: the `custom_fields` list.
async fn fields(app: &TestApp, who: &Creds) -> Value {
    let (status, body) = json(app.as_user(who, Method::GET, "/realm/profile_fields").send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["custom_fields"].clone()
}

/// `PATCH /users/me/profile_data` as `who` with `data`.
async fn set_data(app: &TestApp, who: &Creds, data: Value) -> Response {
    send(app, who, Method::PATCH, "/users/me/profile_data", &[("data", &data.to_string())]).await
}

/// `PATCH /realm/profile_fields` as the owner with `order`.
async fn reorder(app: &TestApp, order: &str) -> Response {
    send(app, &app.owner, Method::PATCH, "/realm/profile_fields", &[("order", order)]).await
}

/// `DELETE /users/me/profile_data` as `who` with `data`.
async fn delete_data(app: &TestApp, who: &Creds, data: &str) -> Response {
    send(app, who, Method::DELETE, "/users/me/profile_data", &[("data", data)]).await
}

/// `profile_data` of `user_id` as the owner sees it through `GET /users/{id}`.
async fn profile_data(app: &TestApp, user_id: i64) -> Value {
    let path = format!("/users/{user_id}?include_custom_profile_fields=true");
    let (status, body) = json(app.as_user(&app.owner, Method::GET, &path).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["user"]["profile_data"].clone()
}

const CHOICES: &str = r#"{"0":{"text":"Vim","order":"1"},"1":{"text":"Emacs","order":"2"}}"#;

#[actix_web::test]
async fn python_client_creates_and_lists_fields() {
    let app = spawn_app().await;
    // `create_realm_profile_field(name=..., hint=..., field_type=1)`, as the golden recording.
    let response = app
        .as_user(&app.owner, Method::POST, "/realm/profile_fields")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("name=Golden+field+1795238602&hint=a+hint&field_type=1")
        .send()
        .await
        .unwrap();
    expect(response, 200, json!({"result": "success", "msg": "", "id": 1})).await;
    let id =
        create(&app, &[("name", "Editor"), ("field_type", "3"), ("field_data", CHOICES), ("required", "true")]).await;
    assert_eq!(id, 2);
    // `get_realm_profile_fields()`.
    let response = app.as_user(&app.owner, Method::GET, "/realm/profile_fields").send().await.unwrap();
    expect(
        response,
        200,
        json!({"result": "success", "msg": "", "custom_fields": [
            {"id": 1, "name": "Golden field 1795238602", "type": 1, "hint": "a hint", "field_data": "", "order": 1,
             "required": false, "editable_by_user": true},
            {"id": 2, "name": "Editor", "type": 3, "hint": "", "field_data": CHOICES, "order": 2,
             "required": true, "editable_by_user": true},
        ]}),
    )
    .await;
    app.stop().await;
}

#[actix_web::test]
async fn only_administrators_change_fields_and_everyone_reads_them() {
    let app = spawn_app().await;
    let admin = app.create_user("", "admin@agora.test", "Admin", 200).await;
    let id = create(&app, &[("name", "Phone"), ("field_type", "1")]).await;
    let field_path = format!("/realm/profile_fields/{id}");
    for role in [300, 400, 600] {
        let who = app.create_user("", &format!("u{role}@agora.test"), "Someone", role).await;
        let attempts: [(Method, &str, Form<'_>); 4] = [
            (Method::POST, "/realm/profile_fields", &[("name", "X"), ("field_type", "1")]),
            (Method::PATCH, &field_path, &[("name", "Y")]),
            (Method::DELETE, &field_path, &[]),
            (Method::PATCH, "/realm/profile_fields", &[("order", "[1]")]),
        ];
        for (method, path, form) in attempts {
            expect(send(&app, &who, method, path, form).await, 400, must_be_admin()).await;
        }
        assert_eq!(fields(&app, &who).await.as_array().unwrap().len(), 1);
    }
    // The administrator check comes before parameter parsing.
    let guest = app.create_user("", "g@agora.test", "Guest", 600).await;
    expect(send(&app, &guest, Method::POST, "/realm/profile_fields", &[]).await, 400, must_be_admin()).await;
    let response = send(&app, &admin, Method::POST, "/realm/profile_fields", &[("name", "Team"), ("field_type", "1")]);
    expect(response.await, 200, json!({"result": "success", "msg": "", "id": 2})).await;
    expect(send(&app, &admin, Method::PATCH, &field_path, &[("hint", "Work phone")]).await, 200, success()).await;
    assert_eq!(fields(&app, &app.owner).await[0]["hint"], "Work phone");
    app.stop().await;
}

#[actix_web::test]
async fn field_definitions_are_validated_with_zulips_messages() {
    let app = spawn_app().await;
    create(&app, &[("name", "Taken"), ("field_type", "1")]).await;
    let long_name = "n".repeat(41);
    let long_hint = "h".repeat(81);
    let cases: Vec<(Vec<(&str, &str)>, Value)> = vec![
        (
            vec![("name", "X")],
            json!({"result": "error", "msg": "Missing 'field_type' argument", "var_name": "field_type", "code": "REQUEST_VARIABLE_MISSING"}),
        ),
        (vec![("name", "X"), ("field_type", "one")], error("field_type is not valid JSON")),
        (vec![("name", "X"), ("field_type", "1"), ("field_data", "[]")], error("field_data is not a dict")),
        (vec![("name", "X"), ("field_type", "9")], error("Invalid field type.")),
        (vec![("name", "  "), ("field_type", "1")], error("Label cannot be blank.")),
        (vec![("field_type", "1")], error("Label cannot be blank.")),
        (vec![("name", &long_name), ("field_type", "1")], error("name is too long (limit: 40 characters)")),
        (
            vec![("name", "X"), ("hint", &long_hint), ("field_type", "1")],
            error("hint is too long (limit: 80 characters)"),
        ),
        (vec![("name", " Taken "), ("field_type", "2")], error("A field with that label already exists.")),
        (vec![("name", "X"), ("field_type", "3")], error("Field must have at least one choice.")),
        (
            vec![("name", "X"), ("field_type", "3"), ("field_data", r#"{"a":{"text":"A"}}"#)],
            error("order key is missing from field_data"),
        ),
        (
            vec![
                ("name", "X"),
                ("field_type", "3"),
                ("field_data", r#"{"a":{"text":"A","order":"1"},"b":{"text":"A","order":"2"}}"#),
            ],
            error("Field must not have duplicate choices."),
        ),
        (
            vec![("name", "X"), ("field_type", "3"), ("field_data", r#"{"":{"text":"A","order":"1"}}"#)],
            error("'value' cannot be blank."),
        ),
        (vec![("name", "X"), ("field_type", "7")], error("subtype key is missing from field_data")),
        (
            vec![("name", "X"), ("field_type", "7"), ("field_data", r#"{"subtype":"myspace"}"#)],
            error("Invalid external account type"),
        ),
        (
            vec![("name", "X"), ("field_type", "7"), ("field_data", r#"{"subtype":"custom"}"#)],
            error("Custom external account must define URL pattern"),
        ),
        (
            vec![
                ("name", "X"),
                ("field_type", "7"),
                ("field_data", r#"{"subtype":"custom","url_pattern":"https://x.com/"}"#),
            ],
            error("URL pattern must contain '%(username)s'."),
        ),
        (
            vec![("name", "X"), ("field_type", "2"), ("use_for_user_matching", "true")],
            error("Field type not supported for user matching."),
        ),
        (
            vec![("name", "X"), ("field_type", "6"), ("display_in_profile_summary", "true")],
            error("Field type not supported for display in profile summary."),
        ),
    ];
    for (form, expected) in cases {
        expect(send(&app, &app.owner, Method::POST, "/realm/profile_fields", &form).await, 400, expected).await;
    }
    assert_eq!(fields(&app, &app.owner).await.as_array().unwrap().len(), 1);
    app.stop().await;
}

#[actix_web::test]
async fn at_most_two_fields_show_in_the_profile_summary() {
    let app = spawn_app().await;
    let a = create(&app, &[("name", "A"), ("field_type", "1"), ("display_in_profile_summary", "true")]).await;
    create(&app, &[("name", "B"), ("field_type", "4"), ("display_in_profile_summary", "true")]).await;
    let c = create(&app, &[("name", "C"), ("field_type", "1")]).await;
    let limit = error("Only 2 custom profile fields can be displayed in the profile summary.");
    let form = [("name", "D"), ("field_type", "1"), ("display_in_profile_summary", "true")];
    expect(send(&app, &app.owner, Method::POST, "/realm/profile_fields", &form).await, 400, limit.clone()).await;
    let summary = [("display_in_profile_summary", "true")];
    let path = format!("/realm/profile_fields/{c}");
    expect(send(&app, &app.owner, Method::PATCH, &path, &summary).await, 400, limit).await;
    // A field already shown may be saved again; freeing a slot lets another in.
    let path_a = format!("/realm/profile_fields/{a}");
    expect(send(&app, &app.owner, Method::PATCH, &path_a, &summary).await, 200, success()).await;
    expect(
        send(&app, &app.owner, Method::PATCH, &path_a, &[("display_in_profile_summary", "false")]).await,
        200,
        success(),
    )
    .await;
    expect(send(&app, &app.owner, Method::PATCH, &path, &summary).await, 200, success()).await;
    let list = fields(&app, &app.owner).await;
    assert_eq!(list[0].get("display_in_profile_summary"), None);
    assert_same(
        &list[2],
        &json!({"id": c, "name": "C", "type": 1, "hint": "", "field_data": "", "order": c,
        "required": false, "editable_by_user": true, "display_in_profile_summary": true}),
    );
    app.stop().await;
}

#[actix_web::test]
async fn external_account_fields() {
    let app = spawn_app().await;
    // Default subtypes take Zulip's label and an empty hint, whatever was sent.
    let gh = create(
        &app,
        &[("name", "ignored"), ("hint", "ignored"), ("field_type", "7"), ("field_data", r#"{"subtype":"github"}"#)],
    )
    .await;
    let custom_data = r#"{"subtype":"custom","url_pattern":"https://ex.com/u/%(username)s"}"#;
    let custom = create(&app, &[("name", "Blog"), ("field_type", "7"), ("field_data", custom_data)]).await;
    let list = fields(&app, &app.owner).await;
    assert_same(
        &list[0],
        &json!({"id": gh, "name": "GitHub username", "type": 7, "hint": "", "field_data": r#"{"subtype":"github"}"#,
        "order": gh, "required": false, "editable_by_user": true}),
    );
    assert_eq!(list[1]["field_data"], custom_data);
    let again = [("field_type", "7"), ("field_data", r#"{"subtype":"github"}"#)];
    let response = send(&app, &app.owner, Method::POST, "/realm/profile_fields", &again).await;
    expect(response, 400, error("A field with that label already exists.")).await;
    let path = format!("/realm/profile_fields/{gh}");
    let response = send(&app, &app.owner, Method::PATCH, &path, &[("name", "GH")]).await;
    expect(response, 400, error("Default custom field cannot be updated.")).await;
    // Sending the current values back, or flags only, is allowed.
    let form =
        [("name", "GitHub username"), ("hint", ""), ("display_in_profile_summary", "true"), ("required", "true")];
    expect(send(&app, &app.owner, Method::PATCH, &path, &form).await, 200, success()).await;
    // Values are short strings.
    expect(set_data(&app, &app.owner, json!([{"id": gh, "value": "octocat"}])).await, 200, success()).await;
    let response = set_data(&app, &app.owner, json!([{"id": custom, "value": "x".repeat(51)}])).await;
    expect(response, 400, error("Blog is too long (limit: 50 characters)")).await;
    assert_same(&profile_data(&app, app.owner.user_id).await, &json!({gh.to_string(): {"value": "octocat"}}));
    app.stop().await;
}

#[actix_web::test]
async fn fields_are_updated_and_removed_choices_clear_values() {
    let app = spawn_app().await;
    let member = app.create_user("", "m@agora.test", "Member", 400).await;
    let editor = create(&app, &[("name", "Editor"), ("field_type", "3"), ("field_data", CHOICES)]).await;
    let other = create(&app, &[("name", "Other"), ("field_type", "1")]).await;
    expect(set_data(&app, &member, json!([{"id": editor, "value": "1"}])).await, 200, success()).await;
    expect(set_data(&app, &app.owner, json!([{"id": editor, "value": "0"}])).await, 200, success()).await;

    expect(
        send(&app, &app.owner, Method::PATCH, "/realm/profile_fields/99", &[("name", "Z")]).await,
        400,
        error("Field id 99 not found."),
    )
    .await;
    expect(
        send(&app, &app.owner, Method::DELETE, "/realm/profile_fields/99", &[]).await,
        400,
        error("Field id 99 not found."),
    )
    .await;
    let path = format!("/realm/profile_fields/{editor}");
    let response = send(&app, &app.owner, Method::PATCH, &path, &[("name", "Other")]).await;
    expect(response, 400, error("A field with that label already exists.")).await;
    expect(send(&app, &app.owner, Method::PATCH, &path, &[("name", " ")]).await, 400, error("Label cannot be blank."))
        .await;
    expect(
        send(&app, &app.owner, Method::PATCH, &path, &[("field_data", "{}")]).await,
        400,
        error("Field must have at least one choice."),
    )
    .await;

    let vim_only = r#"{"0":{"text":"Vim","order":"1"},"2":{"text":"Helix","order":"2"}}"#;
    let form = [
        ("name", "Editor of choice"),
        ("hint", "Pick one"),
        ("field_data", vim_only),
        ("required", "true"),
        ("editable_by_user", "false"),
    ];
    expect(send(&app, &app.owner, Method::PATCH, &path, &form).await, 200, success()).await;
    assert_same(
        &fields(&app, &app.owner).await[0],
        &json!({"id": editor, "name": "Editor of choice", "type": 3, "hint": "Pick one", "field_data": vim_only,
            "order": editor, "required": true, "editable_by_user": false}),
    );
    // The member chose the removed option "1"; the owner's "0" stays.
    assert_same(&profile_data(&app, member.user_id).await, &json!({}));
    assert_same(&profile_data(&app, app.owner.user_id).await, &json!({editor.to_string(): {"value": "0"}}));
    // field_data of types without it is ignored.
    let path = format!("/realm/profile_fields/{other}");
    expect(send(&app, &app.owner, Method::PATCH, &path, &[("field_data", CHOICES)]).await, 200, success()).await;
    assert_eq!(fields(&app, &app.owner).await[1]["field_data"], "");
    app.stop().await;
}

#[actix_web::test]
async fn deleting_a_field_removes_its_values() {
    let app = spawn_app().await;
    let keep = create(&app, &[("name", "Keep"), ("field_type", "1")]).await;
    let gone = create(&app, &[("name", "Gone"), ("field_type", "1")]).await;
    let data = json!([{"id": keep, "value": "k"}, {"id": gone, "value": "g"}]);
    expect(set_data(&app, &app.owner, data).await, 200, success()).await;
    expect(send(&app, &app.owner, Method::DELETE, &format!("/realm/profile_fields/{gone}"), &[]).await, 200, success())
        .await;
    assert_eq!(fields(&app, &app.owner).await.as_array().unwrap().len(), 1);
    assert_same(
        &profile_data(&app, app.owner.user_id).await,
        &json!({keep.to_string(): {"value": "k", "rendered_value": "<p>k</p>"}}),
    );
    let response = set_data(&app, &app.owner, json!([{"id": gone, "value": "g"}])).await;
    expect(response, 400, error(&format!("Field id {gone} not found."))).await;
    app.stop().await;
}

#[actix_web::test]
async fn fields_are_reordered() {
    let app = spawn_app().await;
    let a = create(&app, &[("name", "A"), ("field_type", "1")]).await;
    let b = create(&app, &[("name", "B"), ("field_type", "1")]).await;
    let c = create(&app, &[("name", "C"), ("field_type", "1")]).await;
    let missing = json!({"result": "error", "msg": "Missing 'order' argument", "var_name": "order", "code": "REQUEST_VARIABLE_MISSING"});
    expect(send(&app, &app.owner, Method::PATCH, "/realm/profile_fields", &[]).await, 400, missing).await;
    expect(reorder(&app, &format!("[{a},{b}]")).await, 400, error("Invalid order mapping.")).await;
    expect(reorder(&app, &format!("[{a},{a},{b}]")).await, 400, error("Invalid order mapping.")).await;
    expect(reorder(&app, "[1,\"x\"]").await, 400, error("order[1] is not an integer")).await;
    // Unknown ids are ignored; each field's order is its index.
    expect(reorder(&app, &format!("[{c},{a},99,{b}]")).await, 200, success()).await;
    let list = fields(&app, &app.owner).await;
    let got: Vec<(i64, i64)> =
        list.as_array().unwrap().iter().map(|f| (f["id"].as_i64().unwrap(), f["order"].as_i64().unwrap())).collect();
    assert_eq!(got, vec![(c, 0), (a, 1), (b, 3)]);
    app.stop().await;
}

#[actix_web::test]
async fn values_are_validated_per_type() {
    let app = spawn_app().await;
    let member = app.create_user("", "m@agora.test", "Member", 400).await;
    let short = create(&app, &[("name", "Short"), ("field_type", "1")]).await;
    let long = create(&app, &[("name", "Long"), ("field_type", "2")]).await;
    let select = create(&app, &[("name", "Editor"), ("field_type", "3"), ("field_data", CHOICES)]).await;
    let date = create(&app, &[("name", "Birthday"), ("field_type", "4")]).await;
    let link = create(&app, &[("name", "Site"), ("field_type", "5")]).await;
    let people = create(&app, &[("name", "Mentor"), ("field_type", "6")]).await;
    let pronouns = create(&app, &[("name", "Pronouns"), ("field_type", "8")]).await;
    let cases: Vec<(Value, &str)> = vec![
        (json!([{"id": short, "value": 5}]), "data[0][\"value\"] is not an allowed_type"),
        (json!([{"id": short, "value": "x".repeat(51)}]), "Short is too long (limit: 50 characters)"),
        (json!([{"id": long, "value": "x".repeat(501)}]), "Long is too long (limit: 500 characters)"),
        (json!([{"id": select, "value": "7"}]), "'7' is not a valid choice for 'Editor'."),
        (json!([{"id": date, "value": "1909-3-5"}]), "Birthday is not a date"),
        (json!([{"id": date, "value": "1909-02-30"}]), "Birthday is not a date"),
        (json!([{"id": link, "value": "not a url"}]), "Site is not a URL"),
        (json!([{"id": link, "value": "javascript:alert(1)"}]), "Site is not a URL"),
        (json!([{"id": people, "value": "1"}]), "User IDs is not a list"),
        (json!([{"id": people, "value": [1, 9999, 8888]}]), "Invalid user IDs: 9999, 8888"),
        (json!([{"id": pronouns, "value": "x".repeat(51)}]), "Pronouns is too long (limit: 50 characters)"),
        (json!([{"id": 9999, "value": "x"}]), "Field id 9999 not found."),
        (json!([{"id": short}]), "value key is missing from data[0]"),
        (json!([{"id": short, "value": "x", "extra": 1}]), "Unexpected arguments: extra"),
        (json!(["x"]), "data[0] is not a dict"),
        // A later error refuses the whole list: the first entry is not saved.
        (json!([{"id": short, "value": "ok"}, {"id": date, "value": "soon"}]), "Birthday is not a date"),
    ];
    for (data, msg) in cases {
        expect(set_data(&app, &member, data).await, 400, error(msg)).await;
    }
    expect(
        send(&app, &member, Method::PATCH, "/users/me/profile_data", &[("data", "{")]).await,
        400,
        error("data is not valid JSON"),
    )
    .await;
    assert_same(&profile_data(&app, member.user_id).await, &json!({}));

    let data = json!([
        {"id": short, "value": "**hi**"},
        {"id": long, "value": "line one\n\n* item"},
        {"id": select, "value": "1"},
        {"id": date, "value": "1909-03-05"},
        {"id": link, "value": "https://zulip.com/x?y=z"},
        {"id": people, "value": [app.owner.user_id, member.user_id]},
        {"id": pronouns, "value": "they/them"},
    ]);
    expect(set_data(&app, &member, data).await, 200, success()).await;
    let expected = json!({
        short.to_string(): {"value": "**hi**", "rendered_value": "<p><strong>hi</strong></p>"},
        long.to_string(): {"value": "line one\n\n* item", "rendered_value": "<p>line one</p>\n<ul>\n<li>item</li>\n</ul>"},
        select.to_string(): {"value": "1"},
        date.to_string(): {"value": "1909-03-05"},
        link.to_string(): {"value": "https://zulip.com/x?y=z"},
        people.to_string(): {"value": format!("[{},{}]", app.owner.user_id, member.user_id)},
        pronouns.to_string(): {"value": "they/them"},
    });
    assert_same(&profile_data(&app, member.user_id).await, &expected);
    // The same data in the user's own profile and in register's realm_users.
    let (_, me) = json(app.as_user(&member, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_same(&me["profile_data"], &expected);
    let state = register(&app, &app.owner, &[("fetch_event_types", r#"["realm_user"]"#)]).await;
    let listed = state["realm_users"].as_array().unwrap().iter().find(|u| u["user_id"] == member.user_id).unwrap();
    assert_same(&listed["profile_data"], &expected);
    // Without include_custom_profile_fields there is no profile_data.
    let path = format!("/users/{}", member.user_id);
    let (_, user) = json(app.as_user(&app.owner, Method::GET, &path).send().await.unwrap()).await;
    assert_eq!(user["user"].get("profile_data"), None);
    app.stop().await;
}

#[actix_web::test]
async fn values_are_removed_with_null_empty_or_delete() {
    let app = spawn_app().await;
    let a = create(&app, &[("name", "A"), ("field_type", "1")]).await;
    let b = create(&app, &[("name", "B"), ("field_type", "6")]).await;
    let c = create(&app, &[("name", "C"), ("field_type", "4")]).await;
    let owner = app.owner.clone();
    let data = json!([{"id": a, "value": "x"}, {"id": b, "value": [owner.user_id]}, {"id": c, "value": "2000-01-01"}]);
    expect(set_data(&app, &owner, data).await, 200, success()).await;
    let data = json!([{"id": a, "value": null}, {"id": b, "value": []}]);
    expect(set_data(&app, &owner, data).await, 200, success()).await;
    assert_same(&profile_data(&app, owner.user_id).await, &json!({c.to_string(): {"value": "2000-01-01"}}));
    expect(delete_data(&app, &owner, "[99]").await, 400, error("Field id 99 not found.")).await;
    expect(delete_data(&app, &owner, "[\"a\"]").await, 400, error("data[0] is not an integer")).await;
    expect(delete_data(&app, &owner, &format!("[{c},{a}]")).await, 200, success()).await;
    assert_same(&profile_data(&app, owner.user_id).await, &json!({}));
    app.stop().await;
}

#[actix_web::test]
async fn fields_not_editable_by_users_are_changed_only_by_administrators() {
    let app = spawn_app().await;
    let member = app.create_user("", "m@agora.test", "Member", 400).await;
    let moderator = app.create_user("", "mod@agora.test", "Moderator", 300).await;
    let admin = app.create_user("", "a@agora.test", "Admin", 200).await;
    let locked = create(&app, &[("name", "Employee id"), ("field_type", "1"), ("editable_by_user", "false")]).await;
    let data = json!([{"id": locked, "value": "42"}]);
    let refused = error("You are not allowed to change this field. Contact an administrator to update it.");
    for who in [&member, &moderator] {
        expect(set_data(&app, who, data.clone()).await, 400, refused.clone()).await;
        expect(delete_data(&app, who, &format!("[{locked}]")).await, 400, refused.clone()).await;
    }
    expect(set_data(&app, &admin, data.clone()).await, 200, success()).await;
    expect(set_data(&app, &app.owner, data).await, 200, success()).await;
    assert_same(
        &profile_data(&app, admin.user_id).await,
        &json!({locked.to_string(): {"value": "42", "rendered_value": "<p>42</p>"}}),
    );
    app.stop().await;
}

#[actix_web::test]
async fn events_reach_every_active_user_of_the_organization_only() {
    let app = spawn_app().await;
    let member = app.create_user("", "m@agora.test", "Member", 400).await;
    let outsider = app.create_realm("acme", "boss@acme.test").await;
    let types = r#"["custom_profile_fields","realm_user"]"#;
    let mut owner_watch = Watch::new(&app, &app.owner, types).await;
    let mut member_watch = Watch::new(&app, &member, types).await;
    let mut outsider_watch = Watch::new(&app, &outsider, types).await;

    let id = create(&app, &[("name", "Bio"), ("field_type", "2"), ("hint", "About you")]).await;
    let field = json!({"id": id, "name": "Bio", "type": 2, "hint": "About you", "field_data": "", "order": id,
        "required": false, "editable_by_user": true});
    let created = json!([{"type": "custom_profile_fields", "fields": [field]}]);
    assert_same(&Value::Array(owner_watch.events(&app).await), &created);
    assert_same(&Value::Array(member_watch.events(&app).await), &created);

    expect(set_data(&app, &member, json!([{"id": id, "value": "Hello *there*"}])).await, 200, success()).await;
    // Saving the same value again changes nothing and sends nothing.
    expect(set_data(&app, &member, json!([{"id": id, "value": "Hello *there*"}])).await, 200, success()).await;
    expect(delete_data(&app, &member, &format!("[{id}]")).await, 200, success()).await;
    let changed = json!([
        {"type": "realm_user", "op": "update", "person": {"user_id": member.user_id,
            "custom_profile_field": {"id": id, "value": "Hello *there*", "rendered_value": "<p>Hello <em>there</em></p>"}}},
        {"type": "realm_user", "op": "update", "person": {"user_id": member.user_id,
            "custom_profile_field": {"id": id, "value": null}}},
    ]);
    assert_same(&Value::Array(owner_watch.events(&app).await), &changed);
    assert_same(&Value::Array(member_watch.events(&app).await), &changed);

    expect(
        send(&app, &app.owner, Method::PATCH, &format!("/realm/profile_fields/{id}"), &[("required", "true")]).await,
        200,
        success(),
    )
    .await;
    expect(reorder(&app, &format!("[{id}]")).await, 200, success()).await;
    expect(send(&app, &app.owner, Method::DELETE, &format!("/realm/profile_fields/{id}"), &[]).await, 200, success())
        .await;
    let mut updated = field.clone();
    updated["required"] = json!(true);
    let mut reordered = updated.clone();
    reordered["order"] = json!(0);
    let changes = json!([
        {"type": "custom_profile_fields", "fields": [updated]},
        {"type": "custom_profile_fields", "fields": [reordered]},
        {"type": "custom_profile_fields", "fields": []},
    ]);
    assert_same(&Value::Array(member_watch.events(&app).await), &changes);
    assert_same(&Value::Array(owner_watch.events(&app).await), &changes);
    assert_eq!(outsider_watch.events(&app).await, Vec::<Value>::new());
    // Refused changes send nothing.
    expect(
        send(&app, &member, Method::POST, "/realm/profile_fields", &[("name", "X"), ("field_type", "1")]).await,
        400,
        must_be_admin(),
    )
    .await;
    assert_eq!(owner_watch.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

#[actix_web::test]
async fn register_sends_the_fields_and_their_types() {
    let app = spawn_app().await;
    let id = create(&app, &[("name", "Team"), ("field_type", "1"), ("display_in_profile_summary", "true")]).await;
    let state = register(&app, &app.owner, &[("fetch_event_types", r#"["custom_profile_fields"]"#)]).await;
    assert_same(
        &state["custom_profile_fields"],
        &json!([{"id": id, "name": "Team", "type": 1, "hint": "", "field_data": "", "order": id, "required": false,
            "editable_by_user": true, "display_in_profile_summary": true}]),
    );
    assert_eq!(state["custom_profile_field_types"]["SHORT_TEXT"], json!({"id": 1, "name": "Text (short)"}));
    app.stop().await;
}

#[actix_web::test]
async fn fields_and_values_survive_a_restart() {
    let app = spawn_app().await;
    let a = create(&app, &[("name", "A"), ("field_type", "1")]).await;
    let b = create(&app, &[("name", "B"), ("field_type", "3"), ("field_data", CHOICES), ("editable_by_user", "false")])
        .await;
    expect(reorder(&app, &format!("[{b},{a}]")).await, 200, success()).await;
    let data = json!([{"id": a, "value": "_a_"}, {"id": b, "value": "0"}]);
    expect(set_data(&app, &app.owner, data).await, 200, success()).await;
    let fields_before = fields(&app, &app.owner).await;
    let data_before = profile_data(&app, app.owner.user_id).await;
    let data_dir = app.data_dir.clone();
    let _tmp = app.stop().await;

    let app = spawn_app_at(&data_dir).await;
    assert_same(&fields(&app, &app.owner).await, &fields_before);
    assert_same(&profile_data(&app, app.owner.user_id).await, &data_before);
    assert_eq!(data_before[a.to_string()]["rendered_value"], "<p><em>a</em></p>");
    app.stop().await;
}

#[actix_web::test]
async fn unknown_paths_and_methods() {
    let app = spawn_app().await;
    let response = send(&app, &app.owner, Method::PATCH, "/realm/profile_fields/abc", &[]).await;
    expect(response, 404, json!({"result": "error", "msg": "Not Found", "code": "NOT_FOUND"})).await;
    let response = send(&app, &app.owner, Method::GET, "/realm/profile_fields/1", &[]).await;
    assert_eq!(response.status().as_u16(), 405);
    let response = send(&app, &app.owner, Method::GET, "/users/me/profile_data", &[]).await;
    assert_eq!(response.status().as_u16(), 405);
    app.stop().await;
}

/// Clients without `pronouns_field_type_supported` see pronouns fields as short text, in
/// register and in events.
#[actix_web::test]
async fn pronouns_fields_are_short_text_for_clients_that_do_not_know_them() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let caps = r#"{"notification_settings_null": false, "pronouns_field_type_supported": false}"#;
    let mut old =
        Watch::with_form(&app, &o, &[("event_types", r#"["custom_profile_fields"]"#), ("client_capabilities", caps)])
            .await;
    let mut new = Watch::new(&app, &o, r#"["custom_profile_fields"]"#).await;
    let form = [("name", "Pronouns"), ("field_type", "8")];
    let response = app.as_user(&o, Method::POST, "/realm/profile_fields").form(&form).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(old.events(&app).await[0]["fields"][0]["type"], json!(1));
    assert_eq!(new.events(&app).await[0]["fields"][0]["type"], json!(8));

    let fetch = [("fetch_event_types", r#"["custom_profile_fields"]"#), ("client_capabilities", caps)];
    let state = register(&app, &o, &fetch).await;
    assert_eq!(state["custom_profile_fields"][0]["type"], json!(1));
    assert!(state["custom_profile_field_types"].get("PRONOUNS").is_none());
    let state = register(&app, &o, &fetch[..1]).await;
    assert_eq!(state["custom_profile_fields"][0]["type"], json!(8));
    assert_eq!(state["custom_profile_field_types"]["PRONOUNS"]["id"], json!(8));
    app.stop().await;
}

/// Stored script: text fields' Markdown makes no link to `javascript:` (plain or
/// entity-encoded); `rendered_value` shows it as written.
#[actix_web::test]
async fn profile_values_with_script_links_are_rendered_as_text() {
    let app = spawn_app().await;
    let member = app.create_user("", "m@agora.test", "Member", 400).await;
    let short = create(&app, &[("name", "Bio"), ("field_type", "1")]).await;
    let long = create(&app, &[("name", "About"), ("field_type", "2")]).await;
    let data = json!([
        {"id": short, "value": "[x](javascript:alert(1))"},
        {"id": long, "value": "[y](&#106;avascript:alert(1))\n\n![z](javascript&colon;alert(2))"},
    ]);
    expect(set_data(&app, &member, data).await, 200, success()).await;
    let expected = json!({
        short.to_string(): {"value": "[x](javascript:alert(1))", "rendered_value": "<p>[x](javascript:alert(1))</p>"},
        long.to_string(): {"value": "[y](&#106;avascript:alert(1))\n\n![z](javascript&colon;alert(2))",
            "rendered_value": "<p>[y](&amp;#106;avascript:alert(1))</p>\n<p>![z](javascript&amp;colon;alert(2))</p>"},
    });
    assert_same(&profile_data(&app, member.user_id).await, &expected);
}
