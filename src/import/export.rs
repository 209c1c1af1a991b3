//! `agora export --subdomain S --to FILE.tar.gz`: an organization in Zulip's export format,
//! for Zulip's `manage.py import` (or `agora import zulip`). Runs beside a running server or
//! without one; the archive appears under its name only once complete.

use std::fs::File;
use std::path::{Path, PathBuf};

use agora_actors::store::{Store, Synchronous};
use agora_actors::transfer::export::{export, Exported, Scope};
use agora_actors::transfer::{ImportError, Progress};
use agora_actors::uploads::storage::Storage;
use clap::Args;

use crate::settings::Settings;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Subdomain of the organization; "" for the root domain
    #[arg(long)]
    pub subdomain: String,
    /// The archive to write (.tar.gz); it must not exist yet
    #[arg(long)]
    pub to: PathBuf,
}

/// Runs an export; prints what it wrote as one JSON object.
pub fn run(settings: &Settings, args: ExportArgs) -> Result<(), String> {
    let data_dir = &settings.data_dir;
    if args.to.exists() {
        return Err(format!("{}: already exists", args.to.display()));
    }
    let store =
        Store::open_with(data_dir, Synchronous::Normal).map_err(|e| format!("cannot open the database: {e}"))?;
    let realm = agora_actors::store::realms::by_subdomain(&*store.conn().map_err(|e| e.to_string())?, &args.subdomain)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no organization has the subdomain {:?}", args.subdomain))?;
    let storage = settings.upload_store.open(data_dir, true).map_err(|e| format!("uploads: {e}"))?;
    let mut progress = super::progress::for_stderr("export");
    let exported = write_archive(&store, &*storage, realm.id, &Scope::Full, &args.to, progress.as_mut())
        .map_err(|e| e.to_string())?;
    progress.stage("done", None);
    println!("{}", serde_json::to_string(&exported).unwrap_or_default());
    Ok(())
}

/// Exports the organization into a temporary directory beside `to`, packs it as `to`
/// (written as `to.partial`, renamed when complete), and removes the directory.
pub fn write_archive(
    store: &Store,
    storage: &dyn Storage,
    realm: agora_actors::ids::RealmId,
    scope: &Scope,
    to: &Path,
    progress: &mut dyn Progress,
) -> Result<Exported, ImportError> {
    let shown = to.display().to_string();
    let parent = to.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let temp = tempfile::Builder::new()
        .prefix(".agora-export-")
        .tempdir_in(parent)
        .map_err(|e| ImportError::at(&shown, e.to_string()))?;
    let top = format!("zulip-export-{}", &agora_actors::secrets::new_api_key()[..8].to_lowercase());
    let dir = temp.path().join(&top);
    let exported = export(store, storage, realm, scope, &dir, progress)?;
    progress.stage("packing", None);
    let partial = PathBuf::from(format!("{shown}.partial"));
    let packed = (|| -> std::io::Result<()> {
        let file = File::create(&partial)?;
        let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(file, flate2::Compression::fast()));
        tar.append_dir_all(&top, &dir)?;
        tar.into_inner()?.finish()?.sync_all()?;
        std::fs::rename(&partial, to)
    })();
    if let Err(e) = packed {
        let _ = std::fs::remove_file(&partial);
        return Err(ImportError::at(shown, e.to_string()));
    }
    Ok(exported)
}
