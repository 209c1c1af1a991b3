//! User administration over HTTP: `GET /users`, `GET /users/me`, `GET /users/{user_id|email}`,
//! `PATCH /users/{user_id}`, deactivation and reactivation, and the events they send.

use agora_actors::ids::UserId;
use agora_actors::realm::model::Role;
use agora_actors::realm::users::CreateUser;
use agora_actors::realm::users::NewUser;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    assert_same, error, expect, gravatar_default, json, poll_now, queue_id, register, spawn_app, success, Creds,
    TestApp, Watch,
};

/// Checks `date_joined` is Zulip's minute-precision form, within a minute of now, and
/// returns it.
fn date_joined(body: &Value) -> Value {
    let s = body["date_joined"].as_str().unwrap();
    let parsed = chrono::DateTime::parse_from_str(&format!("{s}:00"), "%Y-%m-%dT%H:%M%z:00").unwrap_or_else(|e| {
        panic!("{s}: {e}");
    });
    assert!(s.ends_with("+00:00") && s.len() == "2026-11-21T05:21+00:00".len(), "{s}");
    let age = chrono::Utc::now().timestamp() - parsed.timestamp();
    assert!((0..=120).contains(&age), "{s}");
    body["date_joined"].clone()
}

#[actix_web::test]
async fn own_profile_has_every_field() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let (status, body) = json(app.as_user(&o, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!(status, 200);
    let expected = json!({
        "result": "success",
        "msg": "",
        "email": "owner@agora.test",
        "user_id": 1,
        "avatar_version": 1,
        "is_admin": true,
        "is_owner": true,
        "is_guest": false,
        "role": 100,
        "is_bot": false,
        "full_name": "Organization Owner",
        "timezone": "",
        "is_active": true,
        "date_joined": date_joined(&body),
        "delivery_email": "owner@agora.test",
        "is_imported_stub": false,
        // A new organization's accounts get Jdenticons (Zulip 12), given even to clients
        // that compute gravatars.
        "avatar_url": "/user_avatars/1/jdenticon/1.png?version=1",
        "profile_data": {},
        // Welcome Bot's message to the organization's first owner.
        "max_message_id": 1,
    });
    assert_same(&body, &expected);
    app.stop().await;
}

#[actix_web::test]
async fn other_users_by_id_and_by_email() {
    let app = spawn_app().await;
    gravatar_default(&app).await;
    let alice = app.create_user("", "alice@agora.test", "Alice Adams", 600).await;
    let o = app.owner.clone();

    let (status, body) =
        json(app.as_user(&o, Method::GET, &format!("/users/{}", alice.user_id)).send().await.unwrap()).await;
    assert_eq!(status, 200);
    let user = json!({
        "email": "alice@agora.test",
        "user_id": alice.user_id,
        "avatar_version": 1,
        "is_admin": false,
        "is_owner": false,
        "is_guest": true,
        "role": 600,
        "is_bot": false,
        "full_name": "Alice Adams",
        "timezone": "",
        "is_active": true,
        "date_joined": date_joined(&body["user"]),
        "delivery_email": "alice@agora.test",
        "is_imported_stub": false,
        // The address is the real one, so the client computes the gravatar itself.
        "avatar_url": null,
    });
    assert_same(&body, &json!({"result": "success", "msg": "", "user": user}));

    let (_, by_email) = json(app.as_user(&o, Method::GET, "/users/ALICE@agora.test").send().await.unwrap()).await;
    assert_same(&by_email["user"], &user);

    let path = format!("/users/{}?client_gravatar=false&include_custom_profile_fields=true", alice.user_id);
    let (_, body) = json(app.as_user(&o, Method::GET, &path).send().await.unwrap()).await;
    assert_eq!(
        body["user"]["avatar_url"],
        "https://secure.gravatar.com/avatar/bb70480bd1937fc7c991436e727595ae?d=identicon&version=1"
    );
    assert_eq!(body["user"]["profile_data"], json!({}));

    // A guest sees the owner too.
    let (status, body) = json(app.as_user(&alice, Method::GET, "/users/1").send().await.unwrap()).await;
    assert_eq!((status, body["user"]["full_name"].as_str()), (200, Some("Organization Owner")));
    app.stop().await;
}

#[actix_web::test]
async fn unknown_users_are_bad_requests() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let no_such_user = json!({"result": "error", "msg": "No such user", "code": "BAD_REQUEST"});
    for path in ["/users/999", "/users/99999999999999999999999", "/users/nobody@agora.test"] {
        let response = app.as_user(&o, Method::GET, path).send().await.unwrap();
        expect(response, 400, no_such_user.clone()).await;
    }
    app.stop().await;
}

/// An administrator allowed to create users (as `agora create-user --can-create-users`).
pub async fn create_user_admin(app: &crate::helpers::TestApp) -> crate::helpers::Creds {
    use agora::admin::AdminRequest;
    use agora_actors::secrets::{hash_password, HashCost};
    let request = AdminRequest::CreateUser {
        subdomain: String::new(),
        email: "admin@agora.test".into(),
        full_name: "Admin".into(),
        role: 200,
        password_hash: Some(hash_password("pw-admin", HashCost::cheapest()).unwrap()),
        can_create_users: true,
    };
    let out = request.run_in_server(&app.realms).await.unwrap();
    crate::helpers::Creds {
        email: "admin@agora.test".into(),
        password: "pw-admin".into(),
        api_key: out["api_key"].as_str().unwrap().into(),
        user_id: out["user_id"].as_i64().unwrap(),
        host: crate::helpers::HOST.into(),
    }
}

/// A bot owned by `owner`, created through the realm actor (bots have no endpoint yet).
async fn create_bot(app: &TestApp, owner: i64) -> i64 {
    let new = NewUser {
        bot_type: Some(1),
        bot_owner_id: Some(UserId(owner)),
        ..NewUser::human("helper-bot@agora.test", "Helper Bot", Role::Member, None)
    };
    app.realm("").addr.send(CreateUser(new)).await.unwrap().unwrap().user_id.0
}

async fn patch(app: &TestApp, who: &Creds, target: i64, form: &[(&str, &str)]) -> reqwest::Response {
    app.as_user(who, Method::PATCH, &format!("/users/{target}")).form(form).send().await.unwrap()
}

async fn role_of(app: &TestApp, who: &Creds, target: i64) -> i64 {
    let (_, body) = json(app.as_user(who, Method::GET, &format!("/users/{target}")).send().await.unwrap()).await;
    body["user"]["role"].as_i64().unwrap()
}

#[actix_web::test]
async fn the_user_list_has_everyone_with_bots_and_deactivated_users() {
    let app = spawn_app().await;
    gravatar_default(&app).await;
    let o = app.owner.clone();
    let member = app.create_user("", "member@agora.test", "Member Mo", 400).await;
    let gone = app.create_user("", "gone@agora.test", "Gone Gus", 400).await;
    let bot = create_bot(&app, member.user_id).await;
    expect(app.as_user(&o, Method::DELETE, &format!("/users/{}", gone.user_id)).send().await.unwrap(), 200, success())
        .await;

    let (status, body) = json(app.as_user(&member, Method::GET, "/users").send().await.unwrap()).await;
    assert_eq!(status, 200);
    let members = body["members"].as_array().unwrap();
    let ids: Vec<i64> = members.iter().map(|m| m["user_id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [1, member.user_id, gone.user_id, bot]);
    let bot_dict = &members[3];
    assert_same(
        bot_dict,
        &json!({
            "email": "helper-bot@agora.test",
            "user_id": bot,
            "avatar_version": 1,
            "is_admin": false,
            "is_owner": false,
            "is_guest": false,
            "role": 400,
            "is_bot": true,
            "full_name": "Helper Bot",
            "timezone": "",
            "is_active": true,
            "date_joined": date_joined(bot_dict),
            "delivery_email": "helper-bot@agora.test",
            "is_imported_stub": false,
            "avatar_url": null,
            "bot_type": 1,
            "bot_owner_id": member.user_id,
        }),
    );
    assert_eq!(members[2]["is_active"], json!(false));
    assert_eq!(members[1].get("profile_data"), None);

    // `user_ids` picks users in id order; custom profile data on request; real avatars.
    let path = format!("/users?user_ids=[{},1]&include_custom_profile_fields=true&client_gravatar=false", gone.user_id);
    let (status, body) = json(app.as_user(&member, Method::GET, &path).send().await.unwrap()).await;
    assert_eq!(status, 200);
    let ids: Vec<i64> = body["members"].as_array().unwrap().iter().map(|m| m["user_id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [1, gone.user_id]);
    assert_eq!(body["members"][0]["profile_data"], json!({}));
    // The owner's, made before Gravatar was the default, is a Jdenticon.
    assert_eq!(body["members"][0]["avatar_url"], json!("/user_avatars/1/jdenticon/1.png?version=1"));

    let response = app.as_user(&member, Method::GET, "/users?user_ids=[1,9999]").send().await.unwrap();
    expect(response, 400, error("Invalid user ID: 9999")).await;
    app.stop().await;
}

#[actix_web::test]
async fn role_changes_follow_zulips_rules() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let admin = app.create_user("", "admin2@agora.test", "Admin Ann", 200).await;
    let member = app.create_user("", "member@agora.test", "Member Mo", 400).await;
    let guest = app.create_user("", "guest@agora.test", "Guest Gil", 600).await;

    // Members administer nobody; unknown users come first.
    let response = patch(&app, &member, guest.user_id, &[("role", "400")]).await;
    expect(response, 400, error("Insufficient permission")).await;
    expect(patch(&app, &member, 999, &[("role", "400")]).await, 400, error("No such user")).await;
    // The value is checked as it is parsed, before any permission.
    let invalid_role = error("Invalid role: Value error, Not in the list of possible values");
    expect(patch(&app, &admin, member.user_id, &[("role", "500")]).await, 400, invalid_role.clone()).await;
    expect(patch(&app, &member, guest.user_id, &[("role", "500")]).await, 400, invalid_role).await;

    // Only owners grant or remove the owner role.
    let must_be_owner =
        json!({"result": "error", "msg": "Must be an organization owner", "code": "UNAUTHORIZED_PRINCIPAL"});
    expect(patch(&app, &admin, member.user_id, &[("role", "100")]).await, 400, must_be_owner.clone()).await;
    expect(patch(&app, &admin, 1, &[("role", "200")]).await, 400, must_be_owner).await;

    // The only owner keeps the role, even when demoting themselves.
    let last_owner = error("The owner permission cannot be removed from the only organization owner.");
    expect(patch(&app, &o, 1, &[("role", "200")]).await, 400, last_owner).await;

    // A guest is not made an administrator (or owner) in one step.
    let guest_admin = error("Guests cannot be organization administrators");
    expect(patch(&app, &o, guest.user_id, &[("role", "200")]).await, 400, guest_admin.clone()).await;
    expect(patch(&app, &o, guest.user_id, &[("role", "100")]).await, 400, guest_admin).await;
    assert_eq!(role_of(&app, &o, guest.user_id).await, 600);

    // Administrators move people between the other roles.
    for role in ["300", "400", "600", "400"] {
        expect(patch(&app, &admin, member.user_id, &[("role", role)]).await, 200, success()).await;
        assert_eq!(role_of(&app, &o, member.user_id).await.to_string(), role);
    }
    // Owners make owners, and once there are two an owner may step down.
    expect(patch(&app, &o, member.user_id, &[("role", "100")]).await, 200, success()).await;
    expect(patch(&app, &o, 1, &[("role", "200")]).await, 200, success()).await;
    assert_eq!(role_of(&app, &o, 1).await, 200);
    // The demoted owner is now an administrator, who can no longer touch owners.
    let response = patch(&app, &o, member.user_id, &[("role", "400")]).await;
    expect(
        response,
        400,
        json!({"result": "error", "msg": "Must be an organization owner", "code": "UNAUTHORIZED_PRINCIPAL"}),
    )
    .await;
    // Setting the current role changes nothing and succeeds.
    expect(patch(&app, &admin, guest.user_id, &[("role", "600")]).await, 200, success()).await;
    app.stop().await;
}

#[actix_web::test]
async fn a_role_change_tells_everyone_and_moves_system_group_membership() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let member = app.create_user("", "member@agora.test", "Member Mo", 400).await;
    let guest = app.create_user("", "guest@agora.test", "Guest Gil", 600).await;
    let mut watch_member = Watch::new(&app, &member, r#"["realm_user", "user_group"]"#).await;
    let mut watch_guest = Watch::new(&app, &guest, r#"["realm_user", "user_group"]"#).await;

    let groups = crate::helpers::register(&app, &o, &[("fetch_event_types", r#"["realm_user_groups"]"#)]).await;
    let group_id = |name: &str| {
        groups["realm_user_groups"].as_array().unwrap().iter().find(|g| g["name"] == name).unwrap()["id"].clone()
    };
    expect(patch(&app, &o, member.user_id, &[("role", "300")]).await, 200, success()).await;
    let expected = vec![
        json!({"type": "realm_user", "op": "update", "person": {"user_id": member.user_id, "role": 300}}),
        json!({"type": "user_group", "op": "remove_members", "group_id": group_id("role:members"), "user_ids": [member.user_id]}),
        json!({"type": "user_group", "op": "remove_members", "group_id": group_id("role:fullmembers"), "user_ids": [member.user_id]}),
        json!({"type": "user_group", "op": "add_members", "group_id": group_id("role:moderators"), "user_ids": [member.user_id]}),
    ];
    assert_eq!(watch_member.events(&app).await, expected);
    assert_eq!(watch_guest.events(&app).await, expected);

    // The new role and membership are what register reports, before and after a restart.
    let data_dir = app.data_dir.clone();
    let mut tmp = None;
    let mut app = app;
    for restart in [false, true] {
        if restart {
            tmp = app.stop().await;
            app = crate::helpers::spawn_app_at(&data_dir).await;
        }
        let fetch = [("fetch_event_types", r#"["realm_user_groups", "realm_user"]"#)];
        let state = crate::helpers::register(&app, &o, &fetch).await;
        let members_of = |name: &str| {
            state["realm_user_groups"].as_array().unwrap().iter().find(|g| g["name"] == name).unwrap()["members"]
                .clone()
        };
        assert_eq!(members_of("role:moderators"), json!([member.user_id]));
        assert_eq!(members_of("role:members"), json!([]));
        assert_eq!(members_of("role:fullmembers"), json!([]));
        assert_eq!(state["realm_users"][1]["role"], json!(300));
    }
    app.stop().await;
    drop(tmp);
}

#[actix_web::test]
async fn full_names_are_validated_and_announced() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let member = app.create_user("", "member@agora.test", "Member Mo", 400).await;
    let mut watch = Watch::new(&app, &member, r#"["realm_user"]"#).await;

    for (name, msg) in [("M", "Name too short!"), ("Mo *bold*", "Invalid characters in name!")] {
        expect(patch(&app, &o, member.user_id, &[("full_name", name)]).await, 400, error(msg)).await;
    }
    let long = "x".repeat(101);
    expect(patch(&app, &o, member.user_id, &[("full_name", long.as_str())]).await, 400, error("Name too long!")).await;
    // Blank names are ignored, as in Zulip.
    expect(patch(&app, &o, member.user_id, &[("full_name", "  ")]).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());

    expect(patch(&app, &o, member.user_id, &[("full_name", " Maurice Moss ")]).await, 200, success()).await;
    assert_eq!(
        watch.events(&app).await,
        [
            json!({"type": "realm_user", "op": "update", "person": {"user_id": member.user_id, "full_name": "Maurice Moss"}})
        ]
    );
    let response = patch(&app, &member, 1, &[("full_name", "Not The Owner")]).await;
    expect(response, 400, error("Insufficient permission")).await;
    // Unknown parameters are reported, not silently dropped.
    let (status, body) = json(patch(&app, &o, member.user_id, &[("nickname", "Mo")]).await).await;
    assert_eq!((status, body["ignored_parameters_unsupported"].clone()), (200, json!(["nickname"])));
    app.stop().await;
}

#[actix_web::test]
async fn changing_emails_needs_the_permission() {
    let app = spawn_app().await;
    gravatar_default(&app).await;
    let o = app.owner.clone();
    let member = app.create_user("", "member@agora.test", "Member Mo", 400).await;
    let form = [("new_email", "mo@agora.test")];
    expect(patch(&app, &o, member.user_id, &form).await, 400, error("User not authorized to change user emails")).await;

    let new = NewUser { can_change_user_emails: true, ..NewUser::human("hr@agora.test", "H R", Role::Owner, None) };
    let created = app.realm("").addr.send(CreateUser(new)).await.unwrap().unwrap();
    let hr = Creds {
        email: "hr@agora.test".into(),
        password: String::new(),
        api_key: created.api_key,
        user_id: created.user_id.0,
        host: crate::helpers::HOST.into(),
    };
    let mut watch = Watch::new(&app, &o, r#"["realm_user"]"#).await;
    for (email, msg) in [
        ("not-an-email", "Invalid new email address."),
        ("OWNER@agora.test", "New email value error: Already has an account."),
    ] {
        expect(patch(&app, &hr, member.user_id, &[("new_email", email)]).await, 400, error(msg)).await;
    }
    expect(patch(&app, &hr, member.user_id, &form).await, 200, success()).await;
    let events = watch.events(&app).await;
    assert_eq!(
        events[0],
        json!({"type": "realm_user", "op": "update", "person": {"user_id": member.user_id, "delivery_email": "mo@agora.test"}})
    );
    // The gravatar follows the address; then the API email, which is the real one.
    let gravatar = "https://secure.gravatar.com/avatar/cdae6dfa1985162447df7c85631f34bc?d=identicon&version=1";
    assert_eq!(events[1]["person"]["avatar_url"], gravatar);
    let new_email = json!({"user_id": member.user_id, "new_email": "mo@agora.test"});
    assert_eq!(events[2], json!({"type": "realm_user", "op": "update", "person": new_email}));
    assert_eq!(events.len(), 3);

    // The account now logs in and authenticates with the new address only.
    let renamed = Creds { email: "mo@agora.test".into(), ..member.clone() };
    assert_eq!(app.as_user(&renamed, Method::GET, "/users/me").send().await.unwrap().status(), 200);
    assert_eq!(app.as_user(&member, Method::GET, "/users/me").send().await.unwrap().status(), 401);

    // With the address visible to administrators only, a member hears of the new avatar
    // but not of the address, and the API email (a fake one) does not change.
    let form = [("email_address_visibility", "3")];
    let response = app.as_user(&renamed, Method::PATCH, "/settings").form(&form).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let other = app.create_user("", "other@agora.test", "Other Olga", 400).await;
    let mut member_watch = Watch::new(&app, &other, r#"["realm_user"]"#).await;
    watch.events(&app).await;
    expect(patch(&app, &hr, member.user_id, &[("new_email", "mo2@agora.test")]).await, 200, success()).await;
    let owner_events = watch.events(&app).await;
    assert_eq!(
        owner_events[0],
        json!({"type": "realm_user", "op": "update", "person": {"user_id": member.user_id, "delivery_email": "mo2@agora.test"}})
    );
    assert_eq!(owner_events.len(), 2);
    let member_events = member_watch.events(&app).await;
    assert_eq!(member_events.len(), 1);
    assert_eq!(member_events[0]["person"]["avatar_version"], json!(1));
    assert!(member_events[0]["person"].get("delivery_email").is_none());
    app.stop().await;
}

#[actix_web::test]
async fn the_last_user_and_the_last_owner_cannot_leave() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let last_user = json!({
        "result": "error",
        "msg": "Cannot deactivate the only user.",
        "is_last_owner": false,
        "entity": "user",
        "code": "CANNOT_DEACTIVATE_LAST_USER",
    });
    expect(app.as_user(&o, Method::DELETE, "/users/me").send().await.unwrap(), 400, last_user).await;

    let member = app.create_user("", "member@agora.test", "Member Mo", 400).await;
    let last_owner = json!({
        "result": "error",
        "msg": "Cannot deactivate the only organization owner.",
        "is_last_owner": true,
        "entity": "organization owner",
        "code": "CANNOT_DEACTIVATE_LAST_USER",
    });
    expect(app.as_user(&o, Method::DELETE, "/users/me").send().await.unwrap(), 400, last_owner).await;

    // A member may leave; their key stops working at once.
    expect(app.as_user(&member, Method::DELETE, "/users/me").send().await.unwrap(), 200, success()).await;
    let (status, body) = json(app.as_user(&member, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!((status, body["msg"].as_str()), (401, Some("Account is deactivated")));
    app.stop().await;
}

#[actix_web::test]
async fn administrators_deactivate_and_reactivate_accounts() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let admin = app.create_user("", "admin2@agora.test", "Admin Ann", 200).await;
    let member = app.create_user("", "member@agora.test", "Member Mo", 400).await;
    let other = app.create_user("", "other@agora.test", "Other Olga", 400).await;
    let bot = create_bot(&app, member.user_id).await;

    let delete = |who: &Creds, target: i64| app.as_user(who, Method::DELETE, &format!("/users/{target}")).send();
    expect(delete(&other, member.user_id).await.unwrap(), 400, error("Insufficient permission")).await;
    let must_be_owner =
        json!({"result": "error", "msg": "Must be an organization owner", "code": "UNAUTHORIZED_PRINCIPAL"});
    expect(delete(&admin, 1).await.unwrap(), 400, must_be_owner).await;
    expect(delete(&o, 1).await.unwrap(), 400, error("Cannot deactivate the only organization owner")).await;
    expect(delete(&o, bot).await.unwrap(), 400, error("No such user")).await;
    let too_long = "x".repeat(2001);
    let response = app
        .as_user(&admin, Method::DELETE, &format!("/users/{}", member.user_id))
        .form(&[("deactivation_notification_comment", too_long.as_str())])
        .send()
        .await
        .unwrap();
    expect(response, 400, error("deactivation_notification_comment is too long (limit: 2000 characters)")).await;

    // The member's queue goes with the account; everyone else hears of it.
    let member_queue = crate::helpers::register(&app, &member, &[]).await;
    let member_queue = crate::helpers::queue_id(&member_queue);
    let mut watch = Watch::new(&app, &other, r#"["realm_user"]"#).await;
    let response = app
        .as_user(&admin, Method::DELETE, &format!("/users/{}", member.user_id))
        .form(&[("deactivation_notification_comment", "Thanks for everything")])
        .send()
        .await
        .unwrap();
    expect(response, 200, success()).await;
    // The member's bot goes with them.
    let deactivated =
        |id: i64| json!({"type": "realm_user", "op": "update", "person": {"user_id": id, "is_active": false}});
    assert_eq!(watch.events(&app).await, [deactivated(member.user_id), deactivated(bot)]);
    assert_eq!(app.as_user(&member, Method::GET, "/users/me").send().await.unwrap().status(), 401);
    assert!(app.realm("").queues.get(&member_queue).is_none());
    expect(delete(&admin, member.user_id).await.unwrap(), 400, error("User is deactivated")).await;

    // Reactivation: administrators only; the account works again.
    let reactivate =
        |who: &Creds, target: i64| app.as_user(who, Method::POST, &format!("/users/{target}/reactivate")).send();
    expect(reactivate(&other, member.user_id).await.unwrap(), 400, error("Insufficient permission")).await;
    expect(reactivate(&admin, member.user_id).await.unwrap(), 200, success()).await;
    let reactivated =
        json!({"type": "realm_user", "op": "update", "person": {"user_id": member.user_id, "is_active": true}});
    assert_eq!(watch.events(&app).await, [reactivated]);
    assert_eq!(app.as_user(&member, Method::GET, "/users/me").send().await.unwrap().status(), 200);
    expect(reactivate(&admin, member.user_id).await.unwrap(), 400, error("User is already active")).await;
    // The old queue stays gone; bots come back one by one.
    let response = poll_now(&app, &member, &member_queue, -1).send().await.unwrap();
    let (status, body) = json(response).await;
    assert_eq!((status, body["code"].as_str()), (400, Some("BAD_EVENT_QUEUE_ID")));
    let (_, body) = json(app.as_user(&o, Method::GET, &format!("/users/{bot}")).send().await.unwrap()).await;
    assert_eq!(body["user"]["is_active"], json!(false));
    expect(reactivate(&admin, 999).await.unwrap(), 400, error("No such user")).await;
    app.stop().await;
}

#[actix_web::test]
async fn creating_users_needs_an_administrator_allowed_to() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let form = [("email", "new@agora.test"), ("password", "pw-new-person"), ("full_name", "New Person")];
    let response = app.as_user(&o, Method::POST, "/users").form(&form).send().await.unwrap();
    expect(
        response,
        400,
        json!({"result": "error", "msg": "User not authorized to create users", "code": "BAD_REQUEST"}),
    )
    .await;
    let member = app.create_user("", "m@agora.test", "Member", 400).await;
    let response = app.as_user(&member, Method::POST, "/users").form(&form).send().await.unwrap();
    expect(
        response,
        400,
        json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"}),
    )
    .await;
    let admin = create_user_admin(&app).await;
    let qid = queue_id(&register(&app, &o, &[("event_types", r#"["realm_user"]"#)]).await);
    for (form, msg) in [
        ([("email", "new@agora.test"), ("password", "pw"), ("full_name", "New Person")], "The password is too weak."),
        (
            [("email", "new@agora.test"), ("password", "password"), ("full_name", "New Person")],
            "The password is too weak.",
        ),
        ([("email", "not-an-email"), ("password", "pw"), ("full_name", "New Person")], "Bad name or username"),
        ([("email", "not-an-email"), ("password", "pw"), ("full_name", "N")], "Name too short!"),
        ([("email", "owner@agora.test"), ("password", "pw"), ("full_name", "New Person")], "Email is already in use."),
    ] {
        let response = app.as_user(&admin, Method::POST, "/users").form(&form).send().await.unwrap();
        expect(response, 400, json!({"result": "error", "msg": msg, "code": "BAD_REQUEST"})).await;
    }
    let response = app.as_user(&admin, Method::POST, "/users").form(&[("email", "x@agora.test")]).send().await.unwrap();
    expect(response, 400, json!({"result": "error", "msg": "Missing 'password' argument", "var_name": "password", "code": "REQUEST_VARIABLE_MISSING"})).await;
    let (status, body) = json(app.as_user(&admin, Method::POST, "/users").form(&form).send().await.unwrap()).await;
    assert_eq!(status, 200);
    let new_id = body["user_id"].as_i64().unwrap();
    assert_same(&body, &json!({"result": "success", "msg": "", "user_id": new_id}));
    let (_, body) = json(poll_now(&app, &o, &qid, -1).send().await.unwrap()).await;
    assert_eq!(body["events"][0]["person"]["user_id"], json!(new_id));
    let response = app.as_user(&admin, Method::POST, "/users").form(&form).send().await.unwrap();
    expect(response, 400, json!({"result": "error", "msg": "Email is already in use.", "code": "BAD_REQUEST"})).await;
    // The new account works with its password.
    let response = app
        .request(Method::POST, "/fetch_api_key")
        .form(&[("username", "new@agora.test"), ("password", "pw-new-person")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    app.stop().await;
}

#[actix_web::test]
async fn administrators_set_anyones_profile_data() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let member = app.create_user("", "member@agora.test", "Member Mo", 400).await;
    let form = [("name", "Desk"), ("field_type", "1"), ("editable_by_user", "false")];
    let (status, body) =
        json(app.as_user(&o, Method::POST, "/realm/profile_fields").form(&form).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let field = body["id"].as_i64().unwrap();
    let mut watch = Watch::new(&app, &member, r#"["realm_user"]"#).await;

    let unknown = r#"[{"id": 9001, "value": "x"}]"#;
    expect(patch(&app, &o, member.user_id, &[("profile_data", unknown)]).await, 400, error("Field id 9001 not found."))
        .await;
    // Nothing of a refused request is applied, even its valid parts.
    let response = patch(&app, &o, member.user_id, &[("full_name", "Maurice Moss"), ("profile_data", unknown)]).await;
    expect(response, 400, error("Field id 9001 not found.")).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    let path = format!("/users/{}?include_custom_profile_fields=true", member.user_id);
    let (_, body) = json(app.as_user(&o, Method::GET, &path).send().await.unwrap()).await;
    assert_eq!((body["user"]["full_name"].as_str(), &body["user"]["profile_data"]), (Some("Member Mo"), &json!({})));

    let data = format!(r#"[{{"id": {field}, "value": "*4th* floor"}}]"#);
    expect(patch(&app, &o, member.user_id, &[("profile_data", data.as_str())]).await, 200, success()).await;
    let value = json!({"id": field, "value": "*4th* floor", "rendered_value": "<p><em>4th</em> floor</p>"});
    assert_eq!(
        watch.events(&app).await,
        [
            json!({"type": "realm_user", "op": "update", "person": {"user_id": member.user_id, "custom_profile_field": value}})
        ]
    );
    let (_, body) = json(app.as_user(&member, Method::GET, &path).send().await.unwrap()).await;
    assert_eq!(
        body["user"]["profile_data"],
        json!({field.to_string(): {"value": "*4th* floor", "rendered_value": "<p><em>4th</em> floor</p>"}})
    );
    // The member may not edit it themselves; an empty value from an administrator removes it.
    let response = app
        .as_user(&member, Method::PATCH, "/users/me/profile_data")
        .form(&[("data", data.as_str())])
        .send()
        .await
        .unwrap();
    let not_editable = "You are not allowed to change this field. Contact an administrator to update it.";
    expect(response, 400, error(not_editable)).await;
    let clear = format!(r#"[{{"id": {field}, "value": ""}}]"#);
    expect(patch(&app, &o, member.user_id, &[("profile_data", clear.as_str())]).await, 200, success()).await;
    let (_, body) = json(app.as_user(&member, Method::GET, &path).send().await.unwrap()).await;
    assert_eq!(body["user"]["profile_data"], json!({}));
    app.stop().await;
}

/// Each `email_address_visibility` against each requester role: the real address in
/// `delivery_email` (or null), and the API `email` (the real one only for "everyone").
#[actix_web::test]
async fn email_visibility_matrix_over_the_api() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let target = app.create_user("", "target@agora.test", "Target Tess", 400).await;
    let viewers = [
        app.create_user("", "admin2@agora.test", "Admin Ann", 200).await,
        app.create_user("", "mod@agora.test", "Moderator Max", 300).await,
        app.create_user("", "member@agora.test", "Member Mo", 400).await,
        app.create_user("", "guest@agora.test", "Guest Gil", 600).await,
    ];
    let fake = format!("user{}@agora.test", target.user_id);
    // Viewers: owner, administrator, moderator, member, guest.
    let matrix = [
        (1, [true, true, true, true, true]),
        (2, [true, true, true, true, false]),
        (5, [true, true, true, false, false]),
        (3, [true, true, false, false, false]),
        (4, [false, false, false, false, false]),
    ];
    for (visibility, sees) in matrix {
        let form = [("email_address_visibility", visibility.to_string())];
        let response = app.as_user(&target, Method::PATCH, "/settings").form(&form).send().await.unwrap();
        assert_eq!(response.status(), 200, "visibility {visibility}");
        let api_email = if visibility == 1 { "target@agora.test" } else { fake.as_str() };
        for (viewer, sees) in std::iter::once(&o).chain(viewers.iter()).zip(sees) {
            let path = format!("/users/{}", target.user_id);
            let (_, one) = json(app.as_user(viewer, Method::GET, &path).send().await.unwrap()).await;
            let (_, all) = json(app.as_user(viewer, Method::GET, "/users").send().await.unwrap()).await;
            let listed = all["members"].as_array().unwrap().iter().find(|m| m["user_id"] == target.user_id).unwrap();
            let expected = if sees { json!("target@agora.test") } else { Value::Null };
            for dict in [&one["user"], listed] {
                assert_eq!(
                    (&dict["delivery_email"], dict["email"].as_str()),
                    (&expected, Some(api_email)),
                    "visibility {visibility}, viewer {}",
                    viewer.email
                );
            }
        }
        // The user always sees their own address.
        let (_, me) = json(app.as_user(&target, Method::GET, "/users/me").send().await.unwrap()).await;
        assert_eq!(me["delivery_email"], "target@agora.test");
    }
    app.stop().await;
}
