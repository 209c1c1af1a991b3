//! The files of an import: uploads (streamed, never whole in memory), avatars, custom emoji
//! and the organization's icon (images, read whole within a limit, made into what the
//! server serves).

use std::io::{BufReader, Read};

use serde_json::json;

use super::Writer;
use crate::store;
use crate::transfer::model::Organization;
use crate::transfer::{Files, ImportError, Progress};
use crate::uploads::images::{self, AVATAR_SIZE, MEDIUM_AVATAR_SIZE};
use crate::uploads::names::avatar_path;

/// The largest avatar, emoji or icon image read (an upload has no such limit).
const MAX_IMAGE: u64 = 25 * 1024 * 1024;

impl Writer<'_> {
    pub(super) fn write_files(
        &mut self,
        org: &Organization,
        files: &mut dyn Files,
        progress: &mut dyn Progress,
    ) -> Result<(), ImportError> {
        let avatars = org.users.iter().filter(|u| u.avatar.is_some()).count();
        let total = org.attachments.iter().filter(|a| a.file.is_some()).count()
            + avatars
            + org.emoji.len()
            + usize::from(org.icon.is_some());
        progress.stage("files", Some(total as u64));
        for a in &org.attachments {
            let Some(name) = &a.file else { continue };
            let new_id = self.attachments.get(&a.id).copied();
            let path_id = self.ids.path_id(&a.path_id);
            match files.open(name).map_err(|e| ImportError::at(name.clone(), e.to_string()))? {
                Some(mut reader) => {
                    let mut pending = self.storage.create().map_err(|e| ImportError::new(format!("uploads: {e}")))?;
                    std::io::copy(&mut reader, &mut pending)
                        .map_err(|e| ImportError::at(name.clone(), e.to_string()))?;
                    pending.commit(&path_id).map_err(|e| ImportError::new(format!("uploads: {e}")))?;
                    if let (Some(id), Some(info)) = (new_id, self.probe(&path_id, a.content_type.as_deref())) {
                        self.store
                            .write(|tx| store::transfer::set_image(tx, id, info.width, info.height, info.frames))?;
                    }
                    self.summary.uploads += 1;
                }
                None => self.summary.missing_files += 1,
            }
            progress.advance(1);
        }
        for person in &org.users {
            let (Some(name), Some(user)) = (&person.avatar, self.user(person.id)) else { continue };
            if let Some(bytes) = read_image(files, name)? {
                let path = avatar_path(self.realm_id, user);
                let stored = [
                    (MEDIUM_AVATAR_SIZE, format!("user_avatars/{path}-medium.png")),
                    (AVATAR_SIZE, format!("user_avatars/{path}.png")),
                ]
                .into_iter()
                .try_for_each(|(size, at)| self.put_square(&bytes, size, &at));
                match stored {
                    Ok(()) => self.store.write(|tx| store::attachments::set_avatar(tx, user, "U", 2))?,
                    Err(why) => tracing::warn!(file = %name, why, "an avatar that is not an image was left out"),
                }
            }
            progress.advance(1);
        }
        for emoji in &org.emoji {
            if let Some(bytes) = emoji.file.as_deref().map(|name| read_image(files, name)).transpose()?.flatten() {
                let at = format!("user_avatars/{}/emoji/images/{}", self.realm_id.0, emoji.file_name);
                if !crate::uploads::storage::valid_path_id(&at) {
                    return Err(ImportError::at(
                        format!("custom emoji {}", emoji.name),
                        format!("not a valid file name: {:?}", emoji.file_name),
                    ));
                }
                self.storage.put(&at, &bytes).map_err(|e| ImportError::new(format!("uploads: {e}")))?;
            }
            progress.advance(1);
        }
        if let Some(name) = &org.icon {
            if let Some(bytes) = read_image(files, name)? {
                let at = format!("user_avatars/{}/realm/icon.png", self.realm_id.0);
                if self.put_square(&bytes, AVATAR_SIZE, &at).is_ok() {
                    let realm_id = self.realm_id;
                    self.store.write(|tx| -> Result<(), ImportError> {
                        let mut realm = store::realms::by_id(tx, realm_id)?
                            .ok_or_else(|| ImportError::new("the organization vanished"))?;
                        realm.settings.insert("icon_source".into(), json!("U"));
                        realm.settings.insert("icon_version".into(), json!(2));
                        store::realms::save_settings(tx, &realm)?;
                        Ok(())
                    })?;
                }
            }
            progress.advance(1);
        }
        Ok(())
    }

    fn probe(&self, path_id: &str, content_type: Option<&str>) -> Option<images::ImageInfo> {
        let stored = self.storage.open(path_id).ok()??;
        images::probe_reader(BufReader::new(stored.file), content_type)
    }

    fn put_square(&self, bytes: &[u8], size: u32, at: &str) -> Result<(), &'static str> {
        let png = images::square_png(bytes, size).map_err(|e| e.0)?;
        self.storage.put(at, &png).map_err(|_| "could not be stored")
    }
}

/// A small image file of the input, whole; `None` when the input lacks it.
fn read_image(files: &mut dyn Files, name: &str) -> Result<Option<Vec<u8>>, ImportError> {
    let Some(reader) = files.open(name).map_err(|e| ImportError::at(name, e.to_string()))? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    reader.take(MAX_IMAGE + 1).read_to_end(&mut bytes).map_err(|e| ImportError::at(name, e.to_string()))?;
    if bytes.len() as u64 > MAX_IMAGE {
        return Err(ImportError::at(name, format!("an image larger than {} MiB", MAX_IMAGE >> 20)));
    }
    Ok(Some(bytes))
}
