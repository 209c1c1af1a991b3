//! Video calls over HTTP: `GET /calls/bigbluebutton/create` makes a join link as Zulip does,
//! and the join page (`/calls/bigbluebutton/join`) answers as a Zulip server without
//! BigBlueButton does.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;
use crate::web_sessions::Browser;

#[actix_web::test]
async fn bigbluebutton_links_lead_to_zulips_not_configured_error() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let create = |query: &str| app.as_user(&owner, Method::GET, &format!("/calls/bigbluebutton/create{query}")).send();
    expect(create("").await.unwrap(), 400, missing("meeting_name")).await;
    let bad = error("voice_only is not valid JSON");
    expect(create("?meeting_name=standup&voice_only=yes").await.unwrap(), 400, bad).await;
    let (status, body) = json(create("?meeting_name=stand%20up&voice_only=true").await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let url = body["url"].as_str().unwrap().to_owned();
    assert_eq!(body, json!({"result": "success", "msg": "", "url": url}));
    let token = url.strip_prefix("/calls/bigbluebutton/join?bigbluebutton=").unwrap();
    let data: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(token).unwrap()).unwrap();
    assert_eq!((data["name"].clone(), data["lock_settings_disable_cam"].clone()), (json!("stand up"), json!(true)));
    assert_eq!(data["moderator"], owner.user_id);
    let meeting = data["meeting_id"].as_str().unwrap();
    assert!(meeting.starts_with("zulip-") && meeting.len() == 18, "{meeting}");

    // The join page: the sign-in page first, and back here after.
    let mut browser = Browser::new(&app);
    let page = browser.get(&url).await;
    assert_eq!(page.status, 302);
    let next: String = form_urlencoded::byte_serialize(url.as_bytes()).collect();
    assert_eq!(page.header("location"), format!("/login/?next={next}"));
    let signed_in = browser.sign_in(&owner.email, &owner.password).await;
    assert_eq!(signed_in.status, 303);
    let page = browser.get(&url).await;
    assert_eq!((page.status, page.json()), (400, error("BigBlueButton is not configured.")));
    let page = browser.get("/calls/bigbluebutton/join").await;
    assert_eq!((page.status, page.json()), (400, missing("bigbluebutton")));
    app.stop().await;
}
