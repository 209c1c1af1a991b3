//! `agora import zulip|slack|mattermost ARCHIVE --subdomain S`: a new organization from
//! another chat server's export, on a stopped or running server.
//!
//! The command does the work itself (a running server is only told, at the end, that the
//! organization exists): it unpacks an archive into a temporary directory beside the
//! database (streamed, never in memory), reads it, and writes it through
//! [`agora_actors::transfer::writer::Writer`], which publishes the organization whole or
//! removes every trace of it.

mod archive;
pub mod export;
pub mod mattermost;
mod progress;
pub mod slack;
pub mod zulip;

use std::path::{Path, PathBuf};

use agora_actors::clock;
use agora_actors::store::{Store, Synchronous};
use agora_actors::transfer::model::{Message, Organization};
use agora_actors::transfer::writer::{clean_up_unfinished, Target, Writer, BATCH_ALONE, BATCH_BESIDE_SERVER};
use agora_actors::transfer::{Files, ImportError, Progress, Summary};
use agora_actors::uploads::storage::Storage;
use clap::{Args, Subcommand};

use crate::admin::AdminRequest;
use crate::settings::Settings;

/// What to import.
#[derive(Debug, Subcommand)]
pub enum ImportSource {
    /// An export of a Zulip server (`manage.py export`, Zulip 10 to 12): its .tar.gz or the
    /// directory it unpacks to
    Zulip(ImportArgs),
    /// A Slack workspace export (its .zip, or the directory it unpacks to)
    Slack(ImportArgs),
    /// A Mattermost bulk export (`mmctl export create`: its .zip, or a directory with the
    /// JSON lines file and its `data/`), one team of it
    Mattermost(MattermostArgs),
}

#[derive(Debug, Args)]
pub struct MattermostArgs {
    #[command(flatten)]
    pub common: ImportArgs,
    /// The team to import (its `name` in the export)
    #[arg(long)]
    pub team: String,
}

/// An input read up to its messages: the organization, its files, and its messages to come.
pub struct Opened {
    pub org: Organization,
    pub files: Box<dyn Files>,
    pub messages: Box<dyn Messages>,
}

/// Reads an unpacked input up to its messages.
type Opener = dyn Fn(&Path) -> Result<Opened, ImportError>;

/// The messages of an input, handed over in the order they were sent.
pub trait Messages {
    fn each(&mut self, f: &mut dyn FnMut(Message) -> Result<(), ImportError>) -> Result<(), ImportError>;
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The export: a .tar.gz archive or an unpacked directory
    pub archive: PathBuf,
    /// Subdomain of the new organization; "" for the root domain (when free)
    #[arg(long)]
    pub subdomain: String,
    /// Mail everyone a link to set their password (exports carry no passwords); otherwise
    /// people use "Forgot password?" on the sign-in page
    #[arg(long)]
    pub send_password_resets: bool,
}

/// Runs an import; prints what it brought in as one JSON object.
pub fn run(settings: &Settings, source: ImportSource) -> Result<(), String> {
    let (args, opener): (&ImportArgs, Box<Opener>) = match &source {
        ImportSource::Zulip(args) => (args, Box::new(zulip::open)),
        ImportSource::Slack(args) => (args, Box::new(slack::open)),
        ImportSource::Mattermost(m) => {
            let team = m.team.clone();
            (&m.common, Box::new(move |dir: &Path| mattermost::open(dir, &team)))
        }
    };
    let data_dir = &settings.data_dir;
    crate::datadir::ensure(data_dir).map_err(|e| format!("{}: {e}", data_dir.display()))?;
    // Held when no server runs, so that none starts half-way; a running server is told at
    // the end.
    let lock = crate::datadir::lock(data_dir).map_err(|e| format!("{}: {e}", data_dir.display()))?;
    let store =
        Store::open_with(data_dir, Synchronous::Normal).map_err(|e| format!("cannot open the database: {e}"))?;
    let storage = settings.upload_store.open(data_dir, true).map_err(|e| format!("uploads: {e}"))?;
    let removed = clean_up_unfinished(&store, &*storage).map_err(|e| e.to_string())?;
    if removed > 0 {
        eprintln!("Removed {removed} organization(s) left half-imported by an interrupted import.");
    }
    let mut progress = progress::for_stderr("import");
    let batch = if lock.is_some() { BATCH_ALONE } else { BATCH_BESIDE_SERVER };
    let summary =
        import(settings, &store, &*storage, args, &*opener, batch, progress.as_mut()).map_err(|e| e.to_string())?;
    progress.stage("done", None);
    if lock.is_none() {
        let told = AdminRequest::RealmImported { subdomain: summary.subdomain.clone() }.send_to_server(data_dir);
        if let Err(e) = told.and_then(|r| r.map_err(|e| e.msg)) {
            eprintln!("The organization is imported, but the running server could not be told ({e}): restart it.");
        }
    }
    println!("{}", serde_json::to_string(&summary).unwrap_or_default());
    Ok(())
}

fn import(
    settings: &Settings,
    store: &Store,
    storage: &dyn Storage,
    args: &ImportArgs,
    open: &Opener,
    batch: usize,
    progress: &mut dyn Progress,
) -> Result<Summary, ImportError> {
    let unpacked = archive::Input::open(&args.archive, &settings.data_dir, progress)?;
    let Opened { org, mut files, mut messages } = open(unpacked.dir())?;
    let config = settings.server_config();
    let target = Target { store, storage, config: &config, batch };
    let mut writer = Writer::begin(target, &args.subdomain, &org, files.as_mut(), progress, clock::now())?;
    progress.stage("messages", None);
    let read = messages.each(&mut |message| {
        writer.message(message)?;
        progress.advance(1);
        Ok(())
    });
    if let Err(e) = read {
        writer.abort();
        return Err(e);
    }
    writer.finish(args.send_password_resets.then_some(&config))
}

/// Files of an unpacked export, by their path inside it.
pub struct DirFiles {
    pub root: PathBuf,
}

impl Files for DirFiles {
    fn open(&mut self, name: &str) -> std::io::Result<Option<Box<dyn std::io::Read + '_>>> {
        let relative = Path::new(name);
        if relative.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
            return Ok(None);
        }
        match std::fs::File::open(self.root.join(relative)) {
            Ok(file) => Ok(Some(Box::new(std::io::BufReader::new(file)))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}
