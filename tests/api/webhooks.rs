//! Incoming webhooks over HTTP (`/api/v1/external/json`, `/api/v1/external/alertmanager`):
//! authentication by `api_key` or HTTP Basic, where the messages go (`stream`, `topic`,
//! the bot's owner), and the integrations' exact topics and contents.

use reqwest::Method;
use serde_json::{json, Value};

use crate::bots::create_bot;
use crate::helpers::{expect, json, missing, post, send, spawn_app, success, Creds, TestApp};

/// The newest messages `who` received, oldest first: (sender, topic, raw content, client).
async fn newest(app: &TestApp, who: &Creds, n: usize) -> Vec<(String, String, String, String)> {
    let path = format!("/messages?anchor=newest&num_before={n}&num_after=0&apply_markdown=false");
    let (status, body) = json(app.as_user(who, Method::GET, &path).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let s = |k: &str| m[k].as_str().unwrap().to_owned();
            (s("sender_email"), s("subject"), s("content"), s("client"))
        })
        .collect()
}

async fn hook(app: &TestApp, path: &str, body: &Value) -> reqwest::Response {
    app.request(Method::POST, &format!("/external/{path}")).json(body).send().await.unwrap()
}

async fn setup() -> (TestApp, Creds) {
    let app = spawn_app().await;
    let form = [("subscriptions", r#"[{"name": "alerts"}]"#)];
    expect(
        post(&app, &app.owner, "/users/me/subscriptions", &form).await,
        200,
        json!({"result": "success", "msg": "", "subscribed": {"1": ["alerts"]}, "already_subscribed": {}, "new_subscription_messages_sent": true}),
    )
    .await;
    let bot = create_bot(&app, &app.owner, "hook", &[("bot_type", "2"), ("full_name", "Hook")]).await;
    (app, bot)
}

#[actix_web::test]
async fn the_generic_json_integration_posts_the_payload() {
    let (app, bot) = setup().await;
    let payload = json!({"check": "web", "state": {"up": false, "code": 503}, "tags": ["é", "prod"], "empty": {}});
    let path = format!("json?api_key={}&stream=alerts", bot.api_key);
    expect(hook(&app, &path, &payload).await, 200, success()).await;
    let content = "```json\n{\n  \"check\": \"web\",\n  \"state\": {\n    \"up\": false,\n    \"code\": 503\n  },\n  \"tags\": [\n    \"\\u00e9\",\n    \"prod\"\n  ],\n  \"empty\": {}\n}\n```";
    let expected = (bot.email.clone(), "JSON".to_owned(), content.to_owned(), "ZulipJSONWebhook".to_owned());
    assert_eq!(newest(&app, &app.owner, 1).await, vec![expected]);

    // `topic` overrides the integration's; `stream` may be an id.
    let path = format!("json?api_key={}&stream=1&topic=mine", bot.api_key);
    let (status, body) = json(hook(&app, &path, &json!({"a": 1})).await).await;
    assert_eq!((status, body), (200, success()));
    let (_, topic, content, _) = newest(&app, &app.owner, 1).await.remove(0);
    assert_eq!((topic.as_str(), content.as_str()), ("mine", "```json\n{\n  \"a\": 1\n}\n```"));

    // Without `stream`: a direct message to the bot's owner.
    let path = format!("json?api_key={}", bot.api_key);
    expect(hook(&app, &path, &json!({"dm": true})).await, 200, success()).await;
    let (sender, topic, content, _) = newest(&app, &app.owner, 1).await.remove(0);
    assert_eq!(
        (sender, topic.as_str(), content.as_str()),
        (bot.email.clone(), "", "```json\n{\n  \"dm\": true\n}\n```")
    );

    // HTTP Basic credentials work too.
    let response = app
        .request(Method::POST, "/external/json?stream=alerts&topic=basic")
        .basic_auth(&bot.email, Some(&bot.api_key))
        .json(&json!({"b": null}))
        .send()
        .await
        .unwrap();
    expect(response, 200, success()).await;
    let (_, topic, content, _) = newest(&app, &app.owner, 1).await.remove(0);
    assert_eq!((topic.as_str(), content.as_str()), ("basic", "```json\n{\n  \"b\": null\n}\n```"));

    // Refused as every Basic-authenticated route refuses: 401 UNAUTHORIZED with the
    // challenge (Zulip re-raises key errors as UnauthorizedError).
    let response = app
        .request(Method::POST, "/external/json?stream=alerts")
        .basic_auth(&bot.email, Some(&"b".repeat(32)))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["www-authenticate"], "Basic realm=\"zulip\"");
    expect(response, 401, json!({"result": "error", "msg": "Invalid API key", "code": "UNAUTHORIZED"})).await;
}

#[actix_web::test]
async fn webhook_requests_are_refused_as_zulip_refuses_them() {
    let (app, bot) = setup().await;
    let before = newest(&app, &app.owner, 5).await;
    expect(hook(&app, "json?stream=alerts", &json!({})).await, 400, missing("api_key")).await;
    let invalid = json!({"result": "error", "msg": "Invalid API key", "code": "INVALID_API_KEY"});
    expect(hook(&app, &format!("json?api_key={}", "a".repeat(32)), &json!({})).await, 401, invalid).await;
    let malformed = json!({"result": "error", "msg": "Malformed API key", "code": "INVALID_API_KEY"});
    expect(hook(&app, "json?api_key=short", &json!({})).await, 401, malformed).await;
    let response = app
        .request(Method::POST, &format!("/external/json?api_key={}", bot.api_key))
        .body("{not json")
        .send()
        .await
        .unwrap();
    expect(response, 400, json!({"result": "error", "msg": "Malformed JSON", "code": "BAD_REQUEST"})).await;
    // A channel that does not exist is no error of the third party's; the bot's owner is
    // told (once a minute at most).
    expect(hook(&app, &format!("json?api_key={}&stream=nowhere", bot.api_key), &json!({})).await, 200, success()).await;
    let alert = (
        "notification-bot@zulip.com".to_owned(),
        String::new(),
        format!(
            "Your bot `{}` tried to send a message to channel #**nowhere**, but that channel does not exist. \
             Click [here](#channels/new) to create it.",
            bot.email
        ),
        "Internal".to_owned(),
    );
    let mut expected = before.clone();
    expected.push(alert);
    let expected = expected[expected.len().saturating_sub(5)..].to_vec();
    assert_eq!(newest(&app, &app.owner, 5).await, expected);
    expect(hook(&app, &format!("json?api_key={}&stream=nowhere", bot.api_key), &json!({})).await, 200, success()).await;
    assert_eq!(newest(&app, &app.owner, 5).await, expected);
    // A deactivated bot's key.
    expect(send(&app, &app.owner, Method::DELETE, &format!("/bots/{}", bot.user_id), &[]).await, 200, success()).await;
    let deactivated = json!({"result": "error", "msg": "Account is deactivated", "code": "USER_DEACTIVATED"});
    expect(hook(&app, &format!("json?api_key={}&stream=alerts", bot.api_key), &json!({})).await, 401, deactivated)
        .await;
    // The webhook bot's key still opens no other endpoint.
    let response = app.as_user(&bot, Method::GET, "/users/me").send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401);
}

/// An alert as Alertmanager sends it (the shape of Zulip's `alertmanager` fixtures).
fn alert(status: &str, description: &str) -> Value {
    json!({
        "status": status,
        "labels": {"alertname": "High CPU Temperature", "host": "andromeda", "severity": "critical"},
        "annotations": {"description": description, "topic": "andromeda", "summary": "High CPU core temperature"},
        "startsAt": "2020-02-06T00:17:58.432911368Z",
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "http://cobalt:9090/graph?g0.expr=avg+by%28host%29+%28sensors_temp_input%7Bfeature%3D~%22core_%5B0-9%5D%2B%22%7D%29+%3E+15&g0.tab=1",
    })
}

fn alertmanager_payload(status: &str, alerts: Vec<Value>) -> Value {
    json!({
        "receiver": "ops-zulip", "status": status, "groupLabels": {},
        "commonLabels": {"alertname": "High CPU Temperature", "severity": "critical"},
        "commonAnnotations": {"summary": "High CPU core temperature"},
        "externalURL": "http://ops1:9093", "version": "4", "groupKey": "{}/{}:{}",
        "alerts": alerts,
    })
}

#[actix_web::test]
async fn alertmanager_alerts_are_grouped_into_topics_as_zulip_does() {
    let (app, bot) = setup().await;
    let path = format!("alertmanager?&api_key={}&stream=alerts&name=topic&desc=description", bot.api_key);
    let firing = alertmanager_payload(
        "firing",
        vec![alert("firing", "CPU core temperature is 34.75C"), alert("firing", "CPU core temperature is 17.625C")],
    );
    expect(hook(&app, &path, &firing).await, 200, success()).await;
    let url = "http://cobalt:9090/graph?g0.expr=avg+by%28host%29+%28sensors_temp_input%7Bfeature%3D~%22core_%5B0-9%5D%2B%22%7D%29+%3E+15&g0.tab=0";
    let expected = format!(
        ":alert: **FIRING**\n* CPU core temperature is 34.75C ([source]({url}))\n* CPU core temperature is 17.625C ([source]({url}))"
    );
    let client = "ZulipAlertmanagerWebhook".to_owned();
    assert_eq!(
        newest(&app, &app.owner, 1).await,
        vec![(bot.email.clone(), "andromeda".to_owned(), expected, client.clone())]
    );

    let resolved = alertmanager_payload("resolved", vec![alert("resolved", "CPU core temperature is 34.75C")]);
    expect(hook(&app, &path, &resolved).await, 200, success()).await;
    let expected = format!(":squared_ok: **Resolved** CPU core temperature is 34.75C ([source]({url}))");
    assert_eq!(newest(&app, &app.owner, 1).await, vec![(bot.email.clone(), "andromeda".to_owned(), expected, client)]);

    // Without `name`/`desc`: the `instance` label (missing here) and `alertname`; one
    // message per topic and status.
    let mut mixed = alertmanager_payload("firing", vec![alert("firing", "a"), alert("resolved", "b")]);
    mixed["alerts"][1].as_object_mut().unwrap().remove("generatorURL");
    let path = format!("alertmanager?api_key={}&stream=alerts", bot.api_key);
    expect(hook(&app, &path, &mixed).await, 200, success()).await;
    let got: Vec<(String, String)> = newest(&app, &app.owner, 2).await.into_iter().map(|m| (m.1, m.2)).collect();
    assert_eq!(
        got,
        vec![
            ("(unknown)".to_owned(), format!(":alert: **FIRING** High CPU Temperature ([source]({url}))")),
            ("(unknown)".to_owned(), ":squared_ok: **Resolved** High CPU Temperature".to_owned()),
        ]
    );
    let response = hook(&app, &path, &json!({"receiver": "x"})).await;
    expect(response, 400, json!({"result": "error", "msg": "payload['alerts'] is missing", "code": "BAD_REQUEST"}))
        .await;
}
