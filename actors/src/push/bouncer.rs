//! The bouncer's HTTP API (`/api/v1/remotes/...`), as Zulip's `send_to_push_bouncer` calls
//! it: HTTP Basic authentication with the server's `org_id` and `org_key`, a
//! `ZulipServer/<version>` user agent, form or JSON bodies, and its error classes.

use std::time::Duration;

pub use reqwest::Method;
use serde_json::Value;

use crate::config::PushConfig;
use crate::server_info;

/// Why a bouncer call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BouncerError {
    /// Not reached, timed out, or a 5xx: try again later (Zulip's
    /// `PushNotificationBouncerRetryLaterError`).
    RetryLater(String),
    /// A 4xx with Zulip's error envelope, or an unexpected answer: trying again will not
    /// help.
    Refused { code: Option<String>, msg: String },
}

impl std::fmt::Display for BouncerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BouncerError::RetryLater(msg) => write!(f, "{msg}"),
            BouncerError::Refused { code, msg } => write!(f, "{} ({})", msg, code.as_deref().unwrap_or("-")),
        }
    }
}

/// A body for the bouncer.
pub enum Body<'a> {
    Form(&'a [(&'a str, String)]),
    Json(&'a Value),
    None,
}

/// A client of one bouncer, as this server.
#[derive(Clone)]
pub struct Bouncer {
    client: reqwest::Client,
    url: String,
    auth: Option<(String, String)>,
}

impl Bouncer {
    /// The configured bouncer; `None` if the server uses none.
    pub fn from_config(config: &PushConfig) -> Option<Bouncer> {
        if !config.configured() {
            return None;
        }
        let auth = config.org_id.clone().zip(config.org_key.clone());
        Bouncer::new(config.bouncer_url.as_deref()?, auth, config.request_timeout)
    }

    /// A client of the bouncer at `url`, authenticating with `auth` (none to register).
    pub fn new(url: &str, auth: Option<(String, String)>, timeout: Duration) -> Option<Bouncer> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .user_agent(format!("ZulipServer/{} (Agora {})", server_info::zulip_version(), server_info::AGORA_VERSION))
            .build()
            .map_err(|e| tracing::error!(error = %e, "cannot build the push bouncer's HTTP client"))
            .ok()?;
        Some(Bouncer { client, url: url.trim_end_matches('/').to_owned(), auth })
    }

    /// `method` `/api/v1/remotes/<endpoint>` with `body`: the decoded JSON answer.
    pub async fn call(&self, method: reqwest::Method, endpoint: &str, body: Body<'_>) -> Result<Value, BouncerError> {
        let url = format!("{}/api/v1/remotes/{endpoint}", self.url);
        let mut request = self.client.request(method, &url);
        if let Some((id, key)) = &self.auth {
            request = request.basic_auth(id, Some(key));
        }
        request = match body {
            Body::Form(params) => request.form(params),
            Body::Json(value) => request.json(value),
            Body::None => request,
        };
        let response = request.send().await.map_err(|e| {
            BouncerError::RetryLater(format!("{} while trying to connect to push notification bouncer", kind_of(&e)))
        })?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|e| BouncerError::RetryLater(e.to_string()))?;
        if status >= 500 {
            return Err(BouncerError::RetryLater(format!("Received {status} from push notification bouncer")));
        }
        let parsed: Result<Value, _> = serde_json::from_str(&text);
        if status >= 400 {
            let value = parsed.unwrap_or_default();
            let msg = value.get("msg").and_then(Value::as_str).unwrap_or("").to_owned();
            let code = value.get("code").and_then(Value::as_str).map(str::to_owned);
            return Err(BouncerError::Refused { code, msg });
        }
        if status != 200 {
            let msg = format!("Push notification bouncer returned unexpected status code {status}");
            return Err(BouncerError::Refused { code: None, msg });
        }
        parsed.map_err(|e| BouncerError::Refused { code: None, msg: format!("bad JSON from the bouncer: {e}") })
    }
}

fn kind_of(e: &reqwest::Error) -> &'static str {
    if e.is_timeout() {
        "Timeout"
    } else if e.is_connect() {
        "ConnectionError"
    } else {
        "RequestError"
    }
}
