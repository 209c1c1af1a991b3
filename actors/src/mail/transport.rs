//! Where a mail goes: an SMTP server (through `lettre`), or a file of the outbox directory.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use lettre::message::header::{ContentTransferEncoding, ContentType};
use lettre::message::{Body, Mailbox};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::store::outbox::QueuedMail;

/// How the connection to the SMTP server is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpTls {
    /// Plain text (a relay on the same machine).
    None,
    /// STARTTLS, required (port 587).
    StartTls,
    /// TLS from the start (port 465).
    Tls,
}

impl SmtpTls {
    /// Parses `none`, `starttls` or `tls`.
    pub fn parse(s: &str) -> Option<SmtpTls> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" | "off" => Some(SmtpTls::None),
            "starttls" => Some(SmtpTls::StartTls),
            "tls" | "ssl" => Some(SmtpTls::Tls),
            _ => None,
        }
    }
}

/// An SMTP server to send through.
#[derive(Clone, PartialEq, Eq)]
pub struct SmtpSettings {
    pub host: String,
    pub port: u16,
    pub tls: SmtpTls,
    pub username: Option<String>,
    pub password: Option<String>,
    /// Longest wait for the server, per mail.
    pub timeout: Duration,
}

impl std::fmt::Debug for SmtpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        f.debug_struct("SmtpSettings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// Why a mail did not go out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    /// Worth trying again (the server is down, refused for now, a full disk...).
    Transient(String),
    /// Never going to work (a malformed address): given up at once.
    Permanent(String),
}

/// A mail's way out.
pub enum Transport {
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    /// Each mail becomes `<dir>/<outbox id>.eml`.
    Files(PathBuf),
}

impl Transport {
    /// The transport the settings name.
    pub fn new(settings: &super::MailSettings) -> Result<Transport, String> {
        let Some(smtp) = &settings.smtp else { return Ok(Transport::Files(settings.outbox_dir.clone())) };
        let builder = match smtp.tls {
            SmtpTls::None => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&smtp.host),
            SmtpTls::StartTls => {
                AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&smtp.host).map_err(|e| e.to_string())?
            }
            SmtpTls::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(&smtp.host).map_err(|e| e.to_string())?,
        };
        let mut builder = builder.port(smtp.port).timeout(Some(smtp.timeout));
        if let (Some(user), Some(password)) = (&smtp.username, &smtp.password) {
            builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
        }
        Ok(Transport::Smtp(builder.build()))
    }

    /// Sends one mail.
    pub async fn send(&self, queued: &QueuedMail, from_address: &str) -> Result<String, SendError> {
        let message = build(queued, from_address)?;
        match self {
            Transport::Smtp(smtp) => match smtp.send(message).await {
                Ok(_) => Ok(format!("sent through SMTP to {}", queued.mail.to)),
                Err(e) if e.is_permanent() => Err(SendError::Permanent(e.to_string())),
                Err(e) => Err(SendError::Transient(e.to_string())),
            },
            Transport::Files(dir) => {
                let (dir, id, bytes) = (dir.clone(), queued.id, message.formatted());
                let written = tokio::task::spawn_blocking(move || write_file(&dir, id, &bytes))
                    .await
                    .map_err(|e| SendError::Transient(e.to_string()))?;
                written.map(|path| format!("written to {}", path.display())).map_err(SendError::Transient)
            }
        }
    }
}

/// The mail as sent: plain text, with its fixed Message-ID and the time it was queued.
pub fn build(queued: &QueuedMail, from_address: &str) -> Result<Message, SendError> {
    let mail = &queued.mail;
    let bad = |what: &str, e: &dyn std::fmt::Display| SendError::Permanent(format!("{what}: {e}"));
    let from = Mailbox::new(Some(mail.from_name.clone()), from_address.parse().map_err(|e| bad("from", &e))?);
    let to: Mailbox = mail.to.parse().map_err(|e| bad("to", &e))?;
    let date = UNIX_EPOCH + Duration::from_secs(queued.created_at.max(0) as u64);
    Message::builder()
        .from(from)
        .to(to)
        .subject(mail.subject.clone())
        .message_id(Some(format!("<{}>", mail.message_id)))
        .date(date)
        .header(ContentType::TEXT_PLAIN)
        .body(readable_body(&mail.body))
        .map_err(|e| bad("message", &e))
}

/// The body as 8-bit text, readable as it is in an `.eml` file (and the link in it
/// copyable), unless its lines are too long for that; then lettre's own choice.
fn readable_body(text: &str) -> Body {
    Body::new_with_encoding(wrap(text, 72), ContentTransferEncoding::EightBit).unwrap_or_else(Body::new)
}

/// Breaks lines longer than `width` at spaces (a word longer than that stays whole).
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split('\n') {
        let mut len = 0;
        for (i, word) in line.split(' ').enumerate() {
            let w = word.chars().count();
            if i > 0 {
                if len + 1 + w > width && len > 0 {
                    out.push('\n');
                    len = 0;
                } else {
                    out.push(' ');
                    len += 1;
                }
            }
            out.push_str(word);
            len += w;
        }
        out.push('\n');
    }
    out.pop();
    out
}

/// Writes `<dir>/<id>.eml` whole (a temporary file renamed into place): writing the same
/// mail again replaces the file, never adds a second one.
fn write_file(dir: &Path, id: i64, bytes: &[u8]) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{id:08}.eml"));
    let tmp = dir.join(format!(".{id:08}.eml.tmp"));
    std::fs::write(&tmp, bytes).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}
