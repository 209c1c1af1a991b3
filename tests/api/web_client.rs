//! The web client in real browsers: two people in two headless Chromium sessions sign in,
//! chat live in a channel and in direct messages, react, edit, delete, search, upload, see
//! each other typing, and keep going across a restart of the server. Screenshots of the
//! main views go to `target/screenshots/` (and to `docs/screenshots/` with
//! `AGORA_SCREENSHOTS=docs`, for the documentation).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use reqwest::Method;
use serde_json::{json, Value};

use crate::browser::{browser_sized, fill, installed_browser, start_driver};
use crate::helpers::*;
use crate::invites::make_channel;

/// Runs `script` in the page (its `arguments` are `args`); its value.
async fn js(client: &Client, script: &str, args: Vec<Value>) -> Value {
    client.execute(script, args).await.unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
}

/// Waits until `check` (a script's `return` value) is truthy, up to `within`.
async fn until(client: &Client, what: &str, within: Duration, check: &str, args: Vec<Value>) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let value = js(client, check, args.clone()).await;
        if !(value.is_null() || value == json!(false) || value == json!("") || value == json!(0)) {
            return value;
        }
        if Instant::now() > deadline {
            let shot = client.screenshot().await.unwrap_or_default();
            let path = screenshot_dir().join(format!("failed-{}.png", what.replace(' ', "-")));
            std::fs::write(&path, shot).unwrap();
            panic!("{what}: not within {within:?} (screenshot {})", path.display());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn screenshot_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Saves a screenshot of the page (and, with `AGORA_SCREENSHOTS=docs`, the copy in docs/screenshots).
async fn screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.unwrap();
    std::fs::write(screenshot_dir().join(format!("{name}.png")), &png).unwrap();
    if std::env::var("AGORA_SCREENSHOTS").as_deref() == Ok("docs") {
        let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/screenshots");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join(format!("{name}.png")), &png).unwrap();
    }
}

/// What axe-core (WCAG 2.1 A and AA rules) finds wrong in the page: `id: targets` lines.
async fn accessibility_problems(client: &Client) -> Vec<String> {
    client.execute(include_str!("../vendor/axe.min.js"), vec![]).await.unwrap();
    let run = "const done = arguments[arguments.length - 1];
        axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
          .then(r => done(r.violations.map(v => v.id + ' (' + v.help + '): ' + v.nodes.slice(0, 4).map(n => n.target.join(' ')).join(' | '))))
          .catch(e => done(['axe failed: ' + e]));";
    let found = client.execute_async(run, vec![]).await.unwrap();
    serde_json::from_value(found).unwrap()
}

/// Signs in through the sign-in page and waits for the web client.
async fn sign_in(client: &Client, address: &str, email: &str, password: &str) {
    client.goto(&format!("{address}/login/")).await.unwrap();
    fill(client, "#username", email).await;
    fill(client, "#password", password).await;
    client.find(Locator::Css("button[type=submit]")).await.unwrap().click().await.unwrap();
    until(
        client,
        "the web client",
        Duration::from_secs(15),
        "return document.querySelector('nav[aria-label=Channels]') !== null",
        vec![],
    )
    .await;
}

/// The unread count shown beside a channel in the Channels navigation (0 when none).
const CHANNEL_COUNT: &str = "const link = [...document.querySelectorAll('nav[aria-label=Channels] a')].find(a => a.textContent === arguments[0]);
    if (!link) return -1; const count = link.parentElement.querySelector(':scope > .count'); return count ? Number(count.textContent) : 0;";

/// The text of the feed's messages (each article's content).
const FEED_TEXTS: &str = "return [...document.querySelectorAll('section[aria-label=Messages] article .content')].map(e => e.textContent.trim());";

async fn click(client: &Client, css: &str) {
    let element = client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(css)).await;
    let element = element.unwrap_or_else(|e| panic!("no {css}: {e}"));
    if let Err(e) = element.click().await {
        let path = screenshot_dir().join("failed-click.png");
        std::fs::write(&path, client.screenshot().await.unwrap_or_default()).unwrap();
        panic!("{css} cannot be clicked ({e}); screenshot {}", path.display());
    }
}

/// Clicks the link with exactly `text` inside `scope` (a CSS selector).
async fn click_link(client: &Client, scope: &str, text: &str) {
    let script = "const a = [...document.querySelectorAll(arguments[0] + ' a')].find(a => a.textContent === arguments[1]); if (a) { a.click(); return true; } return false;";
    until(client, &format!("link {text}"), Duration::from_secs(10), script, vec![json!(scope), json!(text)]).await;
}

/// Ctrl+Enter: sends whatever the user's `enter_sends`.
const CTRL_ENTER: &str = "\u{E009}\u{E007}\u{E000}";

/// Sends a message from the open compose box.
async fn type_and_send(client: &Client, text: &str) {
    let field = client.find(Locator::Css("#compose-content")).await.unwrap();
    field.send_keys(text).await.unwrap();
    field.send_keys(CTRL_ENTER).await.unwrap();
}

#[actix_web::test]
async fn two_people_chat_live_in_their_browsers() {
    let Some((chromium, chromedriver)) = installed_browser() else { return };
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob Builder", 400).await;
    let general = make_channel(&app, &owner, "general", false).await;
    let form =
        [("subscriptions", json!([{ "name": "general" }]).to_string()), ("principals", json!([bob.email]).to_string())];
    assert_eq!(
        post(&app, &owner, "/users/me/subscriptions", &form.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>())
            .await
            .status(),
        200
    );
    for i in 0..30 {
        let content = format!("Earlier message {i}: the **plan** for week {i}.");
        let form = [("type", "stream"), ("to", "general"), ("topic", "planning"), ("content", content.as_str())];
        assert_eq!(post(&app, &owner, "/messages", &form).await.status(), 200);
    }

    let driver = start_driver(&chromedriver);
    let alice = browser_sized(&driver, &chromium, 1280, 860).await;
    let bobs = browser_sized(&driver, &chromium, 1280, 860).await;
    sign_in(&alice, &app.address, &owner.email, &owner.password).await;
    sign_in(&bobs, &app.address, &bob.email, &bob.password).await;

    // The sign-in page and the web client pass the accessibility rules.
    let login = browser_sized(&driver, &chromium, 1024, 768).await;
    login.goto(&format!("{}/login/", app.address)).await.unwrap();
    assert_eq!(accessibility_problems(&login).await, Vec::<String>::new(), "the sign-in page");
    login.close().await.unwrap();

    // Bob has the thirty messages unread.
    let count = until(&bobs, "Bob's unread count", Duration::from_secs(5), CHANNEL_COUNT, vec![json!("general")]).await;
    assert_eq!(count, json!(30));

    // The owner opens the channel and starts a topic.
    click_link(&alice, "nav[aria-label=Channels]", "general").await;
    until(
        &alice,
        "the channel's feed",
        Duration::from_secs(10),
        "return document.querySelectorAll('section[aria-label=Messages] article').length >= 30",
        vec![],
    )
    .await;
    open_compose(&alice).await;
    fill(&alice, "#compose-topic", "hello").await;
    let sent_at = Instant::now();
    type_and_send(&alice, "Hi Bob! Are you there?").await;

    // Bob sees it arrive within two seconds: the count rises.
    let check = format!("return (function() {{ {CHANNEL_COUNT} }}).apply(null, arguments) === 31;");
    until(&bobs, "the new message counted", Duration::from_secs(2), &check, vec![json!("general")]).await;
    eprintln!("delivered to the other browser in {:?}", sent_at.elapsed());

    // He opens the topic: the message is there, and read once seen.
    click_link(&bobs, "nav[aria-label=Channels]", "general").await;
    click_link(&bobs, "nav[aria-label=Channels] .topics", "hello").await;
    let texts = until(
        &bobs,
        "the topic's messages",
        Duration::from_secs(10),
        &format!("const t = (function() {{ {FEED_TEXTS} }})(); return t.length > 0 && t;"),
        vec![],
    )
    .await;
    assert_eq!(texts, json!(["Hi Bob! Are you there?"]));
    let topic_read = "const link = [...document.querySelectorAll('nav[aria-label=Channels] .topics a')].find(a => a.textContent === 'hello');
        return link && !link.parentElement.querySelector(':scope > .count') && !document.querySelector('article.unread');";
    until(&bobs, "the count falling", Duration::from_secs(5), topic_read, vec![]).await;
    // Each message is an article with its sender's name and its content.
    let article = js(&bobs, "const a = document.querySelector('section[aria-label=Messages] article'); return [a.querySelector('.sender').textContent, a.querySelector('.content').textContent];", vec![]).await;
    assert_eq!(article, json!([owner_name(&app).await, "Hi Bob! Are you there?"]));

    // Bob replies: the owner sees him typing, then the reply.
    open_compose(&bobs).await;
    let field = bobs.find(Locator::Css("#compose-content")).await.unwrap();
    field.send_keys("Yes, here").await.unwrap();
    until(
        &alice,
        "Bob typing",
        Duration::from_secs(3),
        "return document.getElementById('typing').textContent.includes('Bob Builder is typing');",
        vec![],
    )
    .await;
    field.send_keys("!").await.unwrap();
    field.send_keys(CTRL_ENTER).await.unwrap();
    until(
        &alice,
        "Bob's reply",
        Duration::from_secs(2),
        &format!("return (function() {{ {FEED_TEXTS} }})().includes('Yes, here!');"),
        vec![],
    )
    .await;

    // A reaction, seen live by the other.
    let react = "const a = [...document.querySelectorAll('section[aria-label=Messages] article')].find(a => a.textContent.includes('Are you there')); a.querySelector('[aria-label=\"Add emoji reaction\"]').click(); return true;";
    js(&bobs, react, vec![]).await;
    let search = bobs.wait().at_most(Duration::from_secs(5)).for_element(Locator::Css("#emoji-search")).await.unwrap();
    search.send_keys("octopus").await.unwrap();
    until(
        &bobs,
        "the octopus",
        Duration::from_secs(5),
        "return document.querySelector('.emoji-grid button[aria-label=octopus]') !== null",
        vec![],
    )
    .await;
    search.send_keys("\u{E007}").await.unwrap();
    until(&alice, "the reaction", Duration::from_secs(3), "return [...document.querySelectorAll('.reaction')].some(r => r.getAttribute('aria-label').startsWith('octopus: 1'));", vec![]).await;

    // The owner edits the message; Bob sees the new text, marked edited.
    let edit = "const a = [...document.querySelectorAll('section[aria-label=Messages] article')].find(a => a.textContent.includes('Are you there')); a.querySelector('[aria-label=\"Message actions\"][aria-haspopup]').click(); return true;";
    js(&alice, edit, vec![]).await;
    click_menu(&alice, "Edit message").await;
    let box_ = alice.wait().at_most(Duration::from_secs(5)).for_element(Locator::Css(".edit-box")).await.unwrap();
    box_.clear().await.unwrap();
    box_.send_keys("Hi Bob! Are you still there?").await.unwrap();
    click(&alice, ".edit-form button[type=submit]").await;
    until(&bobs, "the edit", Duration::from_secs(3), "return [...document.querySelectorAll('section[aria-label=Messages] article')].some(a => a.textContent.includes('still there') && a.textContent.includes('(edited)'));", vec![]).await;

    // A direct message, and its unread count on the other side.
    alice.goto(&format!("{}/#narrow/dm/{}-Bob-Builder", app.address, bob.user_id)).await.unwrap();
    until(
        &alice,
        "the conversation",
        Duration::from_secs(10),
        "return document.getElementById('narrow-title').textContent === 'Bob Builder';",
        vec![],
    )
    .await;
    open_compose(&alice).await;
    until(
        &alice,
        "the recipient",
        Duration::from_secs(5),
        "return document.querySelector('.dm-target .pill') !== null && !document.querySelector('.dm-target').hidden;",
        vec![],
    )
    .await;
    type_and_send(&alice, "Just between us").await;
    until(&bobs, "the direct message counted", Duration::from_secs(3), "const n = document.querySelector('nav[aria-label=\"Direct messages\"] .count'); return n && n.textContent === '1';", vec![]).await;

    // Bob searches.
    let search_box = bobs.find(Locator::Css("#search")).await.unwrap();
    search_box.send_keys("plan\u{E007}").await.unwrap();
    until(&bobs, "search results", Duration::from_secs(10), "return document.querySelectorAll('section[aria-label=Messages] article').length >= 30 && document.getElementById('narrow-title').textContent === 'Search: plan';", vec![]).await;

    // The owner deletes a message: it goes from Bob's feed.
    bobs.goto(&format!("{}/#narrow/channel/{general}-general/topic/hello", app.address)).await.unwrap();
    until(
        &bobs,
        "the topic again",
        Duration::from_secs(10),
        &format!("return (function() {{ {FEED_TEXTS} }})().includes('Yes, here!');"),
        vec![],
    )
    .await;
    alice.goto(&format!("{}/#narrow/channel/{general}-general/topic/hello", app.address)).await.unwrap();
    until(
        &alice,
        "the owner's topic",
        Duration::from_secs(10),
        &format!("return (function() {{ {FEED_TEXTS} }})().length === 2;"),
        vec![],
    )
    .await;
    screenshot(&alice, "web-client-light").await;
    assert_eq!(accessibility_problems(&alice).await, Vec::<String>::new(), "a topic in the light theme");
    let delete = "const a = [...document.querySelectorAll('section[aria-label=Messages] article')].find(a => a.textContent.includes('still there')); a.querySelector('[aria-label=\"Message actions\"][aria-haspopup]').click(); return true;";
    js(&alice, delete, vec![]).await;
    click_menu(&alice, "Delete message").await;
    click(&alice, "dialog .danger").await;
    until(
        &bobs,
        "the deletion",
        Duration::from_secs(3),
        &format!("return !(function() {{ {FEED_TEXTS} }})().some(t => t.includes('still there'));"),
        vec![],
    )
    .await;

    // Bob's unfinished message is kept as a draft on the server (Zulip's default), for his
    // other browsers and apps.
    open_compose(&bobs).await;
    bobs.find(Locator::Css("#compose-content")).await.unwrap().send_keys("An unfinished thought").await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, body) = json(app.as_user(&bob, Method::GET, "/drafts").send().await.unwrap()).await;
        let drafts = body["drafts"].as_array().unwrap();
        if let Some(draft) = drafts.iter().find(|d| d["content"] == "An unfinished thought") {
            assert_eq!(
                (&draft["type"], &draft["to"], &draft["topic"]),
                (&json!("stream"), &json!([general]), &json!("hello"))
            );
            break;
        }
        assert!(Instant::now() < deadline, "no draft on the server: {body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // A file, with its progress shown, linked in the message.
    let file = std::env::temp_dir().join(format!("agora-upload-{}.txt", std::process::id()));
    std::fs::write(&file, "a file for Bob\n".repeat(1000)).unwrap();
    open_compose(&alice).await;
    let watch = "window.sawProgress = false; new MutationObserver(() => { if (document.querySelector('.uploads progress[aria-label^=\"Uploading\"]')) window.sawProgress = true; })
        .observe(document.querySelector('.uploads'), { childList: true, subtree: true }); return true;";
    js(&alice, watch, vec![]).await;
    let input = alice.find(Locator::Css("#compose-file")).await.unwrap();
    input.send_keys(file.to_str().unwrap()).await.unwrap();
    until(
        &alice,
        "the uploaded link",
        Duration::from_secs(10),
        "return document.getElementById('compose-content').value.includes('/user_uploads/');",
        vec![],
    )
    .await;
    assert_eq!(js(&alice, "return window.sawProgress;", vec![]).await, json!(true), "a progress bar while it uploaded");
    let field = alice.find(Locator::Css("#compose-content")).await.unwrap();
    field.send_keys(CTRL_ENTER).await.unwrap();
    until(&bobs, "the file's link", Duration::from_secs(3), "return [...document.querySelectorAll('section[aria-label=Messages] article a')].some(a => a.getAttribute('href').includes('/user_uploads/'));", vec![]).await;
    std::fs::remove_file(&file).ok();

    // Dark, and narrow as a phone.
    let dark = app.as_user(&owner, Method::PATCH, "/settings").form(&[("color_scheme", "2")]).send().await.unwrap();
    assert_eq!(dark.status(), 200);
    until(
        &alice,
        "the dark theme",
        Duration::from_secs(3),
        "return document.documentElement.dataset.theme === 'dark';",
        vec![],
    )
    .await;
    screenshot(&alice, "web-client-dark").await;
    assert_eq!(accessibility_problems(&alice).await, Vec::<String>::new(), "the dark theme");
    alice.set_window_size(360, 740).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    screenshot(&alice, "web-client-phone").await;
    alice.set_window_size(1280, 860).await.unwrap();

    // The server restarts under the open pages: they say so, reconnect, and go on.
    let port = app.address.rsplit(':').next().unwrap().parse::<u16>().unwrap();
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;
    until(
        &alice,
        "the reconnecting notice",
        Duration::from_secs(10),
        "return document.getElementById('connection').textContent === 'Reconnecting…';",
        vec![],
    )
    .await;
    let mut settings = test_settings(&data_dir);
    settings.bind = format!("127.0.0.1:{port}");
    let app = spawn_with(settings).await;
    until(
        &alice,
        "the reconnection",
        Duration::from_secs(40),
        "return document.getElementById('connection').textContent === '';",
        vec![],
    )
    .await;
    open_compose(&alice).await;
    type_and_send(&alice, "Back after the restart").await;
    until(
        &bobs,
        "a message after the restart",
        Duration::from_secs(40),
        &format!("return (function() {{ {FEED_TEXTS} }})().includes('Back after the restart');"),
        vec![],
    )
    .await;

    // Settings, as an administrator sees them, pass the accessibility rules too.
    click(&alice, "#settings-button").await;
    until(
        &alice,
        "the settings",
        Duration::from_secs(5),
        "return document.querySelector('dialog[open] .settings') !== null;",
        vec![],
    )
    .await;
    screenshot(&alice, "web-client-settings").await;
    assert_eq!(accessibility_problems(&alice).await, Vec::<String>::new(), "the settings");

    // Neither page met an error along the way.
    for client in [&alice, &bobs] {
        assert_eq!(js(client, "return window.agoraErrors;", vec![]).await, json!([]));
    }

    drop(driver);
    app.stop().await;
    drop(tmp);
}

/// Opens the compose box (on the narrow's conversation) unless it is open.
async fn open_compose(client: &Client) {
    let script = "const closed = document.querySelector('.compose-closed'); if (closed && !closed.hidden) closed.querySelector('button').click(); return true;";
    js(client, script, vec![]).await;
    until(
        client,
        "the compose box",
        Duration::from_secs(5),
        "return !document.querySelector('.compose-form').hidden;",
        vec![],
    )
    .await;
}

/// Clicks a menu item by its text.
async fn click_menu(client: &Client, text: &str) {
    let script = "const b = [...document.querySelectorAll('[role=menu] button')].find(b => b.textContent === arguments[0]); if (b) { b.click(); return true; } return false;";
    until(client, &format!("menu item {text}"), Duration::from_secs(5), script, vec![json!(text)]).await;
}

async fn owner_name(app: &TestApp) -> String {
    let (_, me) = json(app.as_user(&app.owner, Method::GET, "/users/me").send().await.unwrap()).await;
    me["full_name"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn an_administrator_runs_the_organization_from_the_browser() {
    let Some((chromium, chromedriver)) = installed_browser() else { return };
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob Builder", 400).await;
    make_channel(&app, &owner, "general", false).await;
    let form =
        [("subscriptions", json!([{ "name": "general" }]).to_string()), ("principals", json!([bob.email]).to_string())];
    assert_eq!(
        post(&app, &owner, "/users/me/subscriptions", &form.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>())
            .await
            .status(),
        200
    );
    let form = [("type", "stream"), ("to", "general"), ("topic", "launch"), ("content", "Is the launch ready?")];
    assert_eq!(post(&app, &bob, "/messages", &form).await.status(), 200);

    let driver = start_driver(&chromedriver);
    let admin = browser_sized(&driver, &chromium, 1280, 860).await;
    sign_in(&admin, &app.address, &owner.email, &owner.password).await;

    // The Inbox lists the unread conversation; its link opens it.
    until(
        &admin,
        "the inbox",
        Duration::from_secs(5),
        "return [...document.querySelectorAll('#view a')].some(a => a.textContent === '#general › launch');",
        vec![],
    )
    .await;
    screenshot(&admin, "web-client-inbox").await;
    click_link(&admin, "#view", "#general › launch").await;
    until(
        &admin,
        "the topic",
        Duration::from_secs(10),
        &format!("return (function() {{ {FEED_TEXTS} }})().includes('Is the launch ready?');"),
        vec![],
    )
    .await;

    // Keyboard: `r` replies to the selected message, in its topic.
    admin.find(Locator::Css("body")).await.unwrap().send_keys("r").await.unwrap();
    until(&admin, "the reply box", Duration::from_secs(5), "return document.activeElement && document.activeElement.id === 'compose-content' && document.getElementById('compose-topic').value === 'launch';", vec![]).await;
    type_and_send(&admin, "Yes, shipping today").await;
    until(
        &admin,
        "the reply",
        Duration::from_secs(5),
        &format!("return (function() {{ {FEED_TEXTS} }})().includes('Yes, shipping today');"),
        vec![],
    )
    .await;
    // `?` lists the shortcuts; Escape closes the list.
    js(&admin, "document.activeElement.blur(); return true;", vec![]).await;
    admin.find(Locator::Css("body")).await.unwrap().send_keys("?").await.unwrap();
    until(
        &admin,
        "the shortcuts",
        Duration::from_secs(5),
        "return document.querySelector('dialog[open] .shortcuts') !== null;",
        vec![],
    )
    .await;
    admin.find(Locator::Css("dialog[open]")).await.unwrap().send_keys("\u{E00C}").await.unwrap();
    until(
        &admin,
        "the shortcuts closed",
        Duration::from_secs(5),
        "return document.querySelector('dialog[open]') === null;",
        vec![],
    )
    .await;

    // The topic is resolved from its menu: it is renamed for everyone.
    let menu = "const a = [...document.querySelectorAll('nav[aria-label=Channels] .topics a')].find(a => a.textContent === 'launch'); a.parentElement.querySelector('button.options').click(); return true;";
    js(&admin, menu, vec![]).await;
    click_menu(&admin, "Mark as resolved").await;
    until(
        &admin,
        "the resolved topic",
        Duration::from_secs(5),
        "return document.getElementById('narrow-title').textContent.endsWith('✔ launch');",
        vec![],
    )
    .await;
    let (_, body) =
        json(app.as_user(&bob, Method::GET, "/messages?anchor=newest&num_before=5&num_after=0").send().await.unwrap())
            .await;
    let channel_messages: Vec<&Value> =
        body["messages"].as_array().unwrap().iter().filter(|m| m["type"] == "stream").collect();
    assert!(channel_messages.len() >= 2 && channel_messages.iter().all(|m| m["subject"] == "✔ launch"), "{body}");

    // A channel made from the channel browser.
    click(&admin, "nav[aria-label=Channels] .section-head button").await;
    fill(&admin, "#new-channel-name", "design").await;
    fill(&admin, "#new-channel-description", "Pixels and words").await;
    click(&admin, "dialog .channels-dialog form button[type=submit]").await;
    until(&admin, "the new channel", Duration::from_secs(5), "return [...document.querySelectorAll('nav[aria-label=Channels] a')].some(a => a.textContent === 'design') && document.getElementById('narrow-title').textContent === '#design';", vec![]).await;

    // A person's card, from the user list.
    let card = "const b = [...document.querySelectorAll('aside[aria-label=Users] button.person')].find(b => b.textContent.startsWith('Bob Builder')); b.click(); return true;";
    js(&admin, card, vec![]).await;
    until(&admin, "Bob's card", Duration::from_secs(5), "const c = document.querySelector('.profile-card'); return c && c.textContent.includes('Member') && c.textContent.includes('Send direct message');", vec![]).await;
    admin.find(Locator::Css(".profile-card a")).await.unwrap().click().await.unwrap();
    until(
        &admin,
        "the conversation with Bob",
        Duration::from_secs(5),
        "return document.getElementById('narrow-title').textContent === 'Bob Builder';",
        vec![],
    )
    .await;

    // Settings: an invitation by mail, and Bob made a moderator.
    click(&admin, "#settings-button").await;
    fill(&admin, "#invite-emails", "newcomer@example.com").await;
    let send = "const b = [...document.querySelectorAll('dialog[open] button')].find(b => b.textContent === 'Send invitations'); b.click(); return true;";
    js(&admin, send, vec![]).await;
    let mail = crate::invites::outbox_mails(&app.data_dir, 1);
    assert!(mail.iter().any(|m| m.contains("newcomer@example.com")), "{mail:?}");
    let role = "const s = document.querySelector('select[aria-label=\"Role of Bob Builder\"]'); s.value = '300'; s.dispatchEvent(new Event('change')); return true;";
    js(&admin, role, vec![]).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, body) =
            json(app.as_user(&owner, Method::GET, &format!("/users/{}", bob.user_id)).send().await.unwrap()).await;
        if body["user"]["role"] == json!(300) {
            break;
        }
        assert!(Instant::now() < deadline, "Bob's role: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(js(&admin, "return window.agoraErrors;", vec![]).await, json!([]));
    drop(driver);
    app.stop().await;
}
