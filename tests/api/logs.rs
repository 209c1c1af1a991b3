//! Request ids (`X-Request-Id`, both ways) and the JSON log format, read off a real
//! server process's stderr.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

use reqwest::Method;
use serde_json::Value;

use crate::helpers::{spawn_app, HOST};

fn is_generated(id: &str) -> bool {
    id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[actix_web::test]
async fn every_response_carries_its_request_id() {
    let app = spawn_app().await;
    let get = |id: Option<&'static str>| {
        let mut request = app.request(Method::GET, "/server_settings");
        if let Some(id) = id {
            request = request.header("X-Request-Id", id);
        }
        request.send()
    };
    let response = get(Some("lb-7f3a:42")).await.unwrap();
    assert_eq!(response.headers()["x-request-id"], "lb-7f3a:42");
    // Made up when missing, or when it could not be a token.
    let made = get(None).await.unwrap().headers()["x-request-id"].to_str().unwrap().to_owned();
    assert!(is_generated(&made), "{made}");
    for bad in ["two words", "{\"json\":1}"] {
        let response = app.request(Method::GET, "/server_settings").header("X-Request-Id", bad).send().await.unwrap();
        assert!(is_generated(response.headers()["x-request-id"].to_str().unwrap()));
    }
    let long = "x".repeat(65);
    let response = app.request(Method::GET, "/server_settings").header("X-Request-Id", &long).send().await.unwrap();
    assert!(is_generated(response.headers()["x-request-id"].to_str().unwrap()));
    // Errors too.
    let response = app.request(Method::GET, "/nowhere").header("X-Request-Id", "e-1").send().await.unwrap();
    assert_eq!((response.status().as_u16(), response.headers()["x-request-id"].to_str().unwrap()), (404, "e-1"));
    app.stop().await;
}

#[actix_web::test]
async fn json_logs_carry_the_request_id() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("agora.toml");
    std::fs::write(&config, "[password_hash]\nmemory_kib = 8\niterations = 1\nparallelism = 1\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(["--data-dir", tmp.path().join("data").to_str().unwrap(), "--config", config.to_str().unwrap()])
        .args(["--bind", "127.0.0.1:0", "--external-host", HOST, "--log-format", "json", "--log", "info"])
        .arg("serve")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let address = actix_web::web::block(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("Agora is listening on ").map(str::to_owned))
            .unwrap()
    })
    .await
    .unwrap();
    let client = reqwest::Client::new();
    let response = client
        .get(format!("{address}/api/v1/server_settings"))
        .header("Host", HOST)
        .header("X-Request-Id", "trace-me-1")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let response = client.get(format!("{address}/api/v1/users/me")).header("Host", HOST).send().await.unwrap();
    assert_eq!(response.status(), 401);
    let unauthorized = response.headers()["x-request-id"].to_str().unwrap().to_owned();
    child.kill().unwrap();
    child.wait().unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();

    // Every line is one JSON object.
    let lines: Vec<Value> =
        stderr.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
    assert!(lines.iter().any(|l| l["message"] == "database opened" && l["synchronous"] == "Normal"));
    let access = |id: &str| {
        lines
            .iter()
            .find(|l| l["target"] == "agora::access" && l["request_id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no access line for {id} in:\n{stderr}"))
    };
    let line = access("trace-me-1");
    assert_eq!(
        (&line["level"], &line["method"], &line["path"]),
        (&"INFO".into(), &"GET".into(), &"/api/v1/server_settings".into())
    );
    assert_eq!(line["status"], 200);
    assert!(line["micros"].is_u64() && line["timestamp"].is_string());
    assert_eq!(access(&unauthorized)["status"], 401);
}

#[actix_web::test]
async fn malformed_requests_are_logged_as_the_clients_mistake_once_a_minute() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("agora.toml");
    std::fs::write(&config, "[password_hash]\nmemory_kib = 8\niterations = 1\nparallelism = 1\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(["--data-dir", tmp.path().join("data").to_str().unwrap(), "--config", config.to_str().unwrap()])
        .args(["--bind", "127.0.0.1:0", "--external-host", HOST, "--log-format", "json", "--log", "info"])
        .arg("serve")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let address = actix_web::web::block(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("Agora is listening on ").map(str::to_owned))
            .unwrap()
    })
    .await
    .unwrap();
    let addr = address.trim_start_matches("http://").to_owned();
    actix_web::web::block(move || {
        for _ in 0..5 {
            let mut stream = std::net::TcpStream::connect(&addr).unwrap();
            stream.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\nContent-Length: y\r\n\r\n").unwrap();
            let mut answer = Vec::new();
            let _ = stream.read_to_end(&mut answer);
        }
    })
    .await
    .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let lines: Vec<Value> = stderr.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert!(lines.iter().all(|l| l["level"] != "ERROR"), "no ERROR line for a client's mistake:\n{stderr}");
    let warnings: Vec<&Value> = lines.iter().filter(|l| l["target"] == "agora::http").collect();
    assert_eq!(warnings.len(), 1, "one line however many:\n{stderr}");
    assert_eq!(warnings[0]["level"], "WARN");
}
