//! Avatars over HTTP: `POST /users/me/avatar` (Zulip's sizes, served at `avatar_url`),
//! `DELETE` back to the organization's default avatar, `avatar_version` and the `realm_user` event, the
//! organization's `avatar_changes_disabled`, and refusals.

use reqwest::multipart::{Form, Part};
use reqwest::Method;
use serde_json::json;

use crate::helpers::{error, expect, json, send, spawn_app, Watch};
use crate::realm_emoji::png;
use crate::uploads::fetch_file;

fn image_form(data: Vec<u8>) -> Form {
    Form::new().part("file", Part::bytes(data).file_name("me.png").mime_str("image/png").unwrap())
}

#[actix_web::test]
async fn an_uploaded_avatar_is_served_at_its_url_and_announced() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let mut watch = Watch::new(&app, &owner, r#"["realm_user"]"#).await;
    let response = app
        .as_user(&hamlet, Method::POST, "/users/me/avatar")
        .multipart(image_form(png(640, 480)))
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
    let url = body["avatar_url"].as_str().unwrap().to_owned();
    assert_eq!(body, json!({"result": "success", "msg": "", "avatar_url": url}));
    assert!(url.starts_with("/user_avatars/1/") && url.ends_with(".png?version=2"), "{url}");
    let medium = url.replace(".png?", "-medium.png?");
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "realm_user", "op": "update", "person": {"user_id": hamlet.user_id, "avatar_source": "U",
                    "avatar_url": url, "avatar_url_medium": medium, "avatar_version": 2}})]
    );
    for (url, size) in [(&url, 100), (&medium, 500)] {
        let served = fetch_file(&app, None, url).await;
        assert_eq!((served.status().as_u16(), served.headers()["content-type"].to_str().unwrap()), (200, "image/png"));
        let image = image::load_from_memory(&served.bytes().await.unwrap()).unwrap();
        assert_eq!((image.width(), image.height()), (size, size));
    }
    // Everywhere users are shown.
    let (_, me) = json(app.as_user(&hamlet, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!((me["avatar_url"].clone(), me["avatar_version"].clone()), (json!(url), json!(2)));
    let (_, user) =
        json(app.as_user(&owner, Method::GET, &format!("/users/{}", hamlet.user_id)).send().await.unwrap()).await;
    assert_eq!(user["user"]["avatar_url"], json!(url));

    let (status, body) = json(send(&app, &hamlet, Method::DELETE, "/users/me/avatar", &[]).await).await;
    assert_eq!(status, 200);
    // Back to the organization's default: a Jdenticon in a new organization.
    let back = format!("/user_avatars/1/jdenticon/{}.png?version=3", hamlet.user_id);
    assert_eq!(body["avatar_url"], json!(back));
    assert_eq!(watch.events(&app).await[0]["person"]["avatar_source"], json!("J"));
}

#[actix_web::test]
async fn avatars_are_refused_as_zulip_refuses_them() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let post = |form: Form| app.as_user(&hamlet, Method::POST, "/users/me/avatar").multipart(form).send();
    expect(post(Form::new().text("a", "b")).await.unwrap(), 400, error("You must upload exactly one avatar.")).await;
    let junk = Form::new().part("f", Part::bytes(b"junk".to_vec()).file_name("a.png"));
    let bad =
        json!({"result": "error", "msg": "Could not decode image; did you upload an image file?", "code": "BAD_IMAGE"});
    expect(post(junk).await.unwrap(), 400, bad).await;
    let big = Form::new().part("f", Part::bytes(vec![0u8; (5 << 20) + 1]).file_name("a.png"));
    expect(post(big).await.unwrap(), 400, error("Uploaded file is larger than the allowed limit of 5 MiB")).await;
    let response = send(&app, &owner, Method::PATCH, "/realm", &[("avatar_changes_disabled", "true")]).await;
    assert_eq!(response.status(), 200);
    let disabled = error("Avatar changes are disabled in this organization.");
    expect(post(image_form(png(10, 10))).await.unwrap(), 400, disabled.clone()).await;
    expect(send(&app, &hamlet, Method::DELETE, "/users/me/avatar", &[]).await, 400, disabled).await;
    // Administrators still may.
    let response =
        app.as_user(&owner, Method::POST, "/users/me/avatar").multipart(image_form(png(10, 10))).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(!app.data_dir.join("uploads/user_avatars/1").read_dir().unwrap().any(|e| {
        let name = e.unwrap().file_name().into_string().unwrap();
        name.starts_with(
            &agora_actors::uploads::names::avatar_path(
                agora_actors::ids::RealmId(1),
                agora_actors::ids::UserId(hamlet.user_id),
            )[2..],
        )
    }));
}

#[actix_web::test]
async fn administrators_upload_the_organization_icon() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let mut watch = Watch::new(&app, &hamlet, r#"["realm"]"#).await;
    let post =
        |who: &crate::helpers::Creds, form: Form| app.as_user(who, Method::POST, "/realm/icon").multipart(form).send();
    let not_admin =
        json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"});
    expect(post(&hamlet, image_form(png(10, 10))).await.unwrap(), 400, not_admin).await;
    expect(post(&owner, Form::new().text("a", "b")).await.unwrap(), 400, error("You must upload exactly one icon."))
        .await;
    let (status, body) = json(post(&owner, image_form(png(300, 200))).await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let url = "/user_avatars/1/realm/icon.png?version=2";
    assert_eq!(body, json!({"result": "success", "msg": "", "icon_url": url}));
    assert_eq!(
        watch.events(&app).await,
        vec![
            json!({"type": "realm", "op": "update_dict", "property": "icon", "data": {"icon_url": url, "icon_source": "U"}})
        ]
    );
    let data = crate::helpers::register(&app, &hamlet, &[("fetch_event_types", r#"["realm"]"#)]).await;
    assert_eq!((data["realm_icon_url"].clone(), data["realm_icon_source"].clone()), (json!(url), json!("U")));
    let served = fetch_file(&app, None, url).await;
    let image = image::load_from_memory(&served.bytes().await.unwrap()).unwrap();
    assert_eq!((image.width(), image.height()), (100, 100));
    let (status, body) = json(send(&app, &owner, Method::DELETE, "/realm/icon", &[]).await).await;
    assert_eq!(status, 200);
    assert!(body["icon_url"].as_str().unwrap().starts_with("https://secure.gravatar.com/avatar/"), "{body}");
    assert_eq!(watch.events(&app).await[0]["data"]["icon_source"], json!("G"));
}

#[actix_web::test]
async fn jdenticon_avatars_are_drawn_from_the_realm_uuid_and_the_user_id() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    // Accounts get the organization's default when they are made: a Jdenticon in a new
    // organization (Zulip 12), a gravatar where Gravatar is the default.
    crate::helpers::gravatar_default(&app).await;
    let gus = app.create_user("", "gus@agora.test", "Gus", 400).await;
    let response = send(&app, &owner, Method::PATCH, "/realm", &[("default_avatar_source", "J")]).await;
    assert_eq!(response.status(), 200);
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let (_, me) = json(app.as_user(&hamlet, Method::GET, "/users/me").send().await.unwrap()).await;
    let url = format!("/user_avatars/1/jdenticon/{}.png?version=1", hamlet.user_id);
    assert_eq!(me["avatar_url"], json!(url));
    // Even to clients that compute gravatars themselves (`client_gravatar`).
    let (_, users) =
        json(app.as_user(&owner, Method::GET, "/users").query(&[("client_gravatar", "true")]).send().await.unwrap())
            .await;
    let listed = users["members"].as_array().unwrap().iter().find(|u| u["user_id"] == hamlet.user_id).unwrap().clone();
    assert_eq!((&listed["avatar_url"], &listed["avatar_version"]), (&json!(url), &json!(1)));
    let gus_entry = users["members"].as_array().unwrap().iter().find(|u| u["user_id"] == gus.user_id).unwrap().clone();
    assert_eq!(gus_entry["avatar_url"], json!(null), "a gravatar the client computes");

    // Served to anyone, drawn from `{realm_uuid}:{user_id}` as clients that draw it do.
    let state = crate::helpers::register(&app, &owner, &[("fetch_event_types", r#"["realm"]"#)]).await;
    let uuid = state["realm_uuid"].as_str().unwrap().to_owned();
    let medium = url.replace(".png?", "-medium.png?");
    for (url, size) in [(&url, 100), (&medium, 500)] {
        let served = fetch_file(&app, None, url).await;
        assert_eq!((served.status().as_u16(), served.headers()["content-type"].to_str().unwrap()), (200, "image/png"));
        let bytes = served.bytes().await.unwrap();
        let drawn = agora_actors::uploads::jdenticon::png(&format!("{uuid}:{}", hamlet.user_id), size);
        assert_eq!(bytes.as_ref(), drawn.as_slice());
        let image = image::load_from_memory(&bytes).unwrap();
        assert_eq!((image.width(), image.height()), (size, size));
        // Drawn once, then kept like any avatar.
        let kept = app
            .data_dir
            .join("uploads/user_avatars/1/jdenticon")
            .join(url.split('/').nth(4).unwrap().split('?').next().unwrap());
        assert_eq!(std::fs::read(&kept).unwrap(), drawn, "{}", kept.display());
        let again = fetch_file(&app, None, url).await;
        assert_eq!(again.bytes().await.unwrap().as_ref(), drawn.as_slice());
    }
    // No icon for a user whose avatar is no Jdenticon, nor for one who does not exist.
    for path in [format!("/user_avatars/1/jdenticon/{}.png", gus.user_id), "/user_avatars/1/jdenticon/999.png".into()] {
        assert_eq!(fetch_file(&app, None, &path).await.status(), 404, "{path}");
    }

    // Removing an avatar never uploaded changes nothing; an uploaded one goes back to the
    // organization's default.
    let mut watch = Watch::new(&app, &owner, r#"["realm_user"]"#).await;
    let (status, body) = json(send(&app, &hamlet, Method::DELETE, "/users/me/avatar", &[]).await).await;
    assert_eq!((status, &body["avatar_url"]), (200, &json!(url)));
    assert_eq!(watch.events(&app).await, Vec::<serde_json::Value>::new());
    let upload = app.as_user(&hamlet, Method::POST, "/users/me/avatar").multipart(image_form(png(64, 64)));
    assert_eq!(upload.send().await.unwrap().status(), 200);
    let (_, body) = json(send(&app, &hamlet, Method::DELETE, "/users/me/avatar", &[]).await).await;
    let back = format!("/user_avatars/1/jdenticon/{}.png?version=3", hamlet.user_id);
    assert_eq!(body["avatar_url"], json!(back));
    let events = watch.events(&app).await;
    assert_eq!(events.last().unwrap()["person"]["avatar_source"], json!("J"));
    app.stop().await;
}
