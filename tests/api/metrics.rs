//! The Prometheus endpoint: off by default, on its own address, and its figures moving
//! with the load (requests by route pattern and status, queues, waiting polls, events
//! delivered, transactions, presence).

use reqwest::Method;

use crate::helpers::{json, post, register, spawn_app, spawn_app_with, HOST};

/// The value of the sample `name` (with its labels, as rendered), if present.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

async fn scrape(client: &reqwest::Client, port: u16) -> String {
    let response = client.get(format!("http://127.0.0.1:{port}/metrics")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    response.text().await.unwrap()
}

/// Scrapes until `name` reads `value` (the figure follows requests still under way).
async fn until(client: &reqwest::Client, port: u16, name: &str, value: f64) -> String {
    for _ in 0..500 {
        let text = scrape(client, port).await;
        if sample(&text, name) == Some(value) {
            return text;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("{name} never read {value}:\n{}", scrape(client, port).await);
}

#[actix_web::test]
async fn metrics_are_off_by_default() {
    let app = spawn_app().await;
    // The API does not serve them either.
    let response = app.client.get(format!("{}/metrics", app.address)).header("Host", HOST).send().await.unwrap();
    assert_eq!(response.status(), 404);
    app.stop().await;
}

#[actix_web::test]
async fn the_endpoint_shows_the_figures_moving() {
    let app = spawn_app_with(|s| s.metrics_bind = Some("127.0.0.1:0".into())).await;
    let metrics = app.metrics_port.unwrap();
    assert!(!app.address.ends_with(&format!(":{metrics}")));
    let (client, owner) = (app.client.clone(), app.owner.clone());

    // Only /metrics is served there.
    let other = client.get(format!("http://127.0.0.1:{metrics}/api/v1/server_settings")).send().await.unwrap();
    assert_eq!(other.status(), 404);

    let text = scrape(&client, metrics).await;
    for line in [
        "# TYPE agora_event_queues gauge",
        "# TYPE agora_sqlite_transaction_seconds histogram",
        "agora_event_polls_waiting 0",
        "agora_realm_mailbox_messages 0",
        "# TYPE agora_presence_rows gauge",
    ] {
        assert!(text.contains(line), "no {line:?} in:\n{text}");
    }
    assert!(sample(&text, "agora_database_bytes").unwrap() > 0.0);
    assert!(sample(&text, "agora_process_resident_memory_bytes").unwrap() > 0.0);

    // A queue and a long-poll waiting on it.
    let body = register(&app, &owner, &[("event_types", r#"["message"]"#)]).await;
    let queue_id = body["queue_id"].as_str().unwrap().to_owned();
    let text = until(&client, metrics, "agora_event_queues", 1.0).await;
    assert_eq!(sample(&text, "agora_realms_running"), Some(1.0));
    let delivered = sample(&text, "agora_events_delivered_total").unwrap_or(0.0);
    let poll = app.as_user(&owner, Method::GET, &format!("/events?queue_id={queue_id}&last_event_id=-1")).send();
    let poll = actix_web::rt::spawn(poll);
    until(&client, metrics, "agora_event_polls_waiting", 1.0).await;

    // A message ends the poll with one event.
    let to = owner.user_id.to_string();
    let (status, _) =
        json(post(&app, &owner, "/messages", &[("type", "direct"), ("to", &to), ("content", "hi")]).await).await;
    assert_eq!(status, 200);
    let (status, events) = json(poll.await.unwrap().unwrap()).await;
    assert_eq!((status, events["events"].as_array().unwrap().len()), (200, 1));
    let text = until(&client, metrics, "agora_event_polls_waiting", 0.0).await;
    assert!(sample(&text, "agora_events_delivered_total").unwrap() >= delivered + 1.0, "{text}");

    // Requests by route pattern, never by raw path, and by status.
    let me = app.as_user(&owner, Method::GET, "/users/1").send().await.unwrap();
    assert_eq!(me.status(), 200);
    let missing = app.as_user(&owner, Method::GET, "/users/99").send().await.unwrap();
    assert_eq!(missing.status(), 400);
    let text = scrape(&client, metrics).await;
    assert!(text.contains("# TYPE agora_http_request_duration_seconds histogram"));
    let count = |labels: &str| sample(&text, &format!("agora_http_request_duration_seconds_count{{{labels}}}"));
    assert!(count(r#"method="POST",route="/api/v1/messages",status="200""#).unwrap() >= 1.0, "{text}");
    assert!(count(r#"method="GET",route="/api/v1/users/{user}",status="200""#).unwrap() >= 1.0, "{text}");
    assert!(count(r#"method="GET",route="/api/v1/users/{user}",status="400""#).unwrap() >= 1.0, "{text}");
    assert!(count(r#"method="GET",route="/api/v1/events",status="200""#).unwrap() >= 1.0, "{text}");
    assert!(!text.contains("/api/v1/users/1\""), "a raw path became a label:\n{text}");
    assert!(sample(&text, "agora_sqlite_transaction_seconds_count").unwrap() >= 1.0);
    // The message was a group commit of one change.
    assert!(text.contains("# TYPE agora_group_commit_changes histogram"), "{text}");
    assert!(sample(&text, r#"agora_group_commit_changes_bucket{le="1"}"#).unwrap() >= 1.0, "{text}");
    assert!(text.contains(
        r#"agora_http_request_duration_seconds_bucket{method="POST",route="/api/v1/messages",status="200",le="0.005"}"#
    ));

    // Uploads are counted with their bytes.
    let before = sample(&text, "agora_upload_bytes_total").unwrap_or(0.0);
    crate::uploads::uploaded(&app, &owner, "n.txt", b"12345").await;
    let text = scrape(&client, metrics).await;
    assert!(sample(&text, "agora_uploads_total").unwrap() >= 1.0);
    assert!(sample(&text, "agora_upload_bytes_total").unwrap() >= before + 5.0);

    // Presence pings show in the presence figures.
    let ping = app.as_user(&owner, Method::POST, "/users/me/presence").form(&[("status", "active")]);
    assert_eq!(ping.send().await.unwrap().status(), 200);
    until(&client, metrics, "agora_presence_rows", 1.0).await;

    app.stop().await;
}
