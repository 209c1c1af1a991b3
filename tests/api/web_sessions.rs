//! Signing in from a browser: the sign-in page, sessions and their cookies, `/json/...` with
//! Zulip's CSRF rule, signing out, sessions ended by password changes and deactivation,
//! password resets, and the web client's page and files.

use std::collections::BTreeMap;

use agora_actors::ids::UserId;
use agora_actors::realm::users::SetUserActive;
use reqwest::header::{HeaderMap, SET_COOKIE};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;
use crate::invites::{link_in, outbox_mails};
use crate::signup::path_of;

/// A browser: its cookies, sent back on every request; redirections are not followed.
pub struct Browser {
    client: reqwest::Client,
    address: String,
    host: String,
    pub cookies: BTreeMap<String, String>,
}

/// A page or an API answer: status, headers, body.
pub struct Got {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Got {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", |v| v.to_str().unwrap())
    }

    /// The `Set-Cookie` line of `name`.
    pub fn set_cookie(&self, name: &str) -> Option<String> {
        self.headers
            .get_all(SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .find(|c| c.starts_with(&format!("{name}=")))
    }
}

impl Browser {
    pub fn new(app: &TestApp) -> Browser {
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Browser { client, address: app.address.clone(), host: HOST.into(), cookies: BTreeMap::new() }
    }

    fn cookie_header(&self) -> String {
        self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    pub async fn send(&mut self, request: reqwest::RequestBuilder) -> Got {
        let response = request.header("Host", &self.host).header("Cookie", self.cookie_header()).send().await.unwrap();
        let headers = response.headers().clone();
        for line in headers.get_all(SET_COOKIE) {
            let line = line.to_str().unwrap();
            let (pair, attributes) = line.split_once(';').unwrap_or((line, ""));
            let (name, value) = pair.split_once('=').unwrap();
            if value.is_empty() || attributes.contains("Max-Age=0") {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_owned(), value.to_owned());
            }
        }
        Got { status: response.status().as_u16(), headers, body: response.text().await.unwrap() }
    }

    pub async fn get(&mut self, path: &str) -> Got {
        let request = self.client.get(format!("{}{path}", self.address));
        self.send(request).await
    }

    /// Submits the form of `page` (its anti-forgery field included) to `path`.
    pub async fn submit(&mut self, path: &str, page: &Got, fields: &[(&str, &str)]) -> Got {
        let token = form_token(&page.body);
        let mut form: Vec<(&str, &str)> = vec![("csrfmiddlewaretoken", &token)];
        form.extend_from_slice(fields);
        let request = self.client.post(format!("{}{path}", self.address)).form(&form);
        self.send(request).await
    }

    /// A call of the browser's API, with the CSRF header as the web client sends it; a
    /// success is checked against Zulip's description.
    pub async fn call(&mut self, method: Method, path: &str, form: &[(&str, &str)]) -> Got {
        let path = format!("/json{path}");
        let mut request = self.client.request(method.clone(), format!("{}{path}", self.address));
        if let Some(token) = self.cookies.get("csrftoken") {
            request = request.header("X-CSRFToken", token);
        }
        if !form.is_empty() {
            request = request.form(form);
        }
        let got = self.send(request).await;
        crate::openapi::check(&method, &path, got.status, got.body.as_bytes());
        got
    }

    /// Signs in through the sign-in page.
    pub async fn sign_in(&mut self, email: &str, password: &str) -> Got {
        let page = self.get("/login/").await;
        assert_eq!(page.status, 200);
        self.submit("/login/", &page, &[("username", email), ("password", password)]).await
    }
}

/// The value of a page's hidden anti-forgery field.
pub fn form_token(html: &str) -> String {
    let at = html.find("name=\"csrfmiddlewaretoken\" value=\"").expect("a form") + 34;
    html[at..at + 32].to_owned()
}

fn not_logged_in() -> Value {
    json!({"result": "error", "msg": "Not logged in: API authentication or user session required", "code": "UNAUTHORIZED"})
}

fn csrf_failed(reason: &str) -> Value {
    json!({"result": "error", "msg": format!("CSRF error: {reason}"), "reason": reason, "code": "CSRF_FAILED"})
}

#[actix_web::test]
async fn signing_in_opens_the_web_client_and_the_browsers_api() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    crate::invites::make_channel(&app, &o, "general", false).await;
    let mut browser = Browser::new(&app);
    // Signed out, the organization's address leads to the sign-in page.
    let root = browser.get("/").await;
    assert_eq!((root.status, root.header("location")), (302, "/login/"));
    let page = browser.get("/login/").await;
    assert_eq!(page.status, 200);
    for part in [
        "<label for=\"username\">Email</label>",
        "<label for=\"password\">Password</label>",
        "<button type=\"submit\">Log in</button>",
        "href=\"/accounts/password/reset/\">Forgot password?</a>",
    ] {
        assert!(page.body.contains(part), "{part} in {}", page.body);
    }
    assert!(page.header("content-security-policy").contains("frame-ancestors 'none'"));
    assert_eq!(page.header("x-frame-options"), "DENY");
    assert!(!page.body.contains("<script"), "no script on the sign-in page");

    // A wrong password and an unknown address read the same.
    let wrong = browser.submit("/login/", &page, &[("username", &o.email), ("password", "nope")]).await;
    let unknown = browser.submit("/login/", &page, &[("username", "who@agora.test"), ("password", "nope")]).await;
    for refused in [&wrong, &unknown] {
        assert_eq!(refused.status, 200);
        assert!(refused.body.contains("Incorrect email or password."), "{}", refused.body);
        assert!(refused.set_cookie("sessionid").is_none());
    }
    // A form sent without its token is refused.
    let request = app.client.post(format!("{}/login/", app.address)).header("Host", HOST);
    let forged = request.form(&[("username", o.email.as_str()), ("password", &o.password)]).send().await.unwrap();
    assert_eq!(forged.status(), 403);

    let signed_in = browser.sign_in(&o.email, &o.password).await;
    assert_eq!((signed_in.status, signed_in.header("location")), (303, "/"));
    let session = signed_in.set_cookie("sessionid").unwrap();
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=1209600"] {
        assert!(session.contains(attribute), "{attribute} in {session}");
    }
    assert!(!session.contains("Secure"), "not over plain HTTP");
    let csrf = signed_in.set_cookie("csrftoken").unwrap();
    assert!(!csrf.contains("HttpOnly"), "the page's script reads it: {csrf}");
    assert_eq!(browser.cookies["sessionid"].len(), 40);

    // The web client's page: one module, strict policy.
    let client = browser.get("/").await;
    assert_eq!(client.status, 200);
    let policy = client.header("content-security-policy");
    assert!(policy.contains("script-src 'self';") && policy.contains("frame-ancestors 'none'"), "{policy}");
    assert!(!policy.contains("unsafe-inline"));
    let script = client.body.split("<script type=\"module\" src=\"").nth(1).unwrap().split('"').next().unwrap();
    assert!(script.starts_with("/static/") && script.ends_with("/app.js"), "{script}");
    let module = browser.get(script).await;
    assert_eq!((module.status, module.header("content-type")), (200, "text/javascript; charset=utf-8"));
    assert_eq!(module.header("cache-control"), "public, max-age=31536000, immutable");
    // Already signed in: the sign-in page sends the browser on.
    assert_eq!(browser.get("/login/").await.status, 303);

    // The browser's API is the API.
    let me = browser.call(Method::GET, "/users/me", &[]).await;
    assert_eq!(me.status, 200, "{}", me.body);
    let (_, by_key) = json(app.as_user(&o, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!(me.json(), by_key);
    let registered = browser.call(Method::POST, "/register", &[("event_types", r#"["message"]"#)]).await;
    assert_eq!(registered.status, 200, "{}", registered.body);
    let queue = registered.json()["queue_id"].as_str().unwrap().to_owned();
    let form = [("type", "stream"), ("to", "general"), ("topic", "web"), ("content", "from the browser")];
    let sent = browser.call(Method::POST, "/messages", &form).await;
    assert_eq!(sent.status, 200, "{} {:?}", sent.body, browser.cookies);
    let events =
        browser.call(Method::GET, &format!("/events?queue_id={queue}&last_event_id=-1&dont_block=true"), &[]).await;
    assert_eq!(events.json()["events"][0]["message"]["content"], json!("from the browser"));
    app.stop().await;
}

#[actix_web::test]
async fn the_browsers_api_wants_a_session_and_the_csrf_token() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    crate::invites::make_channel(&app, &o, "general", false).await;
    let mut browser = Browser::new(&app);
    // No session: Zulip's answer, with the session challenge.
    let anonymous = browser.call(Method::GET, "/users/me", &[]).await;
    assert_eq!((anonymous.status, anonymous.json()), (401, not_logged_in()));
    assert_eq!(anonymous.header("www-authenticate"), "Session realm=\"zulip\"");
    // An API key is not a session.
    let by_key = app.client.get(format!("{}/json/users/me", app.address)).header("Host", HOST);
    let by_key = by_key.basic_auth(&o.email, Some(&o.api_key)).send().await.unwrap();
    assert_eq!(by_key.status(), 401);
    // A made-up session is none either.
    browser.cookies.insert("sessionid".into(), "x".repeat(40));
    assert_eq!(browser.call(Method::GET, "/users/me", &[]).await.status, 401);

    browser.sign_in(&o.email, &o.password).await;
    let form = [("type", "stream"), ("to", "general"), ("topic", "t"), ("content", "hi")];
    // Without the header, with another value, without the cookie, from another site.
    let token = browser.cookies["csrftoken"].clone();
    let raw = |headers: &[(&str, &str)], cookies: String| {
        let mut request = app.client.post(format!("{}/json/messages", app.address)).header("Host", HOST);
        request = request.header("Cookie", cookies);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.form(&form).send()
    };
    let session = format!("sessionid={}", browser.cookies["sessionid"]);
    let both = format!("{session}; csrftoken={token}");
    let cases = [
        (raw(&[], both.clone()).await.unwrap(), "CSRF token missing."),
        (raw(&[("X-CSRFToken", "wrong")], both.clone()).await.unwrap(), "CSRF token incorrect."),
        (raw(&[("X-CSRFToken", &token)], session.clone()).await.unwrap(), "CSRF cookie not set."),
        (
            raw(&[("X-CSRFToken", &token), ("Origin", "https://evil.example")], both.clone()).await.unwrap(),
            "Origin checking failed - https://evil.example does not match any trusted origins.",
        ),
    ];
    for (response, reason) in cases {
        expect(response, 403, csrf_failed(reason)).await;
    }
    // Refused before the session is even looked at.
    expect(raw(&[], format!("csrftoken={token}")).await.unwrap(), 403, csrf_failed("CSRF token missing.")).await;
    // GET needs no token; with it, the change goes through.
    assert_eq!(raw(&[("X-CSRFToken", &token)], both.clone()).await.unwrap().status(), 200);
    let same_site = raw(&[("X-CSRFToken", &token), ("Origin", &format!("http://{HOST}"))], both).await.unwrap();
    assert_eq!(same_site.status(), 200);
    app.stop().await;
}

#[actix_web::test]
async fn sessions_end_at_sign_out_password_change_and_deactivation_and_survive_a_restart() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;

    // Signing out ends the session for good, cookie or not.
    let mut browser = Browser::new(&app);
    browser.sign_in(&o.email, &o.password).await;
    let old = browser.cookies["sessionid"].clone();
    let token = browser.cookies["csrftoken"].clone();
    let forged = app.client.post(format!("{}/accounts/logout/", app.address)).header("Host", HOST);
    let forged = forged.header("Cookie", format!("sessionid={old}; csrftoken={token}")).send().await.unwrap();
    assert_eq!(forged.status(), 403, "signing out needs the token too");
    let request = browser.client.post(format!("{}/accounts/logout/", app.address)).header("X-CSRFToken", &token);
    let out = browser.send(request).await;
    assert_eq!((out.status, out.header("location")), (303, "/login/"));
    assert!(!browser.cookies.contains_key("sessionid"));
    browser.cookies.insert("sessionid".into(), old.clone());
    assert_eq!(browser.call(Method::GET, "/users/me", &[]).await.status, 401);

    // Signing in again with an old session's cookie starts a new one (rotated).
    let first = browser.sign_in(&o.email, &o.password).await;
    assert_eq!(first.status, 303);
    let current = browser.cookies["sessionid"].clone();
    assert_ne!(current, old);

    // Sessions live in the database: a restart keeps them.
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;
    let app = spawn_app_at(&data_dir).await;
    let mut browser = Browser { address: app.address.clone(), ..browser };
    assert_eq!(browser.call(Method::GET, "/users/me", &[]).await.status, 200);

    // A password change through the browser keeps its own session and ends the others.
    let mut other = Browser::new(&app);
    assert_eq!(other.sign_in(&o.email, &o.password).await.status, 303);
    let form = [("old_password", o.password.as_str()), ("new_password", "an even better passphrase 41")];
    let changed = browser.call(Method::PATCH, "/settings", &form).await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    assert_eq!(browser.call(Method::GET, "/users/me", &[]).await.status, 200);
    assert_eq!(other.call(Method::GET, "/users/me", &[]).await.status, 401);
    let o = Creds { password: "an even better passphrase 41".into(), ..o };

    // A password change through the API ends the browser's session.
    let form = [("old_password", o.password.as_str()), ("new_password", "a much better passphrase 42")];
    let changed = app.as_user(&o, Method::PATCH, "/settings").form(&form).send().await.unwrap();
    assert_eq!(changed.status(), 200);
    assert_eq!(browser.call(Method::GET, "/users/me", &[]).await.status, 401);

    // Deactivation ends Bob's.
    let mut bobs = Browser::new(&app);
    assert_eq!(bobs.sign_in(&bob.email, &bob.password).await.status, 303);
    assert_eq!(bobs.call(Method::GET, "/users/me", &[]).await.status, 200);
    app.realm("").addr.send(SetUserActive { user_id: UserId(bob.user_id), active: false }).await.unwrap().unwrap();
    assert_eq!(bobs.call(Method::GET, "/users/me", &[]).await.status, 401);
    assert_eq!(bobs.get("/").await.status, 302);
    // For good: reactivated, he signs in again.
    app.realm("").addr.send(SetUserActive { user_id: UserId(bob.user_id), active: true }).await.unwrap().unwrap();
    tokio::time::sleep(agora_actors::sessions::CACHE_FOR).await;
    assert_eq!(bobs.call(Method::GET, "/users/me", &[]).await.status, 401);
    app.stop().await;
    drop(tmp);
}

#[actix_web::test]
async fn a_forgotten_password_is_reset_through_a_mailed_link() {
    let app = spawn_app().await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let mut signed_in = Browser::new(&app);
    signed_in.sign_in(&bob.email, &bob.password).await;

    let mut browser = Browser::new(&app);
    let page = browser.get("/accounts/password/reset/").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("<label for=\"email\">Email</label>"));
    // An address without an account reads the same, and mails nothing.
    let nobody = browser.submit("/accounts/password/reset/", &page, &[("email", "nobody@agora.test")]).await;
    let asked = browser.submit("/accounts/password/reset/", &page, &[("email", "BOB@agora.test")]).await;
    assert_eq!((nobody.status, asked.status), (200, 200));
    let strip = |body: &str| body.replace("nobody@agora.test", "ADDRESS").replace("BOB@agora.test", "ADDRESS");
    assert_eq!(strip(&nobody.body), strip(&asked.body));
    assert!(asked.body.contains("Check your email"));
    let mails = outbox_mails(&app.data_dir, 1);
    assert_eq!(mails.len(), 1, "one mail, for the account that exists");
    let mail = &mails[0];
    assert!(mail.contains("To: bob@agora.test"), "{mail}");
    assert!(mail.contains("Subject: Reset your password for"), "{mail}");
    let link = link_in(mail);
    let path = path_of(&link);
    assert!(path.starts_with("/accounts/password/reset/"), "{path}");

    let form = browser.get(&path).await;
    assert_eq!(form.status, 200, "{path} {mail}");
    assert!(form.body.contains("<label for=\"new_password\">New password</label>"));
    let weak = browser.submit(&path, &form, &[("new_password", "short")]).await;
    assert_eq!(weak.status, 400);
    assert!(weak.body.contains("The password is too weak.") || weak.body.contains("aria-invalid"), "{}", weak.body);
    let form = browser.get(&path).await;
    let done = browser.submit(&path, &form, &[("new_password", "correct horse battery staple 9")]).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(done.body.contains("Password changed"));
    // Used up; the old password and the old session are gone; the new password works.
    assert_eq!(browser.get(&path).await.status, 410);
    assert_eq!(signed_in.call(Method::GET, "/users/me", &[]).await.status, 401);
    let old = browser.sign_in(&bob.email, &bob.password).await;
    assert!(old.body.contains("Incorrect email or password."));
    assert_eq!(browser.sign_in(&bob.email, "correct horse battery staple 9").await.status, 303);
    let (status, _) = json(
        app.request(Method::POST, "/fetch_api_key")
            .form(&[("username", bob.email.as_str()), ("password", "correct horse battery staple 9")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    // A made-up link.
    assert_eq!(browser.get("/accounts/password/reset/aaaaaaaaaaaaaaaaaaaa/").await.status, 404);
    app.stop().await;
}

#[actix_web::test]
async fn the_sign_in_page_has_the_apis_limit_per_address() {
    let app = spawn_app_with(|s| {
        s.api_rate_limit.per_ip = agora_actors::ratelimit::Rule { max: 3, window: std::time::Duration::from_secs(60) }
    })
    .await;
    let mut browser = Browser::new(&app);
    let page = browser.get("/login/").await;
    // One address trying a password across accounts.
    for i in 0..3 {
        let tried = browser
            .submit("/login/", &page, &[("username", &format!("user{i}@agora.test")), ("password", "guess")])
            .await;
        assert_eq!(tried.status, 200);
    }
    let refused = browser.submit("/login/", &page, &[("username", "user9@agora.test"), ("password", "guess")]).await;
    assert_eq!(refused.status, 429);
    assert!(refused.body.contains("Too many requests from your address."), "{}", refused.body);
    assert!(refused.header("retry-after").parse::<u64>().unwrap() > 0);
    app.stop().await;
}
