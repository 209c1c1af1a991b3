//! Outgoing mail and invitation settings: `[mail]` and `[invitations]` of the TOML file,
//! `AGORA_SMTP_*` / `AGORA_MAIL_FROM` in the environment and the matching flags.

use std::path::Path;
use std::time::Duration;

use agora_actors::config::InviteConfig;
use agora_actors::mail::{MailSettings, SmtpSettings, SmtpTls};
use serde::Deserialize;

use super::SettingsError;

/// How mail goes out. Without `smtp_host`, each mail is written to `<data-dir>/outbox/` as
/// an `.eml` file and logged, so that an administrator can forward it by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailOptions {
    /// The SMTP server's host; `None` writes mail to files.
    pub smtp_host: Option<String>,
    /// Its port [default: 587, or 465 with `tls`, 25 with `none`].
    pub smtp_port: Option<u16>,
    /// `starttls` (default), `tls` or `none`.
    pub smtp_tls: SmtpTls,
    pub smtp_username: Option<String>,
    pub smtp_password: Option<String>,
    /// The sender address [default: `noreply@<external host without port>`].
    pub from_address: Option<String>,
    /// First retry delay; each further retry waits twice as long, up to `retry_max`.
    pub retry_base: Duration,
    pub retry_max: Duration,
    /// Attempts before a mail is given up (and logged as an error).
    pub max_attempts: u32,
    /// Longest wait for the SMTP server per mail.
    pub timeout: Duration,
}

impl Default for MailOptions {
    fn default() -> Self {
        MailOptions {
            smtp_host: None,
            smtp_port: None,
            smtp_tls: SmtpTls::StartTls,
            smtp_username: None,
            smtp_password: None,
            from_address: None,
            retry_base: Duration::from_secs(60),
            retry_max: Duration::from_secs(3600),
            max_attempts: 10,
            timeout: Duration::from_secs(30),
        }
    }
}

impl MailOptions {
    /// The sender address, given or derived from the external host.
    pub fn from_address(&self, external_host: &str) -> String {
        self.from_address.clone().unwrap_or_else(|| {
            let host = external_host.rsplit_once(':').map_or(external_host, |(h, _)| h);
            format!("noreply@{host}")
        })
    }

    /// What the mail worker runs with.
    pub fn worker_settings(&self, data_dir: &Path, external_host: &str) -> MailSettings {
        let smtp = self.smtp_host.as_ref().map(|host| SmtpSettings {
            host: host.clone(),
            port: self.smtp_port.unwrap_or(match self.smtp_tls {
                SmtpTls::Tls => 465,
                SmtpTls::StartTls => 587,
                SmtpTls::None => 25,
            }),
            tls: self.smtp_tls,
            username: self.smtp_username.clone(),
            password: self.smtp_password.clone(),
            timeout: self.timeout,
        });
        MailSettings {
            smtp,
            from_address: self.from_address(external_host),
            outbox_dir: data_dir.join("outbox"),
            retry_base: self.retry_base,
            retry_max: self.retry_max,
            max_attempts: self.max_attempts,
        }
    }

    /// Checks values that would otherwise fail late.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if self.max_attempts == 0 || self.retry_base.is_zero() || self.timeout.is_zero() {
            return Err(SettingsError("mail: max_attempts, retry_base_secs and timeout_secs must be positive".into()));
        }
        if self.smtp_username.is_some() != self.smtp_password.is_some() {
            return Err(SettingsError("mail: smtp_username and smtp_password go together".into()));
        }
        Ok(())
    }
}

/// Parses `--smtp-tls` / `AGORA_SMTP_TLS` / `smtp_tls`.
pub fn parse_tls(s: &str) -> Result<SmtpTls, String> {
    SmtpTls::parse(s).ok_or_else(|| format!("smtp_tls must be starttls, tls or none, not {s:?}"))
}

/// `[mail]` of the TOML file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileMail {
    smtp_host: Option<String>,
    smtp_port: Option<u16>,
    smtp_tls: Option<String>,
    smtp_username: Option<String>,
    smtp_password: Option<String>,
    from_address: Option<String>,
    retry_base_secs: Option<u64>,
    retry_max_secs: Option<u64>,
    max_attempts: Option<u32>,
    timeout_secs: Option<u64>,
}

/// `[invitations]` of the TOML file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileInvitations {
    validity_minutes: Option<i64>,
    daily_limit: Option<usize>,
    min_user_age_days: Option<i64>,
    support_email: Option<String>,
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

impl FileMail {
    pub(super) fn apply(self, m: &mut MailOptions) -> Result<(), SettingsError> {
        if self.smtp_host.is_some() {
            m.smtp_host = self.smtp_host;
        }
        if self.smtp_port.is_some() {
            m.smtp_port = self.smtp_port;
        }
        if let Some(tls) = self.smtp_tls {
            m.smtp_tls = parse_tls(&tls).map_err(SettingsError)?;
        }
        if self.smtp_username.is_some() {
            m.smtp_username = self.smtp_username;
        }
        if self.smtp_password.is_some() {
            m.smtp_password = self.smtp_password;
        }
        if self.from_address.is_some() {
            m.from_address = self.from_address;
        }
        set(&mut m.retry_base, self.retry_base_secs.map(Duration::from_secs));
        set(&mut m.retry_max, self.retry_max_secs.map(Duration::from_secs));
        set(&mut m.max_attempts, self.max_attempts);
        set(&mut m.timeout, self.timeout_secs.map(Duration::from_secs));
        Ok(())
    }
}

impl FileInvitations {
    pub(super) fn apply(self, i: &mut InviteConfig, support_email: &mut Option<String>) {
        set(&mut i.validity_minutes, self.validity_minutes);
        set(&mut i.daily_limit, self.daily_limit);
        set(&mut i.min_user_age_days, self.min_user_age_days);
        if self.support_email.is_some() {
            *support_email = self.support_email;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smtp_settings_take_their_defaults_from_the_tls_mode() {
        let mut m = MailOptions { smtp_host: Some("mail.example.org".into()), ..MailOptions::default() };
        let dir = Path::new("/data");
        let w = m.worker_settings(dir, "chat.example.org:8443");
        assert_eq!(w.from_address, "noreply@chat.example.org");
        assert_eq!(w.outbox_dir, dir.join("outbox"));
        assert_eq!(w.smtp.as_ref().map(|s| (s.port, s.tls)), Some((587, SmtpTls::StartTls)));
        m.smtp_tls = SmtpTls::Tls;
        assert_eq!(m.worker_settings(dir, "x").smtp.map(|s| s.port), Some(465));
        m.smtp_username = Some("agora".into());
        assert!(m.validate().is_err());
        assert_eq!(parse_tls("STARTTLS"), Ok(SmtpTls::StartTls));
        assert!(parse_tls("maybe").is_err());
    }

    #[test]
    fn the_settings_file_sets_mail_and_invitations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agora.toml");
        std::fs::write(
            &path,
            "external_host = \"chat.example.org\"\n[mail]\nsmtp_host = \"smtp.example.org\"\nsmtp_tls = \"tls\"\n\
             smtp_username = \"agora\"\nsmtp_password = \"secret\"\nmax_attempts = 4\n\
             [invitations]\nvalidity_minutes = 60\ndaily_limit = 0\n",
        )
        .unwrap();
        let mut s = super::super::Settings::default();
        s.apply_file(&path).unwrap();
        s.validate().unwrap();
        let worker = s.mail.worker_settings(dir.path(), &s.external_host);
        let smtp = worker.smtp.clone().unwrap();
        assert_eq!((smtp.host.as_str(), smtp.port, smtp.tls), ("smtp.example.org", 465, SmtpTls::Tls));
        assert_eq!((smtp.username.as_deref(), smtp.password.as_deref()), (Some("agora"), Some("secret")));
        assert_eq!((worker.max_attempts, worker.from_address.as_str()), (4, "noreply@chat.example.org"));
        // The password never shows in logs.
        assert!(!format!("{smtp:?}").contains("secret"));
        let config = s.server_config();
        assert_eq!((config.invites.validity_minutes, config.invites.daily_limit), (60, 0));
        assert_eq!(config.invites.support_email, "noreply@chat.example.org");
        std::fs::write(&path, "[mail]\nsmtp_tls = \"maybe\"\n").unwrap();
        assert!(super::super::Settings::default().apply_file(&path).is_err());
    }
}
