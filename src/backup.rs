//! `agora backup` and `agora restore`: one archive holding a consistent copy of the
//! database and the uploaded files.
//!
//! The archive is a gzip-compressed tar file: `agora.sqlite3` (made with SQLite's online
//! backup API, so the server keeps running and writing meanwhile), every file under the
//! data directory's `uploads/` (its `tmp/` of half-written files aside), and last
//! `agora-backup.json`, a manifest saying what the archive holds. The database is copied
//! first: every upload its rows name was stored before the row was committed, so the
//! archive has it (a file deleted between the two steps is simply missing).
//!
//! A restore goes into an empty data directory only, checks every entry's name and type
//! (regular files and directories under known names, nothing outside the directory),
//! checks the database (SQLite's `quick_check`, a schema this build knows) and removes
//! what it extracted if anything fails.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use agora_actors::store::backup::check_file;
use agora_actors::store::{Store, DB_FILE};
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::datadir;

/// The manifest's name in the archive.
pub const MANIFEST: &str = "agora-backup.json";
/// The uploads' directory in the data directory and in the archive.
pub const UPLOADS: &str = "uploads";
/// Half-written uploads, never archived.
const UPLOADS_TMP: &str = "tmp";
/// What the manifest's `format` says.
const FORMAT: &str = "agora-backup";
const VERSION: u32 = 1;

/// What an archive holds, written last into it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    /// Unix seconds when the database was copied.
    pub created_at: i64,
    pub agora_version: String,
    pub schema_version: i64,
    pub database_bytes: u64,
    pub upload_files: u64,
    pub upload_bytes: u64,
}

/// A failure, told to the operator as it is.
pub type BackupError = String;

fn io_err(path: &Path) -> impl Fn(io::Error) -> BackupError + '_ {
    move |e| format!("{}: {e}", path.display())
}

/// `path` with `suffix` added to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Writes the archive of `store`'s database and of `data_dir`'s uploads to `to`, which
/// must not exist yet. The archive appears under its name only once complete.
pub fn create(store: &Store, data_dir: &Path, to: &Path) -> Result<Value, BackupError> {
    let started = Instant::now();
    if to.exists() {
        return Err(format!("{} already exists", to.display()));
    }
    let snapshot = with_suffix(to, ".db-partial");
    let partial = with_suffix(to, ".partial");
    let result = write_archive(store, data_dir, &snapshot, &partial);
    let _ = fs::remove_file(&snapshot);
    let manifest = match result {
        Ok(manifest) => manifest,
        Err(e) => {
            let _ = fs::remove_file(&partial);
            return Err(e);
        }
    };
    fs::rename(&partial, to).map_err(io_err(to))?;
    if let Some(dir) = to.parent().filter(|d| !d.as_os_str().is_empty()) {
        // The new name itself survives a crash.
        let _ = File::open(dir).and_then(|d| d.sync_all());
    }
    let bytes = fs::metadata(to).map_err(io_err(to))?.len();
    tracing::info!(
        archive = %to.display(),
        bytes,
        upload_files = manifest.upload_files,
        millis = started.elapsed().as_millis() as u64,
        "backup written"
    );
    Ok(json!({
        "archive": to.display().to_string(),
        "bytes": bytes,
        "created_at": manifest.created_at,
        "schema_version": manifest.schema_version,
        "database_bytes": manifest.database_bytes,
        "upload_files": manifest.upload_files,
        "upload_bytes": manifest.upload_bytes,
    }))
}

/// Creates a file only its owner can read (the archive holds API keys and password hashes).
fn create_private(path: &Path) -> Result<File, BackupError> {
    OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).map_err(io_err(path))
}

fn write_archive(store: &Store, data_dir: &Path, snapshot: &Path, partial: &Path) -> Result<Manifest, BackupError> {
    // A leftover of a run that was killed.
    let _ = fs::remove_file(snapshot);
    let created_at = agora_actors::clock::now();
    let copied = store.backup_to(snapshot).map_err(|e| format!("cannot copy the database: {e}"))?;

    let file = create_private(partial)?;
    let mut tar = tar::Builder::new(GzEncoder::new(BufWriter::new(file), Compression::fast()));
    tar.mode(tar::HeaderMode::Deterministic);
    let mut db = File::open(snapshot).map_err(io_err(snapshot))?;
    append_file(&mut tar, DB_FILE, &mut db, 0o600).map_err(io_err(snapshot))?;
    let (upload_files, upload_bytes) = append_uploads(&mut tar, &data_dir.join(UPLOADS))?;
    let manifest = Manifest {
        format: FORMAT.into(),
        version: VERSION,
        created_at,
        agora_version: env!("CARGO_PKG_VERSION").into(),
        schema_version: copied.schema_version,
        database_bytes: copied.bytes,
        upload_files,
        upload_bytes,
    };
    let text = serde_json::to_vec_pretty(&manifest).map_err(|e| e.to_string())?;
    append_bytes(&mut tar, MANIFEST, &text).map_err(io_err(partial))?;
    let gz = tar.into_inner().map_err(io_err(partial))?;
    let writer = gz.finish().map_err(io_err(partial))?;
    let file = writer.into_inner().map_err(|e| format!("{}: {}", partial.display(), e.error()))?;
    file.sync_all().map_err(io_err(partial))?;
    Ok(manifest)
}

type Archive = tar::Builder<GzEncoder<BufWriter<File>>>;

fn header(len: u64, mode: u32) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(len);
    header.set_mode(mode);
    header.set_mtime(0);
    header
}

/// Appends exactly the file's current length, so that the archive stays whole even if
/// the file were to change meanwhile.
fn append_file(tar: &mut Archive, name: &str, file: &mut File, mode: u32) -> io::Result<()> {
    let len = file.metadata()?.len();
    let mut header = header(len, mode);
    tar.append_data(&mut header, name, file.take(len))
}

fn append_bytes(tar: &mut Archive, name: &str, bytes: &[u8]) -> io::Result<()> {
    let mut header = header(bytes.len() as u64, 0o600);
    tar.append_data(&mut header, name, bytes)
}

/// Appends every regular file under `root` (its `tmp/` aside) as `uploads/...`: the
/// number of files and their bytes. Symbolic links are not followed; files that vanish
/// meanwhile are left out.
fn append_uploads(tar: &mut Archive, root: &Path) -> Result<(u64, u64), BackupError> {
    let (mut files, mut bytes) = (0, 0);
    if !root.is_dir() {
        return Ok((0, 0));
    }
    let mut pending = vec![(root.to_owned(), UPLOADS.to_owned())];
    while let Some((dir, name)) = pending.pop() {
        let mut entries: Vec<fs::DirEntry> = match fs::read_dir(&dir) {
            Ok(list) => list.filter_map(Result::ok).collect(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("{}: {e}", dir.display())),
        };
        entries.sort_by_key(fs::DirEntry::file_name);
        for entry in entries {
            let Some(file_name) = entry.file_name().to_str().map(str::to_owned) else {
                tracing::warn!(path = %entry.path().display(), "backup: skipping a file whose name is not UTF-8");
                continue;
            };
            let (path, inner) = (entry.path(), format!("{name}/{file_name}"));
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if !(dir == root && file_name == UPLOADS_TMP) {
                    pending.push((path, inner));
                }
            } else if kind.is_file() {
                let mut file = match File::open(&path) {
                    Ok(file) => file,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(format!("{}: {e}", path.display())),
                };
                append_file(tar, &inner, &mut file, 0o600).map_err(io_err(&path))?;
                files += 1;
                bytes += file.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    Ok((files, bytes))
}

/// Restores `archive` into `data_dir`, which must be empty or not exist. Holds the data
/// directory's lock meanwhile, so that no server starts on a half-restored directory.
pub fn restore(archive: &Path, data_dir: &Path) -> Result<Value, BackupError> {
    let existed = data_dir.exists();
    if existed {
        let mut entries = fs::read_dir(data_dir).map_err(io_err(data_dir))?;
        if entries.next().is_some() {
            return Err(format!("{} is not empty: restore into an empty or new directory", data_dir.display()));
        }
    }
    datadir::ensure(data_dir).map_err(io_err(data_dir))?;
    let lock = datadir::lock(data_dir)
        .map_err(io_err(data_dir))?
        .ok_or_else(|| format!("another process is using {}", data_dir.display()))?;
    let result = extract(archive, data_dir);
    if result.is_err() {
        // Leave the directory as it was found.
        if existed {
            if let Ok(entries) = fs::read_dir(data_dir) {
                for entry in entries.filter_map(Result::ok) {
                    let path = entry.path();
                    let _ = if path.is_dir() { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
                }
            }
        } else {
            let _ = fs::remove_dir_all(data_dir);
        }
    }
    drop(lock);
    let manifest = result?;
    Ok(json!({
        "data_dir": data_dir.display().to_string(),
        "created_at": manifest.created_at,
        "agora_version": manifest.agora_version,
        "schema_version": manifest.schema_version,
        "database_bytes": manifest.database_bytes,
        "upload_files": manifest.upload_files,
        "upload_bytes": manifest.upload_bytes,
    }))
}

/// Opens an archive, gzip-compressed or not.
fn open_archive(path: &Path) -> Result<tar::Archive<Box<dyn Read>>, BackupError> {
    let mut file = File::open(path).map_err(io_err(path))?;
    let mut magic = [0u8; 2];
    let gzip = file.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
    file.seek(SeekFrom::Start(0)).map_err(io_err(path))?;
    let reader: Box<dyn Read> =
        if gzip { Box::new(GzDecoder::new(BufReader::new(file))) } else { Box::new(BufReader::new(file)) };
    Ok(tar::Archive::new(reader))
}

/// The largest manifest read.
const MAX_MANIFEST_BYTES: u64 = 64 * 1024;

fn extract(archive: &Path, data_dir: &Path) -> Result<Manifest, BackupError> {
    let bad = |what: String| format!("{} is not an Agora backup: {what}", archive.display());
    let restoring = data_dir.join(format!("{DB_FILE}.restoring"));
    let mut tar = open_archive(archive)?;
    let (mut manifest, mut database, mut files, mut bytes) = (None, false, 0u64, 0u64);
    for entry in tar.entries().map_err(|e| bad(e.to_string()))? {
        let mut entry = entry.map_err(|e| bad(e.to_string()))?;
        let name = entry.path().map_err(|e| bad(e.to_string()))?.to_string_lossy().into_owned();
        let kind = entry.header().entry_type();
        if manifest.is_some() {
            return Err(bad(format!("{name} comes after the manifest")));
        }
        match name.as_str() {
            DB_FILE if kind.is_file() && !database => {
                entry.unpack(&restoring).map_err(|e| format!("{}: {e}", restoring.display()))?;
                database = true;
            }
            MANIFEST if kind.is_file() => {
                let mut text = String::new();
                entry.by_ref().take(MAX_MANIFEST_BYTES).read_to_string(&mut text).map_err(|e| bad(e.to_string()))?;
                let parsed: Manifest = serde_json::from_str(&text).map_err(|e| bad(format!("{MANIFEST}: {e}")))?;
                if parsed.format != FORMAT || parsed.version != VERSION {
                    return Err(bad(format!("format {:?} version {}", parsed.format, parsed.version)));
                }
                manifest = Some(parsed);
            }
            _ if name.starts_with("uploads/") && (kind.is_file() || kind.is_dir()) => {
                let len = entry.header().size().unwrap_or(0);
                if !entry.unpack_in(data_dir).map_err(|e| format!("{name}: {e}"))? {
                    return Err(bad(format!("{name} points outside the data directory")));
                }
                if kind.is_file() {
                    files += 1;
                    bytes += len;
                }
            }
            _ => return Err(bad(format!("unexpected entry {name:?}"))),
        }
    }
    let manifest = manifest.ok_or_else(|| bad(format!("no {MANIFEST} (an archive cut short?)")))?;
    if !database {
        return Err(bad(format!("no {DB_FILE}")));
    }
    if (files, bytes) != (manifest.upload_files, manifest.upload_bytes) {
        return Err(bad(format!(
            "{files} uploaded files ({bytes} bytes) where the manifest lists {} ({} bytes)",
            manifest.upload_files, manifest.upload_bytes
        )));
    }
    let version = check_file(&restoring).map_err(|e| format!("the archived database cannot be used: {e}"))?;
    if version != manifest.schema_version {
        return Err(bad(format!("schema version {version} where the manifest says {}", manifest.schema_version)));
    }
    let db = data_dir.join(DB_FILE);
    fs::set_permissions(&restoring, fs::Permissions::from_mode(0o600)).map_err(io_err(&restoring))?;
    File::open(&restoring).and_then(|f| f.sync_all()).map_err(io_err(&restoring))?;
    fs::rename(&restoring, &db).map_err(io_err(&db))?;
    let _ = File::open(data_dir).and_then(|d| d.sync_all());
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with_realm(dir: &Path) -> Store {
        fs::create_dir_all(dir).unwrap();
        let store = Store::open(dir).unwrap();
        store
            .write(|tx| {
                tx.execute("INSERT INTO realms (subdomain, name, date_created) VALUES ('x', 'X', 0)", [])
                    .map_err(agora_actors::store::StoreError::from)
            })
            .unwrap();
        store
    }

    #[test]
    fn an_archive_restores_the_database_and_the_uploads() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        fs::create_dir_all(data.join("uploads/2/ab")).unwrap();
        fs::create_dir_all(data.join("uploads/tmp")).unwrap();
        fs::write(data.join("uploads/2/ab/cat.png"), b"meow").unwrap();
        fs::write(data.join("uploads/tmp/half"), b"half-written").unwrap();
        let store = store_with_realm(&data);
        let archive = tmp.path().join("backup.tar.gz");
        let out = create(&store, &data, &archive).unwrap();
        assert_eq!((out["upload_files"].as_u64(), out["upload_bytes"].as_u64()), (Some(1), Some(4)));
        assert_eq!(fs::metadata(&archive).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(!with_suffix(&archive, ".partial").exists() && !with_suffix(&archive, ".db-partial").exists());
        // Never over an existing file.
        assert!(create(&store, &data, &archive).unwrap_err().contains("already exists"));

        let restored = tmp.path().join("restored");
        let out = restore(&archive, &restored).unwrap();
        assert_eq!(out["upload_files"], 1);
        assert_eq!(fs::read(restored.join("uploads/2/ab/cat.png")).unwrap(), b"meow");
        assert!(!restored.join("uploads/tmp").exists());
        let store = Store::open(&restored).unwrap();
        let n: i64 = store.conn().unwrap().query_row("SELECT count(*) FROM realms", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
        assert_eq!(fs::metadata(restored.join(DB_FILE)).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn restore_refuses_a_directory_in_use_and_strange_archives() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let store = store_with_realm(&data);
        let archive = tmp.path().join("b.tar.gz");
        create(&store, &data, &archive).unwrap();
        // Not into a directory that holds anything.
        assert!(restore(&archive, &data).unwrap_err().contains("is not empty"));

        // An archive with a path leading out, or cut short, leaves nothing behind.
        let evil = tmp.path().join("evil.tar");
        let mut builder = tar::Builder::new(File::create(&evil).unwrap());
        let mut h = header(3, 0o600);
        h.set_path("uploads/x").unwrap();
        let mut raw = h.as_bytes().to_vec();
        // The tar crate refuses to write `..` itself: write the name by hand.
        raw[..100].fill(0);
        raw[..15].copy_from_slice(b"uploads/../../x");
        let mut h = tar::Header::from_byte_slice(&raw).clone();
        h.set_cksum();
        builder.append(&h, &b"bad"[..]).unwrap();
        builder.finish().unwrap();
        drop(builder);
        let target = tmp.path().join("t1");
        let err = restore(&evil, &target).unwrap_err();
        assert!(err.contains("is not an Agora backup") || err.contains("outside"), "{err}");
        assert!(!target.exists());
        assert!(!tmp.path().join("x").exists());

        let short = tmp.path().join("short.tar.gz");
        let bytes = fs::read(&archive).unwrap();
        fs::write(&short, &bytes[..bytes.len() / 2]).unwrap();
        let target = tmp.path().join("t2");
        fs::create_dir(&target).unwrap();
        assert!(restore(&short, &target).is_err());
        assert!(target.exists() && fs::read_dir(&target).unwrap().next().is_none());
    }
}
