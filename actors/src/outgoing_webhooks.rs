//! [`OutgoingWebhookWorker`]: the thread that posts messages to outgoing-webhook bots'
//! services (Zulip's `outgoing_webhooks` queue worker and `zerver/lib/outgoing_webhook.py`).
//!
//! The realm actors never wait on a bot's service: a message that triggers a bot writes a
//! job into `outgoing_webhook_jobs` in its own transaction (and wakes this thread). The
//! worker takes the oldest due job, POSTs Zulip's payload (`data`, `message`, `bot_email`,
//! `bot_full_name`, `token`, `trigger`) as JSON, hands what came back to the bot's realm
//! actor ([`BotReply`]: the reply as the bot where the message was, or Zulip's failure
//! notices) and deletes the job. A timeout or a connection failure is retried with a
//! growing delay; after `max_retries` retries the bot says it is unavailable and its owner
//! is told why. Jobs are rows, so a restart loses none; one is deleted only once its
//! outcome was handed over (a crash in between posts it again after the restart).
//!
//! Zulip's Slack-compatible interface (2) is stored and listed, but its requests go out in
//! the generic form.

use std::sync::{Arc, Mutex};
use std::thread::Thread;
use std::time::Duration;

use serde_json::Value;

use crate::config::ServerConfig;
use crate::realm::bots::webhooks::outgoing::{BotReply, OwnerNote};
use crate::registry::Realms;
use crate::store::bots::{self as db, WebhookJob};
use crate::store::Store;
use crate::worker_thread::{idle_wait, now_ms, StopFlag, WorkerThread};

/// The running workers' threads, woken when a job is queued.
static THREADS: Mutex<Vec<Thread>> = Mutex::new(Vec::new());

/// Wakes the workers (a commit queued a job).
pub fn wake() {
    if let Ok(threads) = THREADS.lock() {
        for t in threads.iter() {
            t.unpark();
        }
    }
}

/// The running worker; stops (and joins) when dropped.
pub struct OutgoingWebhookWorker(WorkerThread);

impl OutgoingWebhookWorker {
    /// Starts the worker on a thread of its own.
    pub fn start(store: Store, realms: Realms, config: Arc<ServerConfig>) -> std::io::Result<OutgoingWebhookWorker> {
        let thread =
            WorkerThread::spawn("agora-outgoing-webhooks", move |stop| Worker { store, realms, config, stop }.run())?;
        if let (Ok(mut threads), Some(t)) = (THREADS.lock(), thread.thread()) {
            threads.push(t.clone());
        }
        Ok(OutgoingWebhookWorker(thread))
    }

    /// Stops the worker after the request under way.
    pub fn stop(&mut self) {
        if let (Ok(mut threads), Some(t)) = (THREADS.lock(), self.0.thread()) {
            let id = t.id();
            threads.retain(|t| t.id() != id);
        }
        self.0.stop();
    }
}

impl Drop for OutgoingWebhookWorker {
    fn drop(&mut self) {
        self.stop();
    }
}

struct Worker {
    store: Store,
    realms: Realms,
    config: Arc<ServerConfig>,
    stop: StopFlag,
}

/// What a request came to.
enum Outcome {
    /// The service answered.
    Answered { status: u16, body: String },
    /// Worth trying again (timeout, connection failure): the failure message.
    Retry(String),
    /// Any other failure: the exception's type and text.
    Failed(String, String),
}

/// Python's `repr` of a string (what Zulip shows of a response).
fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::from(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `repr` of bytes.
fn py_repr_bytes(b: &[u8]) -> String {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') { '"' } else { '\'' };
    let mut out = format!("b{quote}");
    for &b in b {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b if b as char == quote => {
                out.push('\\');
                out.push(quote);
            }
            0x20..=0x7e => out.push(b as char),
            b => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push(quote);
    out
}

impl Worker {
    fn run(self) {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(rt) => rt,
            Err(e) => return tracing::error!(error = %e, "outgoing webhooks: no runtime; bots' services get nothing"),
        };
        let cfg = self.config.outgoing_webhooks;
        let client = match reqwest::Client::builder().timeout(cfg.timeout).build() {
            Ok(c) => c,
            Err(e) => return tracing::error!(error = %e, "outgoing webhooks: no HTTP client"),
        };
        while !self.stop.stopping() {
            let job = self
                .store
                .conn()
                .map_err(|e| e.to_string())
                .and_then(|c| db::next_due_job(&c, now_ms()).map_err(|e| e.to_string()));
            let job = match job {
                Ok(Some(job)) => job,
                Ok(None) => {
                    self.stop.pause(self.idle_wait());
                    continue;
                }
                Err(e) => {
                    tracing::error!(error = %e, "outgoing webhooks: cannot read the jobs");
                    self.stop.pause(cfg.poll_interval);
                    continue;
                }
            };
            let outcome = runtime.block_on(call(&client, &job, cfg.timeout.as_secs()));
            self.handle(&runtime, &job, outcome);
        }
    }

    fn idle_wait(&self) -> Duration {
        idle_wait(
            self.store.conn().ok().and_then(|c| db::earliest_due_job(&c).ok().flatten()),
            self.config.outgoing_webhooks.poll_interval,
        )
    }

    fn handle(&self, runtime: &tokio::runtime::Runtime, job: &WebhookJob, outcome: Outcome) {
        let cfg = self.config.outgoing_webhooks;
        let command = job.payload["request"]["data"].as_str().unwrap_or_default().to_owned();
        let (content, note) = match outcome {
            Outcome::Answered { status, body } if (200..300).contains(&status) => match success_content(&body) {
                Ok(content) => (content, None),
                Err(msg) => {
                    let failure = format!(
                        "The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> {msg}"
                    );
                    let note = OwnerNote {
                        failure_message: Some(failure),
                        response_content: Some(py_repr(&body)),
                        ..Default::default()
                    };
                    (Some(format!("Failure! {msg}")), Some(note))
                }
            },
            Outcome::Answered { status, body } => {
                tracing::warn!(job.id = job.id, bot.id = %job.bot_id, status, "outgoing webhook: the service refused");
                let note = OwnerNote {
                    status_code: Some(status),
                    response_content: (!body.is_empty()).then(|| py_repr_bytes(body.as_bytes())),
                    ..Default::default()
                };
                (Some(format!("Failure! Third party responded with {status}")), Some(note))
            }
            Outcome::Retry(msg) => {
                let attempts = job.attempts + 1;
                if attempts <= cfg.max_retries {
                    let wait = cfg.backoff(attempts);
                    tracing::info!(job.id = job.id, bot.id = %job.bot_id, attempts, error = %msg,
                        "outgoing webhook: service unavailable; retrying later");
                    let due = now_ms() + wait.as_millis() as i64;
                    if let Err(e) = self.store.write(|tx| db::retry_job_later(tx, job.id, attempts, due, &msg)) {
                        tracing::error!(error = %e, "outgoing webhooks: cannot record a retry");
                        self.stop.pause(cfg.poll_interval);
                    }
                    return;
                }
                tracing::warn!(job.id = job.id, bot.id = %job.bot_id, attempts, "outgoing webhook: maximum retries exceeded");
                let note = OwnerNote { failure_message: Some(msg), ..Default::default() };
                (Some("Failure! Bot is unavailable".to_owned()), Some(note))
            }
            Outcome::Failed(kind, text) => {
                tracing::warn!(job.id = job.id, bot.id = %job.bot_id, error = %text, "outgoing webhook failed");
                let content = format!(
                    "Failure! An exception of type *{kind}* occurred for message `{command}`! See the Zulip server logs for more information."
                );
                (Some(content), Some(OwnerNote { exception: Some((kind, text)), ..Default::default() }))
            }
        };
        if content.is_some() || note.is_some() {
            self.report(runtime, job, content, note);
        }
        if let Err(e) = self.store.write(|tx| db::finish_job(tx, job.id)) {
            tracing::error!(job.id = job.id, error = %e, "outgoing webhooks: cannot remove a finished job");
            self.stop.pause(cfg.poll_interval);
        }
    }

    /// Hands the outcome to the bot's realm actor.
    fn report(
        &self,
        runtime: &tokio::runtime::Runtime,
        job: &WebhookJob,
        content: Option<String>,
        note: Option<OwnerNote>,
    ) {
        let Ok(Some(handle)) = runtime.block_on(self.realms.find_by_id(job.realm_id)) else {
            return tracing::warn!(job.id = job.id, "outgoing webhooks: the organization is gone or not running");
        };
        let msg = BotReply {
            bot: job.bot_id,
            message_id: job.message_id,
            reply_to: job.payload["reply_to"].clone(),
            content,
            owner_note: note,
        };
        match runtime.block_on(handle.addr.send(msg)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "outgoing webhooks: the organization refused a bot's reply"),
            Err(e) => tracing::warn!(error = %e, "outgoing webhooks: organization unavailable; reply dropped"),
        }
    }
}

/// POSTs the job's request.
async fn call(client: &reqwest::Client, job: &WebhookJob, timeout_secs: u64) -> Outcome {
    match client.post(&job.url).json(&job.payload["request"]).send().await {
        Ok(response) => {
            let status = response.status().as_u16();
            let body = response.text().await.unwrap_or_default();
            Outcome::Answered { status, body }
        }
        Err(e) if e.is_timeout() => Outcome::Retry(format!("Request timed out after {timeout_secs} seconds.")),
        Err(e) if e.is_connect() => Outcome::Retry("A connection error occurred. Is my bot server down?".to_owned()),
        Err(e) => Outcome::Failed(
            if e.is_builder() { "InvalidURL".to_owned() } else { "RequestException".to_owned() },
            e.to_string(),
        ),
    }
}

/// The reply of a service that answered 2xx (Zulip's `process_success_response`):
/// `content` (or the deprecated `response_string`) unless `response_not_required`; an
/// error for a body that is not a JSON object.
fn success_content(body: &str) -> Result<Option<String>, String> {
    let value: Value = serde_json::from_str(body).map_err(|_| "Invalid JSON in response".to_owned())?;
    if value == Value::String(String::new()) {
        return Ok(None);
    }
    let Value::Object(map) = value else {
        return Err("Invalid response format".to_owned());
    };
    if map.get("response_not_required").is_some_and(truthy) {
        return Ok(None);
    }
    let content = map.get("response_string").or_else(|| map.get("content")).map(python_str);
    Ok(content.filter(|c| !c.trim().is_empty()))
}

/// Python's truth value of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Python's `str()` of a JSON value (for a string, the string itself).
fn python_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Null => "None".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_as_zulip_reads_them() {
        assert_eq!(success_content(r#"{"content": "hi"}"#), Ok(Some("hi".to_owned())));
        assert_eq!(success_content(r#"{"response_string": "old"}"#), Ok(Some("old".to_owned())));
        assert_eq!(success_content(r#"{"content": "hi", "response_not_required": true}"#), Ok(None));
        assert_eq!(success_content(r#"{"content": "  "}"#), Ok(None));
        assert_eq!(success_content(r#""""#), Ok(None));
        assert_eq!(success_content(r#"{}"#), Ok(None));
        assert_eq!(success_content("[1]"), Err("Invalid response format".to_owned()));
        assert_eq!(success_content("nope"), Err("Invalid JSON in response".to_owned()));
    }

    #[test]
    fn reprs_are_pythons() {
        assert_eq!(py_repr("a'b"), r#""a'b""#);
        assert_eq!(py_repr("x\ny"), r"'x\ny'");
        assert_eq!(py_repr_bytes("é".as_bytes()), r"b'\xc3\xa9'");
    }
}
