//! Custom emoji over HTTP: `POST /realm/emoji/{name}` with an image (made a 64-pixel PNG,
//! served at its `source_url`), `GET /realm/emoji`, the data set and event, `:name:` in
//! messages, reactions with `realm_emoji`, and `DELETE` (deactivation).

use reqwest::multipart::{Form, Part};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{error, expect, json, post, register, send, success, Watch};
use crate::uploads::{fetch_file, sent};

/// A PNG of `width` x `height`.
pub fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_pixel(width, height, image::Rgb([30, 140, 200]));
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image).write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

fn image_form(data: Vec<u8>) -> Form {
    Form::new().part("file", Part::bytes(data).file_name("emoji.png").mime_str("image/png").unwrap())
}

#[actix_web::test]
async fn a_custom_emoji_is_added_rendered_reacted_with_and_deactivated() {
    let app = crate::helpers::spawn_app().await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let mut watch = Watch::new(&app, &hamlet, r#"["realm_emoji"]"#).await;
    // A client with `individual_emoji_changes` (feature level 491) hears of the one emoji.
    let caps = r#"{"notification_settings_null": true, "individual_emoji_changes": true}"#;
    let mut granular =
        Watch::with_form(&app, &owner, &[("event_types", r#"["realm_emoji"]"#), ("client_capabilities", caps)]).await;
    let response = app
        .as_user(&hamlet, Method::POST, "/realm/emoji/party parrot")
        .multipart(image_form(png(300, 100)))
        .send()
        .await
        .unwrap();
    expect(response, 200, success()).await;

    let (_, listed) = json(app.as_user(&owner, Method::GET, "/realm/emoji").send().await.unwrap()).await;
    let emoji = listed["emoji"].as_object().unwrap().values().next().unwrap().clone();
    let id = emoji["id"].as_str().unwrap().to_owned();
    let url = emoji["source_url"].as_str().unwrap().to_owned();
    assert!(url.starts_with("/user_avatars/1/emoji/images/") && url.ends_with(".png"), "{url}");
    let expected = json!({"id": id, "name": "party_parrot", "source_url": url, "deactivated": false,
                          "author_id": hamlet.user_id, "still_url": null});
    assert_eq!(listed, json!({"result": "success", "msg": "", "emoji": {id.clone(): expected}}));
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "realm_emoji", "op": "update", "realm_emoji": {id.clone(): expected}})]
    );
    assert_eq!(granular.events(&app).await, vec![json!({"type": "realm_emoji", "op": "add", "emoji": expected})]);
    let data = register(&app, &owner, &[("fetch_event_types", r#"["realm_emoji"]"#)]).await;
    assert_eq!(data["realm_emoji"], json!({id.clone(): expected}));

    // Its image: a 64-pixel square PNG, served to anyone.
    let served = fetch_file(&app, None, &url).await;
    assert_eq!(served.status(), 200);
    assert_eq!(served.headers()["content-type"], "image/png");
    let decoded = image::load_from_memory(&served.bytes().await.unwrap()).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (64, 64));

    // Rendered in messages, and a reaction.
    let to = json!([owner.user_id]).to_string();
    let message = sent(&app, &hamlet, &[("type", "direct"), ("to", &to), ("content", "hi :party_parrot:")]).await;
    let (_, fetched) =
        json(app.as_user(&owner, Method::GET, &format!("/messages/{message}")).send().await.unwrap()).await;
    assert_eq!(
        fetched["message"]["content"],
        json!(format!("<p>hi <img alt=\":party_parrot:\" class=\"emoji\" src=\"{url}\" title=\"party_parrot\"></p>"))
    );
    let reactions = format!("/messages/{message}/reactions");
    expect(post(&app, &owner, &reactions, &[("emoji_name", "party_parrot")]).await, 200, success()).await;
    let form = [("emoji_name", "party_parrot"), ("emoji_code", id.as_str()), ("reaction_type", "realm_emoji")];
    expect(post(&app, &hamlet, &reactions, &form).await, 200, success()).await;
    let (_, fetched) =
        json(app.as_user(&owner, Method::GET, &format!("/messages/{message}")).send().await.unwrap()).await;
    let kinds: Vec<Value> = fetched["message"]["reactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!([r["emoji_code"], r["reaction_type"]]))
        .collect();
    assert_eq!(kinds, vec![json!([id, "realm_emoji"]), json!([id, "realm_emoji"])]);
    let wrong = [("emoji_name", "other"), ("emoji_code", id.as_str()), ("reaction_type", "realm_emoji")];
    let exists = json!({"result": "error", "msg": "Reaction already exists.", "code": "REACTION_ALREADY_EXISTS"});
    expect(post(&app, &owner, &format!("/messages/{message}/reactions"), &wrong).await, 400, exists).await;

    // Deactivated: the author (or an administrator) only; no longer rendered or usable.
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let path = "/realm/emoji/party_parrot";
    expect(
        send(&app, &othello, Method::DELETE, path, &[]).await,
        400,
        error("Must be an organization administrator or emoji author"),
    )
    .await;
    expect(send(&app, &hamlet, Method::DELETE, path, &[]).await, 200, success()).await;
    expect(send(&app, &hamlet, Method::DELETE, path, &[]).await, 400, error("Emoji 'party_parrot' does not exist"))
        .await;
    let events = watch.events(&app).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["realm_emoji"][&id]["deactivated"], json!(true));
    assert_eq!(
        granular.events(&app).await,
        vec![json!({"type": "realm_emoji", "op": "update_one", "emoji_id": id, "data": {"deactivated": true}})]
    );
    let second = sent(&app, &hamlet, &[("type", "direct"), ("to", &to), ("content", ":party_parrot:")]).await;
    let (_, fetched) =
        json(app.as_user(&owner, Method::GET, &format!("/messages/{second}")).send().await.unwrap()).await;
    assert_eq!(fetched["message"]["content"], json!("<p>:party_parrot:</p>"));
    let form = [("emoji_name", "party_parrot"), ("emoji_code", id.as_str()), ("reaction_type", "realm_emoji")];
    expect(
        post(&app, &owner, &format!("/messages/{second}/reactions"), &form).await,
        400,
        error("This custom emoji has been deactivated."),
    )
    .await;
    expect(
        post(&app, &owner, &format!("/messages/{second}/reactions"), &wrong).await,
        400,
        error("Invalid custom emoji name."),
    )
    .await;
}

#[actix_web::test]
async fn custom_emoji_are_refused_as_zulip_refuses_them() {
    let app = crate::helpers::spawn_app().await;
    let owner = app.owner.clone();
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let add = |who: &crate::helpers::Creds, name: &str, form: Form| {
        app.as_user(who, Method::POST, &format!("/realm/emoji/{name}")).multipart(form).send()
    };
    expect(
        add(&owner, "Bad", image_form(png(8, 8))).await.unwrap(),
        400,
        error("Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores."),
    )
    .await;
    expect(
        add(&owner, "ok_", image_form(png(8, 8))).await.unwrap(),
        400,
        error("Emoji names must end with either a letter or digit."),
    )
    .await;
    expect(add(&guest, "ok", image_form(png(8, 8))).await.unwrap(), 400, error("Not allowed for guest users")).await;
    expect(
        add(&owner, "ok", Form::new().text("a", "b")).await.unwrap(),
        400,
        error("You must upload exactly one file."),
    )
    .await;
    let two = image_form(png(8, 8)).part("second", Part::bytes(png(8, 8)).file_name("b.png"));
    expect(add(&owner, "ok", two).await.unwrap(), 400, error("You must upload exactly one file.")).await;
    let junk = Form::new().part("file", Part::bytes(b"not an image".to_vec()).file_name("x.png"));
    expect(
        add(&owner, "ok", junk).await.unwrap(),
        400,
        json!({"result": "error", "msg": "Could not decode image; did you upload an image file?", "code": "BAD_IMAGE"}),
    )
    .await;
    let big = Form::new().part("file", Part::bytes(vec![0u8; (5 << 20) + 1]).file_name("x.png"));
    expect(
        add(&owner, "ok", big).await.unwrap(),
        400,
        error("Uploaded file is larger than the allowed limit of 5 MiB"),
    )
    .await;
    // Nothing was stored by the refused ones.
    let emoji_dir = app.data_dir.join("uploads/user_avatars/1/emoji/images");
    assert!(!emoji_dir.exists() || std::fs::read_dir(&emoji_dir).unwrap().count() == 0);
    let (_, listed) = json(app.as_user(&owner, Method::GET, "/realm/emoji").send().await.unwrap()).await;
    assert_eq!(listed["emoji"], json!({}));
}
