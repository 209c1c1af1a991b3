//! Reads a zuliprc and asks the server who its credentials belong to, as the `zulip`
//! Python client's `get_profile()` does: `GET /server_settings`, then `GET /users/me`.
//!
//! Run a server (`cargo run --release -- serve`), then:
//!
//! ```text
//! cargo run --example whoami -- ./agora-data/zuliprc
//! ```

use std::error::Error;

fn field<'a>(rc: &'a str, name: &str) -> Result<&'a str, String> {
    rc.lines()
        .filter_map(|line| line.split_once('='))
        .find(|(key, _)| key.trim() == name)
        .map(|(_, value)| value.trim())
        .ok_or_else(|| format!("the zuliprc has no {name}="))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "./agora-data/zuliprc".into());
    let rc = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let (email, key, site) = (field(&rc, "email")?, field(&rc, "key")?, field(&rc, "site")?);
    let client = reqwest::Client::new();

    let settings: serde_json::Value = client.get(format!("{site}/api/v1/server_settings")).send().await?.json().await?;
    println!(
        "{} speaks Zulip {} (feature level {})",
        settings["realm_name"].as_str().unwrap_or("the server"),
        settings["zulip_version"].as_str().unwrap_or("?"),
        settings["zulip_feature_level"]
    );

    let me: serde_json::Value =
        client.get(format!("{site}/api/v1/users/me")).basic_auth(email, Some(key)).send().await?.json().await?;
    if me["result"] != "success" {
        return Err(format!("{}: {}", me["code"], me["msg"]).into());
    }
    let text = |key: &str| me[key].as_str().unwrap_or_default().to_owned();
    println!("You are {} <{}>, user {} with role {}", text("full_name"), text("email"), me["user_id"], me["role"]);
    Ok(())
}
