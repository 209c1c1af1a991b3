//! An import's input: a directory as it is, or an archive (`.tar.gz`, or `.zip` as Slack and
//! Mattermost write them) unpacked entry by entry, streamed, into a temporary directory
//! beside the database and removed afterwards. Only plain files and directories with
//! relative paths inside the archive are accepted; a truncated or damaged archive is
//! refused with what is wrong.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Component, Path, PathBuf};

use agora_actors::transfer::{ImportError, Progress};

/// The directory to read, and the temporary one to remove (when an archive was unpacked).
pub struct Input {
    dir: PathBuf,
    _unpacked: Option<tempfile::TempDir>,
}

impl Input {
    pub fn open(path: &Path, data_dir: &Path, progress: &mut dyn Progress) -> Result<Input, ImportError> {
        let shown = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|e| ImportError::at(&shown, e.to_string()))?;
        if meta.is_dir() {
            return Ok(Input { dir: path.to_path_buf(), _unpacked: None });
        }
        remove_stale(data_dir);
        let temp = tempfile::Builder::new()
            .prefix(&format!("import-{}-", std::process::id()))
            .tempdir_in(data_dir)
            .map_err(|e| ImportError::new(format!("{}: {e}", data_dir.display())))?;
        let mut file = File::open(path).map_err(|e| ImportError::at(&shown, e.to_string()))?;
        let mut magic = [0u8; 4];
        let is_zip = file.read_exact(&mut magic).is_ok() && magic == *b"PK\x03\x04";
        drop(file);
        let file = File::open(path).map_err(|e| ImportError::at(&shown, e.to_string()))?;
        progress.stage("unpacking", Some(meta.len()));
        if is_zip {
            unzip(file, temp.path(), progress).map_err(|e| ImportError::at(&shown, e))?;
        } else {
            let counted = Counted { inner: BufReader::new(file), progress, read: 0 };
            unpack(counted, temp.path()).map_err(|e| ImportError::at(&shown, e))?;
        }
        Ok(Input { dir: temp.path().to_path_buf(), _unpacked: Some(temp) })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Removes the unpacked archives of imports that are no longer running (killed before they
/// could remove their own).
fn remove_stale(data_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(data_dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("import-").and_then(|rest| rest.split('-').next()) else { continue };
        let gone = pid.parse::<u32>().is_ok_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
        if gone {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Counts the compressed bytes read, for the progress bar.
struct Counted<'a, R> {
    inner: R,
    progress: &'a mut dyn Progress,
    read: u64,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read >= 1 << 20 || n == 0 {
            self.progress.advance(self.read);
            self.read = 0;
        }
        Ok(n)
    }
}

/// Unpacks a gzip-compressed tar archive into `into`.
fn unpack(reader: impl Read, into: &Path) -> Result<(), String> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(reader));
    let entries = archive.entries().map_err(|e| describe(&e))?;
    let mut count = 0;
    for entry in entries {
        let mut entry = entry.map_err(|e| describe(&e))?;
        let name = entry.path().map_err(|e| describe(&e))?.into_owned();
        let shown = name.display().to_string();
        if name.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir)) {
            return Err(format!("{shown}: a path leaving the archive"));
        }
        let kind = entry.header().entry_type();
        let target = into.join(&name);
        if kind.is_dir() {
            std::fs::create_dir_all(&target).map_err(|e| format!("{shown}: {e}"))?;
        } else if kind.is_file() {
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| format!("{shown}: {e}"))?;
            }
            let mut out = File::create(&target).map_err(|e| format!("{shown}: {e}"))?;
            io::copy(&mut entry, &mut out).map_err(|e| format!("{shown}: {}", describe(&e)))?;
        } else if !matches!(kind, tar::EntryType::XGlobalHeader | tar::EntryType::XHeader) {
            return Err(format!("{shown}: not a file or a directory (links are not accepted)"));
        }
        count += 1;
    }
    if count == 0 {
        return Err("an empty archive".to_owned());
    }
    Ok(())
}

/// Unpacks a `.zip` archive into `into`. Names are taken as UTF-8 (Slack does not mark them
/// so, and writes them so).
fn unzip(file: File, into: &Path, progress: &mut dyn Progress) -> Result<(), String> {
    let mut archive = zip::ZipArchive::new(BufReader::new(file))
        .map_err(|e| format!("not a .zip archive, or a damaged one ({e})"))?;
    if archive.is_empty() {
        return Err("an empty archive".to_owned());
    }
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(|e| format!("entry {i}: {e}"))?;
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        let relative = Path::new(&name);
        if relative.is_absolute()
            || relative.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(format!("{name}: a path leaving the archive"));
        }
        let target = into.join(relative);
        if entry.is_dir() {
            std::fs::create_dir_all(&target).map_err(|e| format!("{name}: {e}"))?;
        } else if entry.is_file() {
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| format!("{name}: {e}"))?;
            }
            let mut out = File::create(&target).map_err(|e| format!("{name}: {e}"))?;
            io::copy(&mut entry, &mut out).map_err(|e| format!("{name}: {}", describe(&e)))?;
        } else {
            return Err(format!("{name}: not a file or a directory (links are not accepted)"));
        }
        progress.advance(entry.compressed_size());
    }
    Ok(())
}

/// An I/O error of an archive as a person can act on it.
fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => "the archive ends early (is it cut short?)".to_owned(),
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => {
            format!("not a .tar.gz archive, or a damaged one ({e})")
        }
        _ => e.to_string(),
    }
}
