//! The sign-up page in a real browser: headless Chromium (the distribution's `chromium`),
//! driven over WebDriver by `chromedriver` (`chromium-driver`). Skipped, saying so, where
//! they are not installed (`apt-get install chromium chromium-driver`).

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use reqwest::Method;
use serde_json::json;

use crate::helpers::*;
use crate::invites::{link_in, make_channel, outbox_mails};
use crate::signup::path_of;

/// The first of `names` found in `PATH`.
pub(crate) fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).flat_map(|dir| names.iter().map(move |n| dir.join(n))).find(|p| p.is_file())
}

/// Chromium and chromedriver, or `None` after saying the test is skipped without them.
pub(crate) fn installed_browser() -> Option<(PathBuf, PathBuf)> {
    match (on_path(&["chromium", "chromium-browser", "google-chrome"]), on_path(&["chromedriver"])) {
        (Some(chromium), Some(chromedriver)) => Some((chromium, chromedriver)),
        _ => {
            eprintln!(
                "skipped: chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"
            );
            None
        }
    }
}

/// A running chromedriver, stopped when dropped with every browser it started: it runs in
/// a process group of its own, and the whole group is killed (a session a failing test did
/// not close would otherwise leave its Chromium running).
pub(crate) struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        let group = self.child.id() as libc::pid_t;
        // SAFETY: signals the process group this driver leads (its id is the driver's).
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start_driver(chromedriver: &PathBuf) -> Driver {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(chromedriver)
        .process_group(0)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let driver = Driver { child, port };
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    driver
}

pub(crate) async fn browser(driver: &Driver, chromium: &PathBuf) -> Client {
    browser_sized(driver, chromium, 1024, 768).await
}

/// A headless Chromium session with a window of `width` × `height`.
pub(crate) async fn browser_sized(driver: &Driver, chromium: &PathBuf, width: u32, height: u32) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-component-update", "--no-first-run",
                     "--disable-sync", "--disable-quic", format!("--window-size={width},{height}")],
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("a browser session")
}

/// The text of the first element matching `css`, waiting (up to 10 s) for the page that has it.
pub(crate) async fn text_of(client: &Client, css: &str) -> String {
    let found = client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(css)).await;
    match found {
        Ok(element) => element.text().await.unwrap(),
        Err(e) => panic!("no {css} ({e}) in {}", client.source().await.unwrap_or_default()),
    }
}

/// Waits until the page's first heading is `title` (a form submission navigated).
async fn heading_is(client: &Client, title: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(h1) = client.find(Locator::Css("h1")).await {
            if h1.text().await.unwrap_or_default() == title {
                return;
            }
        }
        assert!(Instant::now() < deadline, "no heading {title:?} in {}", client.source().await.unwrap_or_default());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) async fn fill(client: &Client, css: &str, value: &str) {
    let field = client.find(Locator::Css(css)).await.unwrap();
    field.clear().await.unwrap();
    field.send_keys(value).await.unwrap();
}

/// Where a virtual environment with the `zulip` package may be (see python-client.md).
const ZULIP_VENV_PYTHON: &str = "/tmp/zvenv/bin/python";

/// The real Python client logs in with `fetch_api_key` and reads its profile, when the
/// virtual environment is there (it is not on CI).
async fn python_client_logs_in(site: &str, email: &str, password: &str) {
    if !std::path::Path::new(ZULIP_VENV_PYTHON).exists() {
        eprintln!("skipped the Python client: no {ZULIP_VENV_PYTHON}");
        return;
    }
    let script = r#"
import sys, zulip
site, email, password = sys.argv[1:4]
anonymous = zulip.Client(email=email, api_key="x" * 32, site=site)
reply = anonymous.call_endpoint(url="fetch_api_key", method="POST", request={"username": email, "password": password})
assert reply["result"] == "success", reply
me = zulip.Client(email=email, api_key=reply["api_key"], site=site).get_profile()
assert me["result"] == "success" and me["email"] == email, me
print("python client ok", me["user_id"], me["full_name"])
"#;
    let args = [script, site, email, password].map(str::to_owned);
    let out = tokio::task::spawn_blocking(move || Command::new(ZULIP_VENV_PYTHON).arg("-c").args(args).output())
        .await
        .unwrap()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && stdout.contains("python client ok"), "{stdout}{stderr}");
    eprintln!("{stdout}");
}

#[actix_web::test]
async fn the_sign_up_page_works_in_a_real_browser() {
    let Some((chromium, chromedriver)) = installed_browser() else { return };
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let general = make_channel(&app, &owner, "general", false).await;
    let form = [("invitee_emails", "browser@example.com"), ("stream_ids", &format!("[{general}]"))];
    expect(post(&app, &owner, "/invites", &form).await, 200, success()).await;
    // The mailed link, at this test server's address (the root organization answers any
    // host that is not one of its subdomains).
    let link = format!("{}{}", app.address, path_of(&link_in(&outbox_mails(&app.data_dir, 1)[0])));

    let driver = start_driver(&chromedriver);
    let client = browser(&driver, &chromium).await;
    client.goto(&link).await.unwrap();
    assert_eq!(client.title().await.unwrap(), "Join Agora");
    assert_eq!(text_of(&client, "h1").await, "Join Agora");
    assert_eq!(text_of(&client, "#email").await, "browser@example.com");
    // Every field has its label; the password's rule is tied to it.
    for id in ["full_name", "password"] {
        client.find(Locator::Css(&format!("label[for={id}]"))).await.unwrap();
    }
    let password = client.find(Locator::Css("#password")).await.unwrap();
    assert_eq!(password.attr("aria-describedby").await.unwrap().as_deref(), Some("password-hint"));

    // A weak password: the form comes back with the error announced, the name kept.
    fill(&client, "#full_name", "Brow Ser").await;
    fill(&client, "#password", "abc").await;
    client.find(Locator::Css("button[type=submit]")).await.unwrap().click().await.unwrap();
    assert!(text_of(&client, "[role=alert]").await.contains("The password is too weak."));
    assert_eq!(text_of(&client, "#password-error").await, "The password is too weak.");
    let password = client.find(Locator::Css("#password")).await.unwrap();
    assert_eq!(password.attr("aria-invalid").await.unwrap().as_deref(), Some("true"));
    assert_eq!(password.attr("aria-describedby").await.unwrap().as_deref(), Some("password-hint password-error"));
    let name = client.find(Locator::Css("#full_name")).await.unwrap();
    assert_eq!(name.prop("value").await.unwrap().as_deref(), Some("Brow Ser"));

    fill(&client, "#password", "correct horse battery staple").await;
    client.find(Locator::Css("button[type=submit]")).await.unwrap().click().await.unwrap();
    // Signed in: the organization's web client.
    let deadline = Instant::now() + Duration::from_secs(10);
    while client.current_url().await.unwrap().path() != "/" {
        assert!(Instant::now() < deadline, "still at {}", client.current_url().await.unwrap());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The client opens on the Inbox.
    client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css("nav[aria-label=Channels]")).await.unwrap();
    assert_eq!(client.title().await.unwrap(), "Inbox · Agora");

    // The account works; the link is used up.
    let form = [("username", "browser@example.com"), ("password", "correct horse battery staple")];
    let (status, body) = json(app.request(Method::POST, "/fetch_api_key").form(&form).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    client.goto(&link).await.unwrap();
    heading_is(&client, "Invitation already used").await;
    client.close().await.unwrap();
    python_client_logs_in(&app.address, "browser@example.com", "correct horse battery staple").await;
    app.stop().await;
}
