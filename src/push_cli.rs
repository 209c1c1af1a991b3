//! `agora register-server`: registers this server with the mobile push notification
//! service, as Zulip's `manage.py register_server` does: it sends the server's `org_id`,
//! `org_key`, host and contact address to the bouncer's `server/register`.

use agora_actors::push::bouncer::{Body, Bouncer, BouncerError, Method};
use agora_actors::push::worker::call_once;
use clap::Args;
use rand::distributions::{Alphanumeric, DistString};
use rand::Rng;

use crate::settings::Settings;
use crate::startup::StartupError;

/// The push notification service's terms of service.
const TERMS_URL: &str = "https://zulip.com/policies/terms";

#[derive(Debug, Args)]
pub struct RegisterServerArgs {
    /// Agree to the push notification service's terms of service
    #[arg(long)]
    pub agree_to_terms_of_service: bool,
    /// Address the service writes to about this server (Zulip's ZULIP_ADMINISTRATOR)
    #[arg(long)]
    pub contact_email: String,
    /// Replace this server's org_key with a new one (printed; put it in the settings)
    #[arg(long)]
    pub rotate_key: bool,
}

/// A fresh `org_id` (a version 4 UUID).
fn new_org_id() -> String {
    let mut b: [u8; 16] = rand::thread_rng().gen();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// A fresh `org_key` (64 characters, as Zulip's).
fn new_org_key() -> String {
    Alphanumeric.sample_string(&mut rand::thread_rng(), 64)
}

/// Runs `agora register-server`.
pub fn register_server(settings: &Settings, args: RegisterServerArgs) -> Result<(), StartupError> {
    if !args.agree_to_terms_of_service && !args.rotate_key {
        return Err(format!(
            "You must agree to the terms of service of the push notification service: {TERMS_URL}\n  \
             agora register-server --agree-to-terms-of-service --contact-email ADDRESS"
        )
        .into());
    }
    let push = &settings.push;
    let url = push
        .bouncer_url
        .as_deref()
        .ok_or("Set push_bouncer_url (--push-bouncer-url, AGORA_PUSH_BOUNCER_URL or [push] bouncer_url) first")?;
    let generated = push.org_id.is_none() || push.org_key.is_none();
    let org_id = push.org_id.clone().unwrap_or_else(new_org_id);
    let org_key = push.org_key.clone().unwrap_or_else(new_org_key);
    let mut request = vec![
        ("zulip_org_id", org_id.clone()),
        ("zulip_org_key", org_key.clone()),
        ("hostname", settings.external_host.clone()),
        ("contact_email", args.contact_email.clone()),
    ];
    let new_key = args.rotate_key.then(new_org_key);
    if let Some(key) = &new_key {
        request.push(("new_org_key", key.clone()));
    }
    println!("The following data will be submitted to the push notification service:");
    let mut shown = request.clone();
    shown.sort();
    for (key, value) in &shown {
        println!("  {key}: {value}");
    }
    println!();
    let bouncer = Bouncer::new(url, None, push.request_timeout).ok_or("cannot build an HTTP client")?;
    let answer = call_once(bouncer.call(Method::POST, "server/register", Body::Form(&request)))?;
    let answer = match answer {
        Ok(answer) => answer,
        Err(BouncerError::RetryLater(_)) => {
            return Err(format!("Network error connecting to push notifications service ({url})").into())
        }
        Err(BouncerError::Refused { msg, .. }) => return Err(format!("Error: {msg}").into()),
    };
    if generated || new_key.is_some() {
        println!("This server's credentials at the push notification service (keep them secret):");
        println!("  [push]");
        println!("  org_id = \"{org_id}\"");
        println!("  org_key = \"{}\"", new_key.as_deref().unwrap_or(&org_key));
        println!("Put them in the settings file (or AGORA_PUSH_BOUNCER_ORG_ID and AGORA_PUSH_BOUNCER_ORG_KEY).");
    }
    if answer.get("created").and_then(serde_json::Value::as_bool) == Some(true) {
        println!("You've successfully registered for the Mobile Push Notification Service!");
        println!("To finish setup for sending push notifications, restart the server.");
    } else {
        println!("Mobile Push Notification Service registration successfully updated!");
    }
    Ok(())
}
