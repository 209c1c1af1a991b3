//! Joining through invitation links: the sign-up pages over plain HTTP (forms, anti-forgery
//! token, errors, the pages of unusable links) and what the new account gets: role,
//! channels, groups, the welcome messages, the inviter's notice, the signup announcement.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;
use crate::invites::{link_in, make_channel, outbox_mails, system_group};

/// A page fetched from the server: status, body and the anti-forgery cookie it set; for a
/// submitted form, where it sends the browser and whether it signed it in.
pub struct Page {
    pub status: u16,
    pub body: String,
    pub cookie: Option<String>,
    pub location: Option<String>,
    pub signed_in: bool,
}

/// The path of a link (the test server is reached by address, the organization by Host).
pub fn path_of(link: &str) -> String {
    let rest = link.split_once("://").unwrap().1;
    rest[rest.find('/').unwrap()..].to_owned()
}

pub async fn get_page(app: &TestApp, host: &str, path: &str) -> Page {
    let response = app.client.get(format!("{}{path}", app.address)).header("Host", host).send().await.unwrap();
    let cookie = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("agora_csrftoken="))
        .map(|c| c.split(';').next().unwrap().to_owned());
    Page {
        status: response.status().as_u16(),
        body: response.text().await.unwrap(),
        cookie,
        location: None,
        signed_in: false,
    }
}

/// The value of the form's hidden anti-forgery field.
fn form_token(html: &str) -> String {
    let at = html.find("name=\"csrfmiddlewaretoken\" value=\"").unwrap() + 34;
    html[at..at + 32].to_owned()
}

/// Submits the form of `page` with `fields` (the token added).
pub async fn submit(app: &TestApp, host: &str, path: &str, page: &Page, fields: &[(&str, &str)]) -> Page {
    let token = form_token(&page.body);
    let mut form: Vec<(&str, &str)> = vec![("csrfmiddlewaretoken", &token)];
    form.extend_from_slice(fields);
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let response = client
        .post(format!("{}{path}", app.address))
        .header("Host", host)
        .header("Cookie", page.cookie.clone().unwrap())
        .form(&form)
        .send()
        .await
        .unwrap();
    let location = response.headers().get("location").map(|v| v.to_str().unwrap().to_owned());
    let signed_in = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .any(|c| c.to_str().unwrap().starts_with("sessionid=") && c.to_str().unwrap().contains("HttpOnly"));
    Page { status: response.status().as_u16(), body: response.text().await.unwrap(), cookie: None, location, signed_in }
}

async fn fetch_api_key(app: &TestApp, email: &str, password: &str) -> (u16, Value) {
    let form = [("username", email), ("password", password)];
    json(app.request(Method::POST, "/fetch_api_key").form(&form).send().await.unwrap()).await
}

/// Messages of `who` (newest 20) as (sender email, content, flags).
async fn messages(app: &TestApp, who: &Creds) -> Vec<(String, String, Vec<String>)> {
    let path = "/messages?anchor=newest&num_before=20&num_after=0&apply_markdown=false";
    let (_, body) = json(send(app, who, Method::GET, path, &[]).await).await;
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let flags = m["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_owned()).collect();
            (m["sender_email"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap().to_owned(), flags)
        })
        .collect()
}

const WELCOME: &str = "Hello, and welcome to Zulip!👋 \n\n\nTo learn more, check out our [getting started guide](/help/getting-started-with-zulip)! \n\n\nYou can always come back to the [Welcome to Zulip video](https://static.zulipchat.com/static/navigation-tour-video/zulip-10.mp4) for a quick app overview.";

#[actix_web::test]
async fn an_invited_address_joins_with_its_role_channels_and_groups() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let general = make_channel(&app, &owner, "general", false).await;
    let secret = make_channel(&app, &owner, "secret", true).await;
    let signups = make_channel(&app, &owner, "signups-here", false).await;
    let setting = signups.to_string();
    let patched = send(&app, &owner, Method::PATCH, "/realm", &[("signup_announcements_stream_id", &setting)]).await;
    assert_eq!(patched.status(), 200);
    expect(post(&app, &owner, "/default_streams", &[("stream_id", &general.to_string())]).await, 200, success()).await;
    let (_, created) = json(
        post(&app, &owner, "/user_groups/create", &[("name", "crew"), ("description", "Crew"), ("members", "[]")])
            .await,
    )
    .await;
    let crew = created["group_id"].as_i64().unwrap();
    let bystander = app.create_user("", "bystander@example.com", "Bystander", 400).await;
    let mut w_bystander = Watch::new(&app, &bystander, r#"["subscription", "realm_user"]"#).await;
    let mut w_owner = Watch::new(&app, &owner, r#"["invites_changed", "message"]"#).await;

    let form = [
        ("invitee_emails", "newbie@example.com"),
        ("stream_ids", &format!("[{secret}]")),
        ("group_ids", &format!("[{crew}]")),
        ("include_realm_default_subscriptions", "true"),
        ("invite_as", "300"),
        ("welcome_message_custom_text", "Read the **rules**."),
    ];
    expect(post(&app, &owner, "/invites", &form).await, 200, success()).await;
    w_owner.events(&app).await;
    let link = link_in(&outbox_mails(&app.data_dir, 1)[0]);
    let path = path_of(&link);

    let page = get_page(&app, HOST, &path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("<h1>Join Agora</h1>") && page.body.contains("newbie@example.com"), "{}", page.body);
    // A weak password is refused, with the fields kept.
    let weak = submit(&app, HOST, &path, &page, &[("full_name", "New Bie"), ("password", "abc")]).await;
    assert_eq!(weak.status, 400);
    assert!(
        weak.body.contains("The password is too weak.") && weak.body.contains("value=\"New Bie\""),
        "{}",
        weak.body
    );
    let done =
        submit(&app, HOST, &path, &page, &[("full_name", "New Bie"), ("password", "correct horse battery staple")])
            .await;
    // Signed in, and on the way to the web client.
    assert_eq!((done.status, done.location.as_deref(), done.signed_in), (303, Some("/"), true), "{}", done.body);

    // The account logs in.
    let (status, body) = fetch_api_key(&app, "newbie@example.com", "correct horse battery staple").await;
    assert_eq!(status, 200, "{body}");
    let newbie = Creds {
        email: "newbie@example.com".into(),
        password: String::new(),
        api_key: body["api_key"].as_str().unwrap().into(),
        user_id: body["user_id"].as_i64().unwrap(),
        host: HOST.into(),
    };
    let (_, me) = json(send(&app, &newbie, Method::GET, "/users/me", &[]).await).await;
    assert_eq!((me["role"].clone(), me["full_name"].clone()), (json!(300), json!("New Bie")));
    let (_, subs) = json(send(&app, &newbie, Method::GET, "/users/me/subscriptions", &[]).await).await;
    let mut names: Vec<&str> =
        subs["subscriptions"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["general", "secret"]);
    let (_, member) =
        json(send(&app, &newbie, Method::GET, &format!("/user_groups/{crew}/members/{}", newbie.user_id), &[]).await)
            .await;
    assert_eq!(member["is_user_group_member"], json!(true));

    // Welcome Bot's messages, starred and unread.
    let got = messages(&app, &newbie).await;
    let custom = "A note from @_*role:administrators*:\n```quote\nRead the **rules**.\n```";
    assert_eq!(
        got,
        vec![
            ("welcome-bot@zulip.com".into(), WELCOME.into(), vec!["starred".into()]),
            ("welcome-bot@zulip.com".into(), custom.into(), vec!["starred".into()]),
        ]
    );
    // The inviter is told, and the invitation is gone from the list.
    let events = w_owner.events(&app).await;
    let accepted = format!("@_**New Bie|{}** accepted your invitation to join Zulip!", newbie.user_id);
    assert!(
        events.iter().any(|e| e["type"] == "message"
            && e["message"]["content"].as_str().unwrap().contains("accepted your invitation")),
        "{events:?}"
    );
    assert!(events.contains(&json!({"type": "invites_changed"})), "{events:?}");
    // ... and, in the signup announcements channel, everyone there is told.
    let joined = format!("@_**New Bie|{}** joined this organization.", newbie.user_id);
    let mine = messages(&app, &owner).await;
    for notice in [&accepted, &joined] {
        assert!(
            mine.iter().any(|(from, content, _)| from == "notification-bot@zulip.com" && content == notice),
            "{mine:?}"
        );
    }
    let (_, invites) = json(send(&app, &owner, Method::GET, "/invites", &[]).await).await;
    assert_eq!(invites["invites"], json!([]));
    // Others learn of the account and of its default channel membership.
    let events = w_bystander.events(&app).await;
    assert_eq!(events[0]["op"], json!("add"));
    assert!(events.iter().any(|e| e == &json!({"type": "subscription", "op": "peer_add", "stream_ids": [general], "user_ids": [newbie.user_id]})), "{events:?}");

    // The link is used up.
    let again = get_page(&app, HOST, &path).await;
    assert_eq!(again.status, 410);
    assert!(again.body.contains("Invitation already used"), "{}", again.body);
    let _ = system_group;
    app.stop().await;
}

#[actix_web::test]
async fn unusable_links_get_clear_pages() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let unknown = get_page(&app, HOST, "/accounts/do_confirm/aaaaaaaaaaaaaaaaaaaaaaaa").await;
    assert_eq!(unknown.status, 404);
    assert!(unknown.body.contains("Invitation link not found"));
    assert_eq!(get_page(&app, HOST, "/join/short/").await.status, 404);
    assert_eq!(get_page(&app, "nowhere.agora.test", "/join/aaaaaaaaaaaaaaaaaaaaaaaa/").await.status, 404);

    let form = [("invitee_emails", "late@example.com"), ("stream_ids", "[]"), ("invite_expires_in_minutes", "-1")];
    expect(post(&app, &owner, "/invites", &form).await, 200, success()).await;
    let expired = get_page(&app, HOST, &path_of(&link_in(&outbox_mails(&app.data_dir, 1)[0]))).await;
    assert_eq!(expired.status, 410);
    assert!(expired.body.contains("Invitation link expired"));

    let form = [("invitee_emails", "gone@example.com"), ("stream_ids", "[]")];
    expect(post(&app, &owner, "/invites", &form).await, 200, success()).await;
    let path = path_of(&link_in(&outbox_mails(&app.data_dir, 2)[1]));
    let page = get_page(&app, HOST, &path).await;
    assert_eq!(page.status, 200);
    let (_, invites) = json(send(&app, &owner, Method::GET, "/invites", &[]).await).await;
    let id = invites["invites"][0]["id"].as_i64().unwrap();
    expect(send(&app, &owner, Method::DELETE, &format!("/invites/{id}"), &[]).await, 200, success()).await;
    let revoked = get_page(&app, HOST, &path).await;
    assert_eq!(revoked.status, 410);
    assert!(revoked.body.contains("Invitation revoked"));
    // Submitting the form of a revoked invitation gets the same page, not an account.
    let late =
        submit(&app, HOST, &path, &page, &[("full_name", "Gone"), ("password", "correct horse battery staple")]).await;
    assert_eq!(late.status, 410);
    app.stop().await;
}

#[actix_web::test]
async fn a_reusable_link_serves_several_people_and_forged_posts_are_refused() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let (_, body) = json(post(&app, &owner, "/invites/multiuse", &[("invite_as", "600")]).await).await;
    let path = path_of(body["invite_link"].as_str().unwrap());
    let page = get_page(&app, HOST, &path).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("id=\"email\" name=\"email\""), "{}", page.body);

    // Without the cookie's token, or from another site, nothing happens.
    let forged = app
        .client
        .post(format!("{}{path}", app.address))
        .header("Host", HOST)
        .form(&[("email", "eve@example.com"), ("full_name", "Eve"), ("password", "correct horse battery staple")])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status().as_u16(), 403);
    let token = form_token(&page.body);
    let cross_site = app
        .client
        .post(format!("{}{path}", app.address))
        .header("Host", HOST)
        .header("Origin", "http://evil.example")
        .header("Cookie", page.cookie.clone().unwrap())
        .form(&[
            ("csrfmiddlewaretoken", token.as_str()),
            ("email", "eve@example.com"),
            ("full_name", "Eve"),
            ("password", "correct horse battery staple"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(cross_site.status().as_u16(), 403);

    let bad = submit(&app, HOST, &path, &page, &[("email", "nope"), ("full_name", ""), ("password", "")]).await;
    assert_eq!(bad.status, 400);
    for error in ["Invalid address.", "This field is required."] {
        assert!(bad.body.contains(error), "{error} in {}", bad.body);
    }
    for who in ["one", "two"] {
        let email = format!("{who}@example.com");
        let page = get_page(&app, HOST, &path).await;
        let done = submit(
            &app,
            HOST,
            &path,
            &page,
            &[("email", &email), ("full_name", who), ("password", "correct horse battery staple")],
        )
        .await;
        assert_eq!((done.status, done.signed_in), (303, true), "{}", done.body);
        let (status, body) = fetch_api_key(&app, &email, "correct horse battery staple").await;
        assert_eq!(status, 200, "{body}");
    }
    let taken = submit(
        &app,
        HOST,
        &path,
        &page,
        &[("email", "one@example.com"), ("full_name", "One"), ("password", "correct horse battery staple")],
    )
    .await;
    assert_eq!(taken.status, 400);
    assert!(taken.body.contains("Already has an account."), "{}", taken.body);
    let (_, users) = json(send(&app, &owner, Method::GET, "/users", &[]).await).await;
    let guests: Vec<&Value> =
        users["members"].as_array().unwrap().iter().filter(|u| u["role"] == 600).map(|u| &u["email"]).collect();
    assert_eq!(guests, [&json!("one@example.com"), &json!("two@example.com")]);
    app.stop().await;
}
