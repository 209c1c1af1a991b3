//! What the organization keeps in memory about its uploads: each attachment's row (who
//! owns it, its size, whether a public channel's message claimed it, and for images their
//! dimensions and whether their thumbnails are made), and its custom emoji. A leaf: it
//! imports no feature. The features that change it (`realm::attachments`,
//! `realm::realm_emoji`) plan their changes and apply them here once committed; sending
//! reads it to claim the uploads a message links and to render their previews.
//!
//! Which messages claim an attachment is not kept here: it is read from the database
//! where needed (downloads by others than the owner, `GET /attachments`).

pub mod claims;
pub mod previews;

use std::sync::Arc;

use imbl::{HashMap, OrdMap};
use rusqlite::Connection;

use crate::ids::{RealmId, UserId};
use crate::store::{self, StoreResult};

/// An image's header facts and its thumbnails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageMeta {
    pub width: u32,
    pub height: u32,
    pub frames: u32,
    /// Names of the thumbnail formats made so far (empty: not made yet).
    pub thumbnails: Vec<String>,
}

/// One uploaded file (Zulip's `Attachment`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub id: i64,
    pub owner_id: UserId,
    pub path_id: String,
    /// The name as uploaded.
    pub name: String,
    pub size: i64,
    pub content_type: Option<String>,
    pub create_time: i64,
    /// A message of a public channel claims it: members who are not guests may read it.
    pub is_realm_public: bool,
    pub is_web_public: bool,
    pub image: Option<ImageMeta>,
}

/// A custom emoji (Zulip's `RealmEmoji`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealmEmoji {
    pub id: i64,
    pub name: String,
    /// Its file under `<realm_id>/emoji/images/`.
    pub file_name: String,
    pub author_id: Option<UserId>,
    pub deactivated: bool,
    pub is_animated: bool,
}

impl RealmEmoji {
    /// Where the emoji is served (Zulip's `get_emoji_url` for local storage).
    pub fn source_url(&self, realm: RealmId) -> String {
        format!("/user_avatars/{}/emoji/images/{}", realm.0, self.file_name)
    }
}

/// An organization's attachments and custom emoji.
#[derive(Debug, Clone, Default)]
pub struct UploadsData {
    by_path: HashMap<String, Arc<Attachment>>,
    /// Attachment id -> path id.
    by_id: OrdMap<i64, String>,
    /// Bytes of every attachment (Zulip's `upload_space_used`, the organization's total).
    space_used: i64,
    emoji: OrdMap<i64, Arc<RealmEmoji>>,
}

impl UploadsData {
    /// Loads an organization's attachments and emoji.
    pub fn load(conn: &Connection, realm: RealmId) -> StoreResult<UploadsData> {
        let mut data = UploadsData::default();
        for attachment in store::attachments::in_realm(conn, realm)? {
            data.put(attachment);
        }
        for emoji in store::attachments::emoji_in_realm(conn, realm)? {
            data.put_emoji(emoji);
        }
        Ok(data)
    }

    /// The attachment with this path id.
    pub fn by_path(&self, path_id: &str) -> Option<&Attachment> {
        self.by_path.get(path_id).map(|a| &**a)
    }

    /// The attachment with this id.
    pub fn by_id(&self, id: i64) -> Option<&Attachment> {
        self.by_id.get(&id).and_then(|p| self.by_path(p))
    }

    /// A user's attachments, by id.
    pub fn owned_by(&self, user: UserId) -> impl Iterator<Item = &Attachment> {
        self.by_id.values().filter_map(|p| self.by_path(p)).filter(move |a| a.owner_id == user)
    }

    /// Bytes of every attachment of the organization.
    pub fn space_used(&self) -> i64 {
        self.space_used
    }

    /// Adds or replaces an attachment.
    pub fn put(&mut self, attachment: Attachment) {
        if let Some(old) = self.remove(attachment.id) {
            self.by_path.remove(&old.path_id);
        }
        self.space_used += attachment.size;
        self.by_id.insert(attachment.id, attachment.path_id.clone());
        self.by_path.insert(attachment.path_id.clone(), Arc::new(attachment));
    }

    /// Removes an attachment, returning it.
    pub fn remove(&mut self, id: i64) -> Option<Arc<Attachment>> {
        let path = self.by_id.remove(&id)?;
        let old = self.by_path.remove(&path)?;
        self.space_used -= old.size;
        Some(old)
    }

    /// Every custom emoji (deactivated ones too), by id.
    pub fn emoji(&self) -> impl Iterator<Item = &RealmEmoji> {
        self.emoji.values().map(|e| &**e)
    }

    /// The active custom emoji called `name`.
    pub fn active_emoji(&self, name: &str) -> Option<&RealmEmoji> {
        self.emoji().find(|e| !e.deactivated && e.name == name)
    }

    /// The custom emoji with this id.
    pub fn emoji_by_id(&self, id: i64) -> Option<&RealmEmoji> {
        self.emoji.get(&id).map(|e| &**e)
    }

    /// Adds or replaces a custom emoji.
    pub fn put_emoji(&mut self, emoji: RealmEmoji) {
        self.emoji.insert(emoji.id, Arc::new(emoji));
    }

    /// Every custom emoji as Zulip lists them (`GET /realm/emoji`, the `realm_emoji` data
    /// set and event): by id (as a string), deactivated ones included.
    pub fn emoji_dicts(&self, realm: RealmId) -> serde_json::Map<String, serde_json::Value> {
        self.emoji().map(|e| (e.id.to_string(), emoji_dict(e, realm))).collect()
    }
}

/// A custom emoji as clients see it (`realm_emoji` in register and events).
pub fn emoji_dict(e: &RealmEmoji, realm: RealmId) -> serde_json::Value {
    serde_json::json!({
        "id": e.id.to_string(),
        "name": e.name,
        "source_url": e.source_url(realm),
        "deactivated": e.deactivated,
        "author_id": e.author_id,
        "still_url": serde_json::Value::Null,
    })
}

/// The path ids of uploads a message's content links (Zulip's
/// `/user_uploads/(\d+/[/\w.-]+)` and their URLs on this server's host), without repeats.
pub fn linked_path_ids(content: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = content;
    while let Some(at) = rest.find("/user_uploads/") {
        let after = &rest[at + "/user_uploads/".len()..];
        let len =
            after.find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '/' | '.' | '-'))).unwrap_or(after.len());
        let candidate = after[..len].trim_end_matches(['.', '/']);
        let realm_digits = candidate.split('/').next().unwrap_or("");
        if !realm_digits.is_empty()
            && realm_digits.chars().all(|c| c.is_ascii_digit())
            && candidate.contains('/')
            && !out.iter().any(|p| p == candidate)
        {
            out.push(candidate.to_owned());
        }
        rest = &after[len..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linked_uploads_are_found_in_content() {
        let content = "[a.txt](/user_uploads/2/ab/XyZ_-9/a.txt) and https://x.example/user_uploads/2/cd/Q/b.png.\n\
                       again /user_uploads/2/ab/XyZ_-9/a.txt, not /user_uploads/x/y nor /user_uploads/3";
        assert_eq!(linked_path_ids(content), vec!["2/ab/XyZ_-9/a.txt", "2/cd/Q/b.png"]);
    }

    fn attachment(id: i64, owner: i64, size: i64) -> Attachment {
        Attachment {
            id,
            owner_id: UserId(owner),
            path_id: format!("2/ab/{id}/f"),
            name: "f".into(),
            size,
            content_type: None,
            create_time: 0,
            is_realm_public: false,
            is_web_public: false,
            image: None,
        }
    }

    #[test]
    fn space_used_follows_the_attachments() {
        let mut data = UploadsData::default();
        data.put(attachment(1, 10, 5));
        data.put(attachment(2, 10, 7));
        data.put(attachment(3, 11, 1));
        assert_eq!(data.space_used(), 13);
        data.put(Attachment { is_realm_public: true, ..attachment(1, 10, 5) });
        assert_eq!(data.space_used(), 13);
        assert!(data.by_id(1).unwrap().is_realm_public);
        data.remove(2);
        assert_eq!(data.space_used(), 6);
        assert_eq!(data.owned_by(UserId(10)).map(|a| a.id).collect::<Vec<_>>(), vec![1]);
        assert!(data.by_path("2/ab/2/f").is_none());
    }
}
