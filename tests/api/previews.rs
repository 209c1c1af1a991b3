//! Image previews over HTTP: an uploaded image gets thumbnails from the worker (served at
//! Zulip's `/user_uploads/thumbnail/<path_id>/<format>`), a message linking it renders
//! Zulip's `message_inline_image` preview and matches `has:image`; a preview whose
//! thumbnail is not made yet shows the loading placeholder until the thumbnail arrives
//! (then `update_message` with `rendering_only`).

use std::time::Duration;

use agora_actors::realm::attachments::ThumbnailsMade;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{json, register, spawn_app, Creds, TestApp, Watch};
use crate::realm_emoji::png;
use crate::uploads::{fetch_file, sent, upload_as};

/// Uploads `data` as an image named `name`; its URL.
async fn image(app: &TestApp, who: &Creds, name: &str, data: Vec<u8>) -> String {
    let (status, body) = json(upload_as(app, who, "file", name, data, None).await).await;
    assert_eq!(status, 200, "{body}");
    body["url"].as_str().unwrap().to_owned()
}

/// Waits (at most 10 s) until `url` is served.
async fn served(app: &TestApp, who: &Creds, url: &str) -> reqwest::Response {
    for _ in 0..500 {
        let response = fetch_file(app, Some(who), url).await;
        if response.status() == 200 {
            return response;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{url} was never served");
}

/// `GET /thumbnail/status/<path_id>` (FL 479): its status and body.
async fn thumbnail_status(app: &TestApp, who: &Creds, url: &str) -> (u16, serde_json::Value) {
    let path = url.replacen("/user_uploads/", "/thumbnail/status/", 1);
    json(app.as_user(who, Method::GET, &path).send().await.unwrap()).await
}

async fn rendered(app: &TestApp, who: &Creds, id: i64) -> String {
    let (_, body) = json(app.as_user(who, Method::GET, &format!("/messages/{id}")).send().await.unwrap()).await;
    body["message"]["content"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn an_uploaded_image_is_previewed_with_its_thumbnail() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let data = register(&app, &owner, &[("fetch_event_types", r#"["realm"]"#)]).await;
    assert_eq!(
        data["server_thumbnail_formats"],
        json!([{"name": "840x560.webp", "max_width": 840, "max_height": 560, "format": "webp", "animated": false}])
    );
    let url = image(&app, &owner, "photo.png", png(1200, 900)).await;
    let path_id = url.trim_start_matches("/user_uploads/");
    let thumbnail = format!("/user_uploads/thumbnail/{path_id}/840x560.webp");
    let response = served(&app, &owner, &thumbnail).await;
    assert_eq!(response.headers()["content-type"], "image/webp");
    let decoded = image::load_from_memory(&response.bytes().await.unwrap()).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (747, 560));

    let to = json!([owner.user_id]).to_string();
    let id = sent(&app, &owner, &[("type", "direct"), ("to", &to), ("content", &format!("[photo.png]({url})"))]).await;
    assert_eq!(
        rendered(&app, &owner, id).await,
        format!(
            "<div class=\"message_inline_image\"><a href=\"{url}\" title=\"photo.png\"><img \
             data-original-content-type=\"image/png\" data-original-dimensions=\"1200x900\" src=\"{thumbnail}\"></a></div>"
        )
    );
    let narrow = json!([{"operator": "has", "operand": "image"}]).to_string();
    let query = [("anchor", "newest"), ("num_before", "10"), ("narrow", narrow.as_str())];
    let (_, found) = json(app.as_user(&owner, Method::GET, "/messages").query(&query).send().await.unwrap()).await;
    assert_eq!(found["messages"][0]["id"], json!(id));
    // A plain file gets no preview and is no image.
    let text = crate::uploads::uploaded(&app, &owner, "notes.txt", b"x").await;
    let plain = sent(&app, &owner, &[("type", "direct"), ("to", &to), ("content", &text)]).await;
    assert!(!rendered(&app, &owner, plain).await.contains("message_inline_image"));
    let (_, found) = json(app.as_user(&owner, Method::GET, "/messages").query(&query).send().await.unwrap()).await;
    assert_eq!(found["messages"].as_array().unwrap().len(), 1);

    // Markdown image syntax (FL 437) shows an uploaded image where it stands, and nothing
    // else (FL 467): third-party images and uploads that are no image stay as written.
    let content = format!("> see ![a \"shot\"]({url}) and ![x](https://example.com/x.png) ![t]({text})");
    let inline = sent(&app, &owner, &[("type", "direct"), ("to", &to), ("content", &content)]).await;
    assert_eq!(
        rendered(&app, &owner, inline).await,
        format!(
            "<blockquote>\n<p>see <img alt=\"a &quot;shot&quot;\" class=\"inline-image\" \
             data-original-content-type=\"image/png\" data-original-dimensions=\"1200x900\" \
             data-original-src=\"{url}\" src=\"{thumbnail}\"> and ![x](https://example.com/x.png) ![t]({text})</p>\n</blockquote>"
        )
    );
    let (_, found) = json(app.as_user(&owner, Method::GET, "/messages").query(&query).send().await.unwrap()).await;
    assert_eq!(found["messages"].as_array().unwrap().len(), 2, "an inline image is an image");
}

#[actix_web::test]
async fn a_preview_shows_the_placeholder_until_its_thumbnail_is_made() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    // A PNG whose pixel data is garbage: its dimensions are known, its pixels are not, so
    // the worker makes no thumbnail and the test plays the worker.
    let mut cut = png(64, 48);
    let idat = cut.windows(4).position(|w| w == b"IDAT").unwrap();
    for byte in &mut cut[idat + 4..idat + 12] {
        *byte = 0xff;
    }
    let url = image(&app, &owner, "cut.png", cut).await;
    let mut watch = Watch::new(&app, &hamlet, r#"["update_message"]"#).await;
    let to = json!([hamlet.user_id]).to_string();
    let id =
        sent(&app, &owner, &[("type", "direct"), ("to", &to), ("content", &format!("look: [cut.png]({url})"))]).await;
    let placeholder = format!(
        "<div class=\"message_inline_image\"><a href=\"{url}\" title=\"cut.png\"><img class=\"image-loading-placeholder\" \
         data-original-content-type=\"image/png\" data-original-dimensions=\"64x48\" \
         src=\"/static/images/loading/loader-black.svg\"></a></div>"
    );
    let before = rendered(&app, &hamlet, id).await;
    assert_eq!(before, format!("<p>look: <a href=\"{url}\">cut.png</a></p>\n{placeholder}"));
    // In Markdown image syntax, the placeholder is an `inline-image` (FL 437).
    let to_self = json!([owner.user_id]).to_string();
    let inline =
        sent(&app, &owner, &[("type", "direct"), ("to", &to_self), ("content", &format!("![cut]({url})"))]).await;
    let inline_tail = |src: &str, class: &str| {
        format!(
            "<p><img alt=\"cut\" class=\"{class}\" data-original-content-type=\"image/png\" \
             data-original-dimensions=\"64x48\" data-original-src=\"{url}\" src=\"{src}\"></p>"
        )
    };
    let loading = "/static/images/loading/loader-black.svg";
    assert_eq!(rendered(&app, &owner, inline).await, inline_tail(loading, "inline-image image-loading-placeholder"));

    // Clients poll the thumbnail's status (FL 479); who may not read the file is refused as
    // for a file that does not exist.
    let waiting = json!({"result": "success", "msg": "", "has_thumbnail": false});
    assert_eq!(thumbnail_status(&app, &owner, &url).await, (200, waiting.clone()));
    assert_eq!(thumbnail_status(&app, &hamlet, &url).await, (200, waiting));
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let refused = json!({"result": "error", "msg": "Invalid attachment", "code": "BAD_REQUEST"});
    assert_eq!(thumbnail_status(&app, &othello, &url).await, (400, refused.clone()));
    assert_eq!(thumbnail_status(&app, &owner, &format!("{url}x")).await, (400, refused));

    let (_, listed) = json(app.as_user(&owner, Method::GET, "/attachments").send().await.unwrap()).await;
    let attachment_id = listed["attachments"][0]["id"].as_i64().unwrap();
    let made = ThumbnailsMade { attachment_id, thumbnails: vec!["840x560.webp".into()] };
    app.realm("").addr.send(made).await.unwrap().unwrap();
    let ready = json!({"result": "success", "msg": "", "has_thumbnail": true});
    assert_eq!(thumbnail_status(&app, &hamlet, &url).await, (200, ready));
    let path_id = url.trim_start_matches("/user_uploads/");
    let after = before.replace(
        "<img class=\"image-loading-placeholder\" data-original-content-type=\"image/png\" data-original-dimensions=\"64x48\" src=\"/static/images/loading/loader-black.svg\">",
        &format!("<img data-original-content-type=\"image/png\" data-original-dimensions=\"64x48\" src=\"/user_uploads/thumbnail/{path_id}/840x560.webp\">"),
    );
    assert_ne!(after, before);
    assert_eq!(rendered(&app, &hamlet, id).await, after);
    let thumbnail = format!("/user_uploads/thumbnail/{path_id}/840x560.webp");
    assert_eq!(rendered(&app, &owner, inline).await, inline_tail(&thumbnail, "inline-image"));
    let events = watch.events(&app).await;
    assert_eq!(events.len(), 1);
    let event = &events[0];
    assert_eq!(event["rendering_only"], json!(true));
    assert_eq!(event["message_id"], json!(id));
    assert_eq!(event["message_ids"], json!([id]));
    assert_eq!(event["rendered_content"], json!(after));
    assert_eq!(event["user_id"], json!(null));
    assert_eq!(event["flags"], json!([]));
}

#[actix_web::test]
async fn images_waiting_for_thumbnails_are_thumbnailed_after_a_restart() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let url = image(&app, &owner, "later.png", png(100, 80)).await;
    let path_id = url.trim_start_matches("/user_uploads/").to_owned();
    let thumbnail = format!("/user_uploads/thumbnail/{path_id}/840x560.webp");
    served(&app, &owner, &thumbnail).await;
    let dir = app.data_dir.clone();
    let tmp = app.stop().await;
    // As if the server had stopped before the worker got to it: the row says "not made",
    // and there is no thumbnail.
    let conn = rusqlite::Connection::open(dir.join("agora.sqlite3")).unwrap();
    conn.execute("UPDATE attachments SET thumbnails = '[]'", []).unwrap();
    drop(conn);
    std::fs::remove_dir_all(dir.join("uploads/thumbnail")).unwrap();
    let app = crate::helpers::spawn_app_at(&dir).await;
    let response = served(&app, &owner, &thumbnail).await;
    assert_eq!(response.headers()["content-type"], "image/webp");
    app.stop().await;
    drop(tmp);
}

#[actix_web::test]
async fn an_uploaded_video_plays_inline() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let to = json!([owner.user_id]).to_string();
    // A `.mov` too, since level 495.
    for name in ["clip.mp4", "clip.mov"] {
        let url = image(&app, &owner, name, b"not really a video".to_vec()).await;
        let content = format!("see [{name}]({url})");
        let id = sent(&app, &owner, &[("type", "direct"), ("to", &to), ("content", &content)]).await;
        assert_eq!(
            rendered(&app, &owner, id).await,
            format!(
                "<p>see <a href=\"{url}\">{name}</a></p>\n<div class=\"message_inline_image message_inline_video\">\
                 <a href=\"{url}\" title=\"{name}\"><video preload=\"metadata\" src=\"{url}\"></video></a></div>"
            )
        );
    }
    app.stop().await;
}

#[actix_web::test]
async fn an_uploaded_audio_file_shown_as_an_image_is_a_player() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let to = json!([owner.user_id]).to_string();
    let url = image(&app, &owner, "song.mp3", b"not really audio".to_vec()).await;
    // Level 405: `![title](url)` of an uploaded audio file is Zulip's player.
    for (content, title) in
        [(format!("![My \"song\"]({url})"), " title=\"My &quot;song&quot;\""), (format!("![]({url})"), "")]
    {
        let id = sent(&app, &owner, &[("type", "direct"), ("to", &to), ("content", &content)]).await;
        assert_eq!(
            rendered(&app, &owner, id).await,
            format!("<p><audio controls preload=\"metadata\" src=\"{url}\"{title}></audio></p>")
        );
    }
    // A link to it stays a link; a player is no image.
    let id = sent(&app, &owner, &[("type", "direct"), ("to", &to), ("content", &format!("[song.mp3]({url})"))]).await;
    assert_eq!(rendered(&app, &owner, id).await, format!("<p><a href=\"{url}\">song.mp3</a></p>"));
    let narrow = json!([{"operator": "has", "operand": "image"}]).to_string();
    let query = [("anchor", "newest"), ("num_before", "10"), ("narrow", narrow.as_str())];
    let (_, found) = json(app.as_user(&owner, Method::GET, "/messages").query(&query).send().await.unwrap()).await;
    assert_eq!(found["messages"], json!([]));
    app.stop().await;
}
