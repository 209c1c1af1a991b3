//! The operations commands: backups and restores.

use std::path::PathBuf;

use clap::Args;

use super::run_admin;
use crate::admin::AdminRequest;
use crate::settings::Settings;
use crate::startup::StartupError;

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

/// `agora backup --to FILE`: through the running server if there is one.
pub fn backup(settings: &Settings, args: BackupArgs) -> Result<(), StartupError> {
    // The server may run in another directory: it gets an absolute path.
    let to = std::path::absolute(&args.to)?;
    run_admin(settings, AdminRequest::Backup { to })
}

/// `agora restore FILE --data-dir DIR`: into an empty (or new) data directory.
pub fn restore(settings: &Settings, args: RestoreArgs) -> Result<(), StartupError> {
    let out = crate::backup::restore(&args.archive, &settings.data_dir)?;
    println!("{out}");
    Ok(())
}
