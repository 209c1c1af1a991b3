//! Uploaded files outside any organization's state: where their bytes are kept
//! ([`storage`]: a local directory, or an S3-compatible object store, [`s3`]), how their names and paths are made ([`names`]), the temporary URLs that
//! serve them without credentials ([`signing`]), and the images made from them
//! ([`images`]: thumbnails, avatars, custom emoji; `crate::thumbnailer` makes the
//! thumbnails off the actors' threads), and Jdenticon avatars ([`jdenticon`]).
//!
//! A leaf: it imports no feature of the organization. The rows that describe uploads
//! (`attachments`, `realm_emoji`) are the organization's, changed through its actor.

pub mod images;
pub mod jdenticon;
pub mod names;
pub mod s3;
pub mod signing;
pub mod storage;

pub use storage::{LocalStorage, PendingFile, Storage, StoredFile};
