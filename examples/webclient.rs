//! The web client on a large organization, in headless Chromium: the organization of
//! `examples/scale` (10,000 users, 1,000 channels, a million messages), saved once with
//! `--seed-only`, then:
//!
//! 1. the time from navigation to a usable feed (a channel's messages drawn), the first
//!    time (nothing cached) and again (the hashed files cached for a year);
//! 2. the bytes of JavaScript and CSS sent (gzipped) and of `POST /json/register`;
//! 3. the tab's memory: its JavaScript heap and its renderer process's RSS;
//! 4. the time to insert a live message into a feed of 1,000 messages, and until the next
//!    frame is drawn.
//!
//! ```text
//! cargo build --release --bins --examples
//! target/release/examples/scale --save-seed /tmp/scale-seed --seed-only
//! target/release/examples/webclient --seed /tmp/scale-seed
//! ```
//!
//! It needs `chromium` and `chromedriver` on the PATH (Debian's `chromium` and
//! `chromium-driver`). Progress goes to stderr; the report and a JSON line to stdout.

use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

#[path = "support/mod.rs"]
mod support;
use support::*;

/// The web client's load time, size, memory and live-insert time on a large organization.
#[derive(Debug, Parser)]
#[command(name = "webclient")]
struct Args {
    /// An organization saved by `scale --save-seed DIR --seed-only`
    #[arg(long, value_name = "DIR")]
    seed: PathBuf,
    /// Page loads measured after the first
    #[arg(long, default_value_t = 10)]
    loads: usize,
    /// Live messages inserted into the feed of 1,000
    #[arg(long, default_value_t = 30)]
    live: usize,
    /// Server binary [default: target/<profile>/agora, next to the examples directory]
    #[arg(long)]
    server_bin: Option<PathBuf>,
}

const PASSWORD: &str = "web client benchmark 2026";

#[tokio::main]
async fn main() -> ExitCode {
    main_with("webclient", run(Args::parse())).await
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(name)).find(|p| p.is_file())
}

async fn js(client: &Client, script: &str) -> Result<Value, BoxError> {
    Ok(client.execute(script, vec![]).await?)
}

/// Polls `script` until it returns something other than `null`.
async fn until(client: &Client, what: &str, script: &str) -> Result<Value, BoxError> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let value = js(client, script).await?;
        if !value.is_null() {
            return Ok(value);
        }
        if Instant::now() > deadline {
            return Err(format!("{what}: nothing after 60 s").into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The memory of the browser's largest renderer process (the tab's), in KiB: its resident
/// set, and its private part (what Chrome's task manager calls its memory footprint: the
/// resident set without the pages shared with other processes, such as the binary).
fn renderer_kib() -> (u64, u64) {
    let mut largest = (0, 0);
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        let cmdline = String::from_utf8_lossy(&cmdline);
        if cmdline.contains("chromium")
            && cmdline.contains("--type=renderer")
            && !cmdline.contains("--extension-process")
        {
            let rss = rss_kib(pid).unwrap_or(0);
            let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
            let private: u64 = rollup
                .lines()
                .filter(|l| l.starts_with("Private_Clean:") || l.starts_with("Private_Dirty:"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum();
            if rss > largest.0 {
                largest = (rss, private);
            }
        }
    }
    largest
}

async fn run(args: Args) -> Result<(), BoxError> {
    let (chromium, chromedriver) = match (on_path("chromium"), on_path("chromedriver")) {
        (Some(c), Some(d)) => (c, d),
        _ => {
            return Err(
                "chromium and chromedriver must be on the PATH (apt-get install chromium chromium-driver)".into()
            )
        }
    };
    let saved: Value = serde_json::from_slice(&std::fs::read(args.seed.join("scale-members.json"))?)?;
    let member = &saved["members"][0];
    let creds = Creds {
        email: member["email"].as_str().ok_or("no member")?.to_owned(),
        api_key: member["api_key"].as_str().ok_or("no key")?.to_owned(),
    };
    let options = ServerOptions {
        bin: args.server_bin.clone(),
        log: "warn".into(),
        http_workers: None,
        actor_threads: None,
        dir_prefix: "agora-webclient-",
        config: LOAD_CONFIG.into(),
        capture_log: false,
        seed: Some(args.seed.clone()),
    };
    let (server, api) = ManagedServer::start(&options, http_client()?).await?;
    let out = tokio::process::Command::new(&server.bin)
        .arg("--data-dir")
        .arg(server.dir.path())
        .args(["reset-password", "--subdomain", "", "--user", &creds.email, "--password", PASSWORD])
        .stdin(Stdio::null())
        .output()
        .await?;
    if !out.status.success() {
        return Err(format!("agora reset-password: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    // A channel of the member's with its thousand messages (not one of the default ones).
    let subs =
        api.client.get(api.url("users/me/subscriptions")).basic_auth(&creds.email, Some(&creds.api_key)).send().await?;
    let subs = success_json("GET /users/me/subscriptions", subs.status(), &subs.bytes().await?)?;
    let channel = subs["subscriptions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| !s["name"].as_str().unwrap_or("").starts_with("scale default"))
        .ok_or("the member has no ordinary channel")?;
    let (channel_id, channel_name) =
        (channel["stream_id"].as_i64().unwrap_or(0), channel["name"].as_str().unwrap_or(""));
    let members = api
        .client
        .get(api.url(&format!("streams/{channel_id}/members")))
        .basic_auth(&creds.email, Some(&creds.api_key))
        .send()
        .await?;
    let members = success_json("GET /streams/{id}/members", members.status(), &members.bytes().await?)?;
    eprintln!(
        "member {} in #{channel_name} ({} members)",
        creds.email,
        members["subscribers"].as_array().map_or(0, Vec::len)
    );

    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let driver = spawn_guarded(&chromedriver, &[format!("--port={port}")])?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return Err("chromedriver did not listen".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({ "binary": chromium, "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync",
            "--window-size=1280,860", "--enable-precise-memory-info"] }),
    );
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps.clone())
        .connect(&format!("http://127.0.0.1:{port}"))
        .await?;
    // Signed in once; the measured browser gets the session's cookies and nothing else
    // (its cache empty, as on a first visit).
    client.goto(&format!("{}/login/", api.base)).await?;
    client.find(Locator::Css("#username")).await?.send_keys(&creds.email).await?;
    client.find(Locator::Css("#password")).await?.send_keys(PASSWORD).await?;
    client.find(Locator::Css("button[type=submit]")).await?.click().await?;
    until(&client, "signed in", "return document.querySelector('nav[aria-label=Channels]') ? true : null;").await?;
    let cookies = client.get_all_cookies().await?;
    client.close().await?;
    let fresh = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await?;
    fresh.goto(&format!("{}/login/", api.base)).await?;
    for cookie in cookies {
        fresh.add_cookie(cookie).await?;
    }
    let result = measure(&fresh, &api, &server, &saved, &creds, channel_id, &args).await;
    let _ = fresh.close().await;
    drop(driver);
    result
}

async fn measure(
    client: &Client,
    api: &Api,
    server: &ManagedServer,
    saved: &Value,
    creds: &Creds,
    channel_id: i64,
    args: &Args,
) -> Result<(), BoxError> {
    // The browser's own share: a renderer with the sign-in page only.
    let baseline = renderer_kib();

    // 1. Loads: the first with an empty cache, then the cached ones.
    let narrow = format!("#narrow/channel/{channel_id}-x");
    let mut loads = Vec::new();
    let mut first = None;
    let mut resources = Value::Null;
    for i in 0..=args.loads {
        let cpu = CpuMeter::start(Some(server.pid()));
        client.goto(&format!("{}/?load={i}{narrow}", api.base)).await?;
        let ready =
            until(client, "the feed", "return window.agoraFeedReady === undefined ? null : window.agoraFeedReady;")
                .await?;
        let ms = ready.as_f64().unwrap_or(0.0);
        if i == 0 {
            first = Some((ms, cpu.stop()));
            resources = js(client, "return performance.getEntriesByType('resource').map(r => [r.name, r.initiatorType, r.transferSize, r.encodedBodySize, r.decodedBodySize]);").await?;
        } else {
            loads.push(Duration::from_secs_f64(ms / 1000.0));
        }
        eprintln!("  load {i}: feed usable after {ms:.0} ms");
    }
    let loads = Stats::new(loads);
    let (mut script_bytes, mut script_plain, mut register_bytes) = (0u64, 0u64, 0u64);
    for entry in resources.as_array().into_iter().flatten() {
        let name = entry[0].as_str().unwrap_or("");
        let (sent, plain) = (entry[3].as_u64().unwrap_or(0), entry[4].as_u64().unwrap_or(0));
        if name.contains("/static/") && (name.ends_with(".js") || name.ends_with(".css")) {
            script_bytes += sent;
            script_plain += plain;
        } else if name.ends_with("/json/register") {
            register_bytes += sent;
        }
    }

    // 2. Memory, once loaded.
    let heap =
        js(client, "return performance.memory ? performance.memory.usedJSHeapSize : 0;").await?.as_f64().unwrap_or(0.0);
    let renderer = renderer_kib();

    // 3. A feed of 1,000 messages, then live ones.
    let loaded = client
        .execute_async(
            "const done = arguments[arguments.length - 1]; const feed = window.agora.feed;
             (async () => { let last = -1; while (feed.ids.length < 1000 && !feed.foundOldest && feed.ids.length !== last) { last = feed.ids.length; await feed.older(); } done(feed.ids.length); })();",
            vec![],
        )
        .await?;
    eprintln!("feed holds {loaded} messages; sending {} live ones", args.live);
    js(client, "window.agora.feed.timings.length = 0; return true;").await?;
    let other = another_member(api, saved, creds, channel_id).await?;
    for i in 0..args.live {
        let form = [
            ("type", "stream".to_owned()),
            ("to", channel_id.to_string()),
            ("topic", "live".to_owned()),
            ("content", format!("Live message {i}")),
        ];
        let response = api.post("messages", &other).form(&form).send().await?;
        success_json("POST /messages", response.status(), &response.bytes().await?)?;
        let wanted = format!("return window.agora.feed.timings.length > {i} ? true : null;");
        until(client, "the live message", &wanted).await?;
    }
    let timings = js(client, "return window.agora.feed.timings;").await?;
    let append = Stats::new(
        timings
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| Duration::from_secs_f64(t["append"].as_f64().unwrap_or(0.0) / 1000.0))
            .collect(),
    );
    let frame = Stats::new(
        timings
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| Duration::from_secs_f64(t["frame"].as_f64().unwrap_or(0.0) / 1000.0))
            .collect(),
    );

    let (first_ms, first_cpu) = first.ok_or("no first load")?;
    println!("web client on the organization of examples/scale (seed {})", args.seed.display());
    println!(
        "  first load (nothing cached): feed usable after {first_ms:.0} ms; {}",
        describe_cpu(first_cpu, 1, "load")
    );
    println!("  later loads: {}", loads.describe());
    println!("  JavaScript and CSS: {script_bytes} bytes sent gzipped ({script_plain} unpacked); POST /json/register {register_bytes} bytes");
    println!(
        "  memory: JavaScript heap {:.1} MiB; renderer {} MiB private, {} MiB resident (the sign-in page alone: {} MiB private, {} MiB resident)",
        heap / 1048576.0,
        renderer.1 / 1024,
        renderer.0 / 1024,
        baseline.1 / 1024,
        baseline.0 / 1024
    );
    println!(
        "  live message into a feed of {loaded}: insert {}; to the next frame {}",
        append.describe(),
        frame.describe()
    );
    let summary = json!({
        "first_load_ms": round3(first_ms), "loads_p50_ms": ms_json(loads.percentile(50)), "loads_max_ms": ms_json(loads.max()),
        "js_css_gzip_bytes": script_bytes, "js_css_bytes": script_plain, "register_bytes": register_bytes,
        "js_heap_mib": round3(heap / 1048576.0), "renderer_private_mib": renderer.1 / 1024, "renderer_rss_mib": renderer.0 / 1024,
        "baseline_private_mib": baseline.1 / 1024, "baseline_rss_mib": baseline.0 / 1024, "feed_messages": loaded,
        "insert_p50_ms": ms_json(append.percentile(50)), "insert_max_ms": ms_json(append.max()),
        "frame_p50_ms": ms_json(frame.percentile(50)), "frame_max_ms": ms_json(frame.max()),
    });
    println!("{summary}");
    Ok(())
}

/// Another member of the channel (with the key the seed keeps), to send live messages as.
async fn another_member(api: &Api, saved: &Value, creds: &Creds, channel_id: i64) -> Result<Creds, BoxError> {
    let get = |path: String| api.client.get(api.url(&path)).basic_auth(&creds.email, Some(&creds.api_key)).send();
    let response = get(format!("streams/{channel_id}/members")).await?;
    let members = success_json("GET /streams/{id}/members", response.status(), &response.bytes().await?)?;
    let response = get("users/me".into()).await?;
    let me = success_json("GET /users/me", response.status(), &response.bytes().await?)?;
    let ids: Vec<i64> = members["subscribers"].as_array().into_iter().flatten().filter_map(Value::as_i64).collect();
    let other = saved["members"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["id"].as_i64().is_some_and(|id| ids.contains(&id) && Some(id) != me["user_id"].as_i64()))
        .ok_or("no other member of the channel in the seed")?;
    Ok(Creds {
        email: other["email"].as_str().unwrap_or("").to_owned(),
        api_key: other["api_key"].as_str().unwrap_or("").to_owned(),
    })
}
