//! The operations commands: backups and restores, statistics, and administration of
//! organizations and accounts. Each prints one JSON object, or exits non-zero with the
//! reason on stderr; with a server running they go through its admin socket.

use std::path::PathBuf;

use agora_actors::realm::admin::AdminOp;
use agora_actors::realm::model::Role;
use agora_actors::secrets::random_alphanumeric;
use clap::{Args, Subcommand};

use super::{hash, parse_role, run_admin};
use crate::admin::AdminRequest;
use crate::settings::Settings;
use crate::startup::StartupError;

#[derive(Debug, Subcommand)]
pub enum OpsCommand {
    /// Write a consistent archive of the database and the uploads, while the server runs
    /// or not; prints what it holds
    Backup(BackupArgs),
    /// Restore an archive of `agora backup` into an empty (or new) data directory
    Restore(RestoreArgs),
    /// List the organizations with their accounts' counts
    ListRealms,
    /// List an organization's accounts
    ListUsers(RealmArgs),
    /// Change a user's role
    ChangeRole(ChangeRoleArgs),
    /// Deactivate an account (and the bots it owns); its API key stops working at once
    DeactivateUser(UserArgs),
    /// Reactivate an account
    ReactivateUser(UserArgs),
    /// Set a new password (a random one, printed, unless --password is given)
    ResetPassword(ResetPasswordArgs),
    /// Replace a user's API key (printed); the old one stops working at once
    ResetApiKey(UserArgs),
    /// Change organization settings, as PATCH /realm does (--set NAME=VALUE, repeated)
    SetRealmSettings(RealmSettingsArgs),
    /// Create a reusable invitation link; prints its id and the link
    CreateInviteLink(InviteLinkArgs),
    /// Revoke a reusable invitation link
    RevokeInviteLink(RevokeInviteLinkArgs),
    /// Event queue, mailbox, presence, database and upload figures
    Stats,
}

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// Archive to write (a gzip-compressed tar file; must not exist yet)
    #[arg(long, value_name = "FILE")]
    pub to: PathBuf,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// Archive written by `agora backup`
    #[arg(value_name = "FILE")]
    pub archive: PathBuf,
}

#[derive(Debug, Args)]
pub struct RealmArgs {
    /// Subdomain of the organization; "" for the root domain
    #[arg(long)]
    pub subdomain: String,
}

#[derive(Debug, Args)]
pub struct UserArgs {
    /// Subdomain of the organization; "" for the root domain
    #[arg(long)]
    pub subdomain: String,
    /// The user's id or real email address
    #[arg(long)]
    pub user: String,
}

#[derive(Debug, Args)]
pub struct ChangeRoleArgs {
    #[command(flatten)]
    pub target: UserArgs,
    /// owner, administrator, moderator, member or guest (or 100, 200, 300, 400, 600)
    #[arg(long, value_parser = parse_role)]
    pub role: Role,
}

#[derive(Debug, Args)]
pub struct ResetPasswordArgs {
    #[command(flatten)]
    pub target: UserArgs,
    /// The new password [default: 20 random characters, printed]
    #[arg(long)]
    pub password: Option<String>,
}

#[derive(Debug, Args)]
pub struct RealmSettingsArgs {
    /// Subdomain of the organization; "" for the root domain
    #[arg(long)]
    pub subdomain: String,
    /// A setting and its value as PATCH /realm takes it, e.g. name="Acme Corp",
    /// invite_required=false, can_create_public_channel_group=role:administrators
    #[arg(long = "set", value_name = "NAME=VALUE", required = true, value_parser = parse_setting)]
    pub settings: Vec<(String, String)>,
}

#[derive(Debug, Args)]
pub struct InviteLinkArgs {
    /// Subdomain of the organization; "" for the root domain
    #[arg(long)]
    pub subdomain: String,
    /// Role of the users who join through it
    #[arg(long, default_value = "member", value_parser = parse_role)]
    pub role: Role,
    /// A channel (name or id) they are subscribed to; repeat for more
    #[arg(long = "channel", value_name = "CHANNEL")]
    pub channels: Vec<String>,
    /// Subscribe them to the organization's default channels too
    #[arg(long)]
    pub include_default_channels: bool,
    /// Minutes until the link expires [default: the invitation validity, 10 days]
    #[arg(long, conflicts_with = "never_expires")]
    pub expires_in_minutes: Option<i64>,
    /// The link never expires
    #[arg(long)]
    pub never_expires: bool,
}

#[derive(Debug, Args)]
pub struct RevokeInviteLinkArgs {
    /// Subdomain of the organization; "" for the root domain
    #[arg(long)]
    pub subdomain: String,
    /// The link's invitation id (create-invite-link prints it; GET /invites lists them)
    #[arg(long)]
    pub id: i64,
}

fn parse_setting(s: &str) -> Result<(String, String), String> {
    let (name, value) = s.split_once('=').ok_or_else(|| format!("expected NAME=VALUE, not {s:?}"))?;
    Ok((name.trim().to_owned(), value.to_owned()))
}

/// Runs one of these commands.
pub fn run(settings: &Settings, command: OpsCommand) -> Result<(), StartupError> {
    let on = |subdomain: String, command: AdminOp| AdminRequest::Realm { subdomain, command };
    let request = match command {
        OpsCommand::Backup(args) => {
            // The server may run in another directory: it gets an absolute path.
            AdminRequest::Backup { to: std::path::absolute(&args.to)? }
        }
        OpsCommand::Restore(args) => {
            let out = crate::backup::restore(&args.archive, &settings.data_dir)?;
            println!("{out}");
            return Ok(());
        }
        OpsCommand::ListRealms => AdminRequest::ListRealms,
        OpsCommand::Stats => AdminRequest::Stats,
        OpsCommand::ListUsers(RealmArgs { subdomain }) => on(subdomain, AdminOp::ListUsers),
        OpsCommand::ChangeRole(ChangeRoleArgs { target: UserArgs { subdomain, user }, role }) => {
            on(subdomain, AdminOp::ChangeRole { user, role: role.as_i64() })
        }
        OpsCommand::DeactivateUser(UserArgs { subdomain, user }) => {
            on(subdomain, AdminOp::SetActive { user, active: false })
        }
        OpsCommand::ReactivateUser(UserArgs { subdomain, user }) => {
            on(subdomain, AdminOp::SetActive { user, active: true })
        }
        OpsCommand::ResetApiKey(UserArgs { subdomain, user }) => on(subdomain, AdminOp::ResetApiKey { user }),
        OpsCommand::ResetPassword(ResetPasswordArgs { target: UserArgs { subdomain, user }, password }) => {
            return reset_password(settings, subdomain, user, password);
        }
        OpsCommand::SetRealmSettings(RealmSettingsArgs { subdomain, settings }) => {
            on(subdomain, AdminOp::UpdateSettings { settings })
        }
        OpsCommand::CreateInviteLink(args) => on(
            args.subdomain,
            AdminOp::CreateInviteLink {
                role: args.role.as_i64(),
                channels: args.channels,
                include_default_channels: args.include_default_channels,
                expires_in_minutes: args.expires_in_minutes,
                never_expires: args.never_expires,
            },
        ),
        OpsCommand::RevokeInviteLink(RevokeInviteLinkArgs { subdomain, id }) => {
            on(subdomain, AdminOp::RevokeInviteLink { id })
        }
    };
    run_admin(settings, request)
}

/// The password is hashed here (never sent in clear to the server); a generated one is
/// printed with the result.
fn reset_password(
    settings: &Settings,
    subdomain: String,
    user: String,
    password: Option<String>,
) -> Result<(), StartupError> {
    let generated = password.is_none();
    let password = password.unwrap_or_else(|| random_alphanumeric(20));
    let request = AdminRequest::Realm {
        subdomain,
        command: AdminOp::SetPassword { user, password_hash: hash(&password, settings)? },
    };
    let mut out = match request.run(&settings.data_dir, &settings.server_config())? {
        Ok(value) => value,
        Err(e) => return Err(e.msg.into()),
    };
    if generated {
        out["password"] = password.into();
    }
    println!("{out}");
    Ok(())
}
