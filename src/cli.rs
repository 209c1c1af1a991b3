//! The `agora` command line.

pub mod ops;

use std::path::PathBuf;
use std::process::ExitCode;

use agora_actors::realm::model::Role;
use agora_actors::secrets::hash_password;
use agora_actors::store::Synchronous;
use clap::{Args, Parser, Subcommand};

use crate::admin::AdminRequest;
use crate::settings::{Settings, SettingsError};
use crate::startup::{Application, StartupError};
use crate::telemetry::LogFormat;

/// Agora: a team chat server that speaks the Zulip API.
///
/// `agora serve` runs the server; the other commands administer it. Settings come from
/// (lowest to highest priority) built-in defaults, a TOML file (`--config`), `AGORA_*`
/// environment variables and flags (docs/configuration.md lists them all).
#[derive(Debug, Parser)]
#[command(name = "agora", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub settings: SettingsArgs,
}

/// Settings flags, accepted before or after any command.
#[derive(Debug, Default, Clone, Args)]
pub struct SettingsArgs {
    /// Directory of the database, the admin socket and the first owner's credentials
    /// [default: ./agora-data]
    #[arg(long, env = "AGORA_DATA_DIR", value_name = "DIR", global = true)]
    pub data_dir: Option<PathBuf>,
    /// TOML settings file (keys as in docs/configuration.md)
    #[arg(long, env = "AGORA_CONFIG", value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:9991]
    #[arg(long, env = "AGORA_BIND", value_name = "ADDR", global = true)]
    pub bind: Option<String>,
    /// Host[:port] clients use for the root organization; others are <subdomain>.<host>
    /// [default: localhost:9991]
    #[arg(long, env = "AGORA_EXTERNAL_HOST", value_name = "HOST", global = true)]
    pub external_host: Option<String>,
    /// Scheme clients use to reach the external host: http or https [default: http]
    #[arg(long, env = "AGORA_EXTERNAL_SCHEME", value_name = "SCHEME", global = true)]
    pub external_scheme: Option<String>,
    /// Log filter, e.g. "info" or "agora=debug,agora::access=warn" [default: info]
    #[arg(long, env = "AGORA_LOG", value_name = "FILTER", global = true)]
    pub log: Option<String>,
    /// Log lines as text, or as JSON objects for log collectors [default: text]
    #[arg(long, env = "AGORA_LOG_FORMAT", value_name = "text|json", global = true,
          value_parser = parse_log_format)]
    pub log_format: Option<LogFormat>,
    /// HTTP worker threads; 0 for half the CPUs [default: 0]
    #[arg(long, env = "AGORA_HTTP_WORKERS", value_name = "N", global = true)]
    pub http_workers: Option<usize>,
    /// Threads for the organizations' actors; 0 for half the CPUs [default: 0]
    #[arg(long, env = "AGORA_ACTOR_THREADS", value_name = "N", global = true)]
    pub actor_threads: Option<usize>,
    /// Threads for history reads (message fetches, search); 0 for half the CPUs [default: 0]
    #[arg(long, env = "AGORA_READER_THREADS", value_name = "N", global = true)]
    pub reader_threads: Option<usize>,
    /// Zulip's general API rate limits (per user and per client address): on or off
    /// [default: on]
    #[arg(long, env = "AGORA_RATE_LIMITS", value_name = "ON|OFF", global = true,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub rate_limits: Option<bool>,
    /// Address of the Prometheus metrics endpoint (`/metrics`), e.g. 127.0.0.1:9992;
    /// without it there are no metrics
    #[arg(long, env = "AGORA_METRICS_BIND", value_name = "ADDR", global = true)]
    pub metrics_bind: Option<String>,
    /// SQLite's synchronous: normal (a power loss may take back the last commits) or full
    /// (an fsync per commit: nothing acknowledged is lost) [default: normal]
    #[arg(long, env = "AGORA_SYNCHRONOUS", value_name = "normal|full", global = true,
          value_parser = parse_synchronous)]
    pub synchronous: Option<Synchronous>,
    /// URL of the mobile push notification service (Zulip's bouncer, e.g.
    /// https://push.zulipchat.com); without it there are no mobile notifications
    #[arg(long, env = "AGORA_PUSH_BOUNCER_URL", value_name = "URL", global = true)]
    pub push_bouncer_url: Option<String>,
    /// This server's UUID at the push notification service (`agora register-server` makes one)
    #[arg(long, env = "AGORA_PUSH_BOUNCER_ORG_ID", value_name = "UUID", global = true)]
    pub push_bouncer_org_id: Option<String>,
    /// This server's secret key at the push notification service
    #[arg(long, env = "AGORA_PUSH_BOUNCER_ORG_KEY", value_name = "KEY", global = true, hide_env_values = true)]
    pub push_bouncer_org_key: Option<String>,
    /// SMTP server for outgoing mail; without one, mail is written to <data-dir>/outbox/
    #[arg(long, env = "AGORA_SMTP_HOST", value_name = "HOST", global = true)]
    pub smtp_host: Option<String>,
    /// SMTP port [default: 587 with starttls, 465 with tls, 25 with none]
    #[arg(long, env = "AGORA_SMTP_PORT", value_name = "PORT", global = true)]
    pub smtp_port: Option<u16>,
    /// SMTP connection security: starttls, tls or none [default: starttls]
    #[arg(long, env = "AGORA_SMTP_TLS", value_name = "MODE", global = true,
          value_parser = crate::settings::mail::parse_tls)]
    pub smtp_tls: Option<agora_actors::mail::SmtpTls>,
    /// SMTP user name (the password comes from AGORA_SMTP_PASSWORD or the settings file)
    #[arg(long, env = "AGORA_SMTP_USERNAME", value_name = "USER", global = true)]
    pub smtp_username: Option<String>,
    /// SMTP password
    #[arg(long = "smtp-password-from-env-only", env = "AGORA_SMTP_PASSWORD", hide = true, global = true)]
    pub smtp_password: Option<String>,
    /// Sender address of outgoing mail [default: noreply@<external host>]
    #[arg(long, env = "AGORA_MAIL_FROM", value_name = "ADDRESS", global = true)]
    pub mail_from: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the server
    Serve,
    /// Create an organization and its first owner; prints {"realm_id", "user_id", "api_key"}
    CreateRealm(CreateRealmArgs),
    /// Create a user in an organization; prints {"realm_id", "user_id", "api_key"}
    CreateUser(CreateUserArgs),
    /// Register this server with the mobile push notification service (Zulip's
    /// `manage.py register_server`)
    RegisterServer(crate::push_cli::RegisterServerArgs),
    /// Create an organization from another server's export (whole, or not at all); prints
    /// what it brought in
    #[command(subcommand)]
    Import(crate::import::ImportSource),
    /// Write an organization in Zulip's export format (for Zulip's `manage.py import`, or
    /// `agora import zulip`); prints what it wrote
    Export(crate::import::export::ExportArgs),
    #[command(flatten)]
    Ops(ops::OpsCommand),
}

#[derive(Debug, Args)]
pub struct CreateRealmArgs {
    /// Subdomain of the organization; "" for the root domain
    #[arg(long)]
    pub subdomain: String,
    /// Organization name
    #[arg(long)]
    pub name: String,
    /// Email of the first owner
    #[arg(long)]
    pub owner_email: String,
    /// Password of the first owner
    #[arg(long)]
    pub owner_password: String,
    /// Full name of the first owner [default: the email's local part]
    #[arg(long)]
    pub owner_name: Option<String>,
}

#[derive(Debug, Args)]
pub struct CreateUserArgs {
    /// Subdomain of the organization; "" for the root domain
    #[arg(long)]
    pub subdomain: String,
    /// Email address (also the login)
    #[arg(long)]
    pub email: String,
    /// Password
    #[arg(long)]
    pub password: String,
    /// Full name
    #[arg(long)]
    pub full_name: String,
    /// owner, administrator, moderator, member or guest (or 100, 200, 300, 400, 600)
    #[arg(long, default_value = "member", value_parser = parse_role)]
    pub role: Role,
    /// Allow this user to create users through the API
    #[arg(long)]
    pub can_create_users: bool,
}

fn parse_log_format(s: &str) -> Result<LogFormat, String> {
    LogFormat::parse(s).ok_or_else(|| format!("expected text or json, not {s:?}"))
}

fn parse_synchronous(s: &str) -> Result<Synchronous, String> {
    Synchronous::parse(s).ok_or_else(|| format!("expected normal or full, not {s:?}"))
}

pub(crate) fn parse_role(s: &str) -> Result<Role, String> {
    Role::parse(s).ok_or_else(|| format!("unknown role {s:?}"))
}

impl SettingsArgs {
    /// The settings these flags, the environment and the settings file give.
    pub fn resolve(&self) -> Result<Settings, SettingsError> {
        let mut s = Settings::default();
        if let Some(path) = &self.config {
            s.apply_file(path)?;
        }
        let set = |slot: &mut String, v: &Option<String>| {
            if let Some(v) = v {
                slot.clone_from(v);
            }
        };
        if let Some(dir) = &self.data_dir {
            s.data_dir.clone_from(dir);
        }
        set(&mut s.bind, &self.bind);
        set(&mut s.external_host, &self.external_host);
        set(&mut s.external_scheme, &self.external_scheme);
        set(&mut s.log, &self.log);
        s.http_workers = self.http_workers.unwrap_or(s.http_workers);
        s.actor_threads = self.actor_threads.unwrap_or(s.actor_threads);
        s.reader_threads = self.reader_threads.unwrap_or(s.reader_threads);
        s.api_rate_limit.enabled = self.rate_limits.unwrap_or(s.api_rate_limit.enabled);
        s.synchronous = self.synchronous.unwrap_or(s.synchronous);
        s.log_format = self.log_format.unwrap_or(s.log_format);
        if self.metrics_bind.is_some() {
            s.metrics_bind.clone_from(&self.metrics_bind);
        }
        for (slot, flag) in [
            (&mut s.push.bouncer_url, &self.push_bouncer_url),
            (&mut s.push.org_id, &self.push_bouncer_org_id),
            (&mut s.push.org_key, &self.push_bouncer_org_key),
        ] {
            if flag.is_some() {
                slot.clone_from(flag);
            }
        }
        let mail = &mut s.mail;
        let pick = |slot: &mut Option<String>, v: &Option<String>| {
            if v.is_some() {
                slot.clone_from(v);
            }
        };
        pick(&mut mail.smtp_host, &self.smtp_host);
        pick(&mut mail.smtp_username, &self.smtp_username);
        pick(&mut mail.smtp_password, &self.smtp_password);
        pick(&mut mail.from_address, &self.mail_from);
        mail.smtp_port = self.smtp_port.or(mail.smtp_port);
        mail.smtp_tls = self.smtp_tls.unwrap_or(mail.smtp_tls);
        s.validate()?;
        Ok(s)
    }
}

/// What `agora` alone says.
const USAGE: &str = "\
agora: a team chat server that speaks the Zulip API.

Usage:
  agora serve              run the server (http://127.0.0.1:9991 unless --bind says otherwise)
  agora <command> [...]    administer it: create-realm, create-user, backup, restore, ...
  agora --help             every command and setting
  agora --version          this server's version
";

/// Parses the command line and runs it.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let settings = match cli.settings.resolve() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("agora: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        None => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
        Some(Command::Serve) => serve(settings),
        Some(Command::CreateRealm(args)) => create_realm(&settings, args),
        Some(Command::CreateUser(args)) => create_user(&settings, args),
        Some(Command::RegisterServer(args)) => crate::push_cli::register_server(&settings, args),
        Some(Command::Ops(command)) => ops::run(&settings, command),
        Some(Command::Import(source)) => crate::import::run(&settings, source).map_err(StartupError::from),
        Some(Command::Export(args)) => crate::import::export::run(&settings, args).map_err(StartupError::from),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agora: {e}");
            ExitCode::FAILURE
        }
    }
}

fn serve(settings: Settings) -> Result<(), StartupError> {
    crate::telemetry::init(&settings.log, settings.log_format);
    actix_web::rt::System::new().block_on(async move {
        let app = Application::build(settings.clone()).await?;
        if let Some(b) = app.bootstrapped() {
            println!("Created the organization at {} with owner {}.", b.realm_url, b.email);
            println!("  API credentials (a zuliprc for the zulip client): {}", b.zuliprc.display());
            println!("  Owner's password: {}", b.password_file.display());
        }
        let host = settings.bind.rsplit_once(':').map_or(settings.bind.as_str(), |(h, _)| h);
        println!("Agora is listening on http://{host}:{}", app.port());
        app.run().await?;
        Ok(())
    })
}

pub(crate) fn hash(password: &str, settings: &Settings) -> Result<String, StartupError> {
    Ok(hash_password(password, settings.password_hash)?)
}

pub(crate) fn run_admin(settings: &Settings, request: AdminRequest) -> Result<(), StartupError> {
    match request.run(&settings.data_dir, &settings.server_config())? {
        Ok(value) => {
            println!("{value}");
            Ok(())
        }
        Err(e) => Err(e.msg.into()),
    }
}

fn create_realm(settings: &Settings, args: CreateRealmArgs) -> Result<(), StartupError> {
    let owner_name = args.owner_name.unwrap_or_else(|| {
        let local = args.owner_email.split('@').next().unwrap_or_default();
        if local.chars().count() >= 2 {
            local.to_owned()
        } else {
            "Organization Owner".to_owned()
        }
    });
    let request = AdminRequest::CreateRealm {
        subdomain: args.subdomain,
        name: args.name,
        owner_email: args.owner_email,
        owner_name,
        owner_password_hash: Some(hash(&args.owner_password, settings)?),
    };
    run_admin(settings, request)
}

fn create_user(settings: &Settings, args: CreateUserArgs) -> Result<(), StartupError> {
    let request = AdminRequest::CreateUser {
        subdomain: args.subdomain,
        email: args.email,
        full_name: args.full_name,
        role: args.role.as_i64(),
        password_hash: Some(hash(&args.password, settings)?),
        can_create_users: args.can_create_users,
    };
    run_admin(settings, request)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(args: &[&str]) -> Settings {
        let cli = Cli::try_parse_from(std::iter::once("agora").chain(args.iter().copied())).unwrap();
        cli.settings.resolve().unwrap()
    }

    #[test]
    fn rate_limits_have_an_off_switch() {
        assert!(settings(&[]).api_rate_limit.enabled);
        for off in ["off", "false", "no", "0"] {
            assert!(!settings(&["--rate-limits", off]).api_rate_limit.enabled, "{off}");
        }
        assert!(settings(&["serve", "--rate-limits", "on"]).api_rate_limit.enabled);
        assert!(Cli::try_parse_from(["agora", "--rate-limits", "maybe"]).is_err());
    }

    #[test]
    fn metrics_are_off_unless_an_address_is_given() {
        assert_eq!(settings(&[]).metrics_bind, None);
        assert_eq!(settings(&["--metrics-bind", "127.0.0.1:9992"]).metrics_bind.as_deref(), Some("127.0.0.1:9992"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agora.toml");
        std::fs::write(&path, "metrics_bind = \"0.0.0.0:9100\"\n").unwrap();
        let file = path.to_str().unwrap();
        assert_eq!(settings(&["--config", file]).metrics_bind.as_deref(), Some("0.0.0.0:9100"));
        // The flag wins over the file.
        let both = settings(&["--config", file, "--metrics-bind", "127.0.0.1:9993"]);
        assert_eq!(both.metrics_bind.as_deref(), Some("127.0.0.1:9993"));
        // Never the API's own address.
        let cli =
            Cli::try_parse_from(["agora", "--bind", "127.0.0.1:9991", "--metrics-bind", "127.0.0.1:9991"]).unwrap();
        assert!(cli.settings.resolve().is_err());
    }

    #[test]
    fn synchronous_is_normal_unless_full_is_asked_for() {
        assert_eq!(settings(&[]).synchronous, Synchronous::Normal);
        assert_eq!(settings(&["--synchronous", "full"]).synchronous, Synchronous::Full);
        assert_eq!(settings(&["--synchronous", "NORMAL"]).synchronous, Synchronous::Normal);
        assert!(Cli::try_parse_from(["agora", "--synchronous", "off"]).is_err());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agora.toml");
        std::fs::write(&path, "synchronous = \"full\"\n").unwrap();
        assert_eq!(settings(&["--config", path.to_str().unwrap()]).synchronous, Synchronous::Full);
        std::fs::write(&path, "synchronous = \"off\"\n").unwrap();
        let cli = Cli::try_parse_from(["agora", "--config", path.to_str().unwrap()]).unwrap();
        assert!(cli.settings.resolve().is_err());
    }

    #[test]
    fn push_flags_set_the_bouncer() {
        assert!(!settings(&[]).push.configured());
        let s = settings(&[
            "--push-bouncer-url",
            "https://push.example.org",
            "--push-bouncer-org-id",
            "id",
            "--push-bouncer-org-key",
            "key",
        ]);
        assert!(s.push.configured());
        assert_eq!(s.push.org_key.as_deref(), Some("key"));
    }
}
