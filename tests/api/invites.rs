//! Invitations: `POST /invites` with its checks in Zulip's order and `INVITATION_FAILED`,
//! `GET /invites`, revoking, resending, reusable links, `invites_changed`, and the mail each
//! invitation leaves in the outbox.

use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;

/// Creates a channel as `who`; its id.
pub async fn make_channel(app: &TestApp, who: &Creds, name: &str, invite_only: bool) -> i64 {
    let subs = json!([{ "name": name }]).to_string();
    let private = invite_only.to_string();
    let (status, body) =
        json(post(app, who, "/users/me/subscriptions", &[("subscriptions", &subs), ("invite_only", &private)]).await)
            .await;
    assert_eq!(status, 200, "{body}");
    let (_, body) = json(send(app, who, Method::GET, &format!("/get_stream_id?stream={name}"), &[]).await).await;
    body["stream_id"].as_i64().unwrap()
}

/// The `.eml` files of the outbox, waiting (up to 10 s) until there are at least `count`.
pub fn outbox_mails(data_dir: &Path, count: usize) -> Vec<String> {
    let dir = data_dir.join("outbox");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "eml"))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        if files.len() >= count || Instant::now() > deadline {
            return files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The invitation link a mail carries.
pub fn link_in(mail: &str) -> String {
    // Quoted-printable's soft line breaks, as a mail program joins them.
    let mail = mail.replace("=\r\n", "").replace("=\n", "");
    let start = mail.find("<http").expect("a link") + 1;
    let end = start + mail[start..].find('>').unwrap();
    mail[start..end].to_owned()
}

/// The id of a system group.
pub async fn system_group(app: &TestApp, who: &Creds, name: &str) -> i64 {
    let (_, body) = json(send(app, who, Method::GET, "/user_groups", &[]).await).await;
    body["user_groups"].as_array().unwrap().iter().find(|g| g["name"] == name).unwrap()["id"].as_i64().unwrap()
}

fn invitation_failed(msg: &str, errors: Value, sent: bool, daily: bool) -> Value {
    json!({"result": "error", "msg": msg, "errors": errors, "sent_invitations": sent,
           "license_limit_reached": false, "daily_limit_reached": daily, "code": "INVITATION_FAILED"})
}

async fn invite(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> reqwest::Response {
    post(app, who, "/invites", form).await
}

async fn list(app: &TestApp, who: &Creds) -> Vec<Value> {
    let (status, body) = json(send(app, who, Method::GET, "/invites", &[]).await).await;
    assert_eq!(status, 200, "{body}");
    body["invites"].as_array().unwrap().clone()
}

#[actix_web::test]
async fn an_invitation_is_mailed_listed_resent_and_revoked() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let mut watch = Watch::new(&app, &owner, r#"["invites_changed"]"#).await;
    let form =
        [("invitee_emails", "Alice <alice@example.com>"), ("stream_ids", "[]"), ("invite_expires_in_minutes", "60")];
    expect(invite(&app, &owner, &form).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, vec![json!({"type": "invites_changed"})]);

    let invites = list(&app, &owner).await;
    assert_eq!(invites.len(), 1);
    let i = &invites[0];
    let id = i["id"].as_i64().unwrap();
    let invited = i["invited"].as_i64().unwrap();
    assert_same(
        i,
        &json!({"email": "alice@example.com", "invited_by_user_id": owner.user_id, "invited": invited,
                "expiry_date": invited + 3600, "id": id, "invited_as": 400, "is_multiuse": false,
                "notify_referrer_on_join": true}),
    );

    // The mail is in the outbox: from the organization, to the invitee, with the link.
    let mails = outbox_mails(&app.data_dir, 1);
    assert_eq!(mails.len(), 1);
    let mail = &mails[0];
    assert!(mail.contains("To: alice@example.com"), "{mail}");
    assert!(mail.contains("Subject: Organization Owner has invited you to join Agora"), "{mail}");
    assert!(mail.contains("wants you to join them on Zulip"), "{mail}");
    let link = link_in(mail);
    assert!(link.starts_with(&format!("http://{HOST}/accounts/do_confirm/")), "{link}");
    assert_eq!(link.rsplit('/').next().unwrap().len(), 24);

    // Mailed again: a second mail with the same link.
    expect(post(&app, &owner, &format!("/invites/{id}/resend"), &[]).await, 200, success()).await;
    let mails = outbox_mails(&app.data_dir, 2);
    assert_eq!(mails.len(), 2);
    assert_eq!(link_in(&mails[1]), link);

    expect(send(&app, &owner, Method::DELETE, &format!("/invites/{id}"), &[]).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, vec![json!({"type": "invites_changed"})]);
    assert_eq!(list(&app, &owner).await, Vec::<Value>::new());
    for (method, path) in [(Method::DELETE, format!("/invites/{id}")), (Method::POST, format!("/invites/{id}/resend"))]
    {
        expect(send(&app, &owner, method, &path, &[]).await, 400, error("No such invitation")).await;
    }
    app.stop().await;
}

#[actix_web::test]
async fn invitations_are_checked_in_zulips_order() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let member = app.create_user("", "member@example.com", "Member", 400).await;
    let guest = app.create_user("", "guest@example.com", "Guest", 600).await;
    let private = make_channel(&app, &owner, "secret", true).await;
    let public = make_channel(&app, &owner, "public", false).await;
    let ok = [("invitee_emails", "x@example.com"), ("stream_ids", "[]")];

    expect(invite(&app, &guest, &[]).await, 400, error("Not allowed for guest users")).await;
    expect(invite(&app, &member, &[("stream_ids", "[]")]).await, 400, missing("invitee_emails")).await;
    expect(invite(&app, &member, &[("invitee_emails", "x@example.com")]).await, 400, missing("stream_ids")).await;
    let bad_role = error("Invalid invite_as: Value error, Not in the list of possible values");
    expect(invite(&app, &member, &[ok[0], ok[1], ("invite_as", "500")]).await, 400, bad_role).await;
    let owner_only =
        json!({"result": "error", "msg": "Must be an organization owner", "code": "UNAUTHORIZED_PRINCIPAL"});
    expect(invite(&app, &member, &[ok[0], ok[1], ("invite_as", "100")]).await, 400, owner_only).await;
    let admin_only = error("Must be an organization administrator");
    expect(invite(&app, &member, &[ok[0], ok[1], ("invite_as", "300")]).await, 400, admin_only.clone()).await;
    expect(
        invite(&app, &member, &[("invitee_emails", ""), ok[1]]).await,
        400,
        error("You must specify at least one email address."),
    )
    .await;
    // A private channel the inviter cannot read is as unknown as a missing one.
    for id in [private, 9999] {
        let ids = format!("[{public},{id}]");
        let msg = format!("Invalid channel ID {id}. No invites were sent.");
        expect(invite(&app, &member, &[ok[0], ("stream_ids", &ids)]).await, 400, error(&msg)).await;
    }
    // Members may not add subscribers by default... but a default channel is fine.
    let ids = format!("[{public}]");
    let refused = error("You do not have permission to subscribe other users to channels.");
    let admins = system_group(&app, &owner, "role:administrators").await;
    let setting = json!({ "new": admins }).to_string();
    let patched = send(&app, &owner, Method::PATCH, "/realm", &[("can_add_subscribers_group", &setting)]).await;
    assert_eq!(patched.status(), 200);
    expect(invite(&app, &member, &[ok[0], ("stream_ids", &ids)]).await, 400, refused).await;
    expect(post(&app, &owner, "/default_streams", &[("stream_id", &public.to_string())]).await, 200, success()).await;
    expect(invite(&app, &member, &[("invitee_emails", "y@example.com"), ("stream_ids", &ids)]).await, 200, success())
        .await;
    expect(invite(&app, &member, &[ok[0], ok[1], ("group_ids", "[9999]")]).await, 400, error("Invalid user group"))
        .await;
    expect(invite(&app, &member, &[ok[0], ok[1], ("welcome_message_custom_text", "Hi")]).await, 400, admin_only).await;
    let long = "x".repeat(8001);
    expect(
        invite(&app, &owner, &[ok[0], ok[1], ("welcome_message_custom_text", &long)]).await,
        400,
        error("welcome_message_custom_text is too long (limit: 8000 characters)"),
    )
    .await;

    // Bad addresses refuse everything; existing accounts are reported, the others invited.
    let form = [("invitee_emails", "new1@example.com,not-an-address\nmember@example.com"), ok[1]];
    let errors = json!([
        ["not-an-address", "Invalid address.", false],
        ["member@example.com", "Already has an account.", false]
    ]);
    let msg = "Some emails did not validate, so we didn't send any invitations.";
    expect(invite(&app, &owner, &form).await, 400, invitation_failed(msg, errors, false, false)).await;
    let form = [("invitee_emails", "member@example.com, welcome-bot@zulip.com"), ok[1]];
    let errors = json!([
        ["member@example.com", "Already has an account.", false],
        ["welcome-bot@zulip.com", "Reserved for system bots.", false]
    ]);
    expect(
        invite(&app, &owner, &form).await,
        400,
        invitation_failed("We weren't able to invite anyone.", errors, false, false),
    )
    .await;
    let form = [("invitee_emails", "new2@example.com,member@example.com"), ok[1]];
    let msg = "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!";
    let errors = json!([["member@example.com", "Already has an account.", false]]);
    expect(invite(&app, &owner, &form).await, 400, invitation_failed(msg, errors, true, false)).await;
    let emails: Vec<Value> = list(&app, &owner).await.iter().map(|i| i["email"].clone()).collect();
    assert_eq!(emails, vec![json!("y@example.com"), json!("new2@example.com")]);
    // A member sees their own invitations only.
    let mine: Vec<Value> = list(&app, &member).await.iter().map(|i| i["email"].clone()).collect();
    assert_eq!(mine, vec![json!("y@example.com")]);
    app.stop().await;
}

#[actix_web::test]
async fn the_daily_limit_counts_every_mail() {
    let app = spawn_app_with(|s| s.invites.daily_limit = 2).await;
    let owner = app.owner.clone();
    let form = [("invitee_emails", "a@example.com,b@example.com"), ("stream_ids", "[]")];
    expect(invite(&app, &owner, &form).await, 200, success()).await;
    let msg = "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.";
    let form = [("invitee_emails", "c@example.com"), ("stream_ids", "[]")];
    expect(invite(&app, &owner, &form).await, 400, invitation_failed(msg, json!([]), false, true)).await;
    let id = list(&app, &owner).await[0]["id"].as_i64().unwrap();
    expect(
        post(&app, &owner, &format!("/invites/{id}/resend"), &[]).await,
        400,
        invitation_failed(msg, json!([]), false, true),
    )
    .await;
    app.stop().await;
}

#[actix_web::test]
async fn reusable_links_are_created_listed_and_revoked() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let member = app.create_user("", "member@example.com", "Member", 400).await;
    // Only administrators may create reusable links by default.
    expect(post(&app, &member, "/invites/multiuse", &[]).await, 400, error("Insufficient permission")).await;
    let mut watch = Watch::new(&app, &member, r#"["invites_changed"]"#).await;
    let (status, body) = json(
        post(&app, &owner, "/invites/multiuse", &[("invite_expires_in_minutes", "null"), ("invite_as", "600")]).await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let link = body["invite_link"].as_str().unwrap().to_owned();
    assert!(link.starts_with(&format!("http://{HOST}/join/")) && link.ends_with('/'), "{link}");
    // Members are not told of others' invitations.
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    let invites = list(&app, &owner).await;
    let id = invites[0]["id"].as_i64().unwrap();
    let invited = invites[0]["invited"].as_i64().unwrap();
    assert_same(
        &invites[0],
        &json!({"invited_by_user_id": owner.user_id, "invited": invited, "expiry_date": null, "id": id,
                "link_url": link, "invited_as": 600, "is_multiuse": true}),
    );
    let path = format!("/invites/multiuse/{id}");
    expect(send(&app, &member, Method::DELETE, &path, &[]).await, 400, error("Must be an organization administrator"))
        .await;
    expect(send(&app, &owner, Method::DELETE, &format!("/invites/{id}"), &[]).await, 400, error("No such invitation"))
        .await;
    expect(send(&app, &owner, Method::DELETE, &path, &[]).await, 200, success()).await;
    expect(send(&app, &owner, Method::DELETE, &path, &[]).await, 400, error("Invitation has already been revoked"))
        .await;
    expect(send(&app, &owner, Method::DELETE, "/invites/multiuse/9999", &[]).await, 400, error("No such invitation"))
        .await;
    assert_eq!(list(&app, &owner).await, Vec::<Value>::new());
    app.stop().await;
}

#[actix_web::test]
async fn deactivating_an_inviter_revokes_their_invitations() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let member = app.create_user("", "member@example.com", "Member", 400).await;
    let form = [("invitee_emails", "friend@example.com"), ("stream_ids", "[]")];
    expect(invite(&app, &member, &form).await, 200, success()).await;
    assert_eq!(list(&app, &owner).await.len(), 1);
    let mut watch = Watch::new(&app, &owner, r#"["invites_changed"]"#).await;
    let path = format!("/users/{}", member.user_id);
    expect(send(&app, &owner, Method::DELETE, &path, &[]).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, vec![json!({"type": "invites_changed"})]);
    assert_eq!(list(&app, &owner).await, Vec::<Value>::new());
    let link = link_in(&outbox_mails(&app.data_dir, 1)[0]);
    let page = crate::signup::get_page(&app, HOST, &crate::signup::path_of(&link)).await;
    assert_eq!(page.status, 410);
    app.stop().await;
}
