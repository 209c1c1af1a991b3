//! Writes an imported organization: [`Writer::begin`] writes everything but the messages
//! (under a name no request reaches), [`Writer::message`] the messages in batches,
//! [`Writer::finish`] publishes it under its subdomain. [`Writer::abort`] removes it all.

mod files;
mod messages;
mod org;

use std::collections::HashMap;

use serde_json::Map;

use super::model::{Message, Organization};
use super::remap::IdMaps;
use super::{Files, ImportError, Progress, Summary};
use crate::config::ServerConfig;
use crate::ids::RealmId;
use crate::realm::model::Realm;
use crate::realm::state::RealmState;
use crate::store::{self, Store};
use crate::uploads::storage::Storage;

/// Messages written per transaction with no server running: a batch's rows go into the
/// indexes in key order, so bigger batches write faster (10,000: about 1.4 s here).
pub const BATCH_ALONE: usize = 10_000;
/// ... and beside a running server, whose other organizations wait for the database while
/// a batch is written (2,000: about 0.3 s here).
pub const BATCH_BESIDE_SERVER: usize = 2_000;

/// Where an import writes: the server's database, its uploads and its settings.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    pub store: &'a Store,
    pub storage: &'a dyn Storage,
    pub config: &'a ServerConfig,
    /// Messages per transaction ([`BATCH_ALONE`] or [`BATCH_BESIDE_SERVER`]).
    pub batch: usize,
}

/// An import under way.
pub struct Writer<'a> {
    store: &'a Store,
    storage: &'a dyn Storage,
    realm_id: RealmId,
    subdomain: String,
    deactivated: bool,
    ids: IdMaps,
    /// Source attachment id -> (new attachment id, public to the organization's members).
    attachments: HashMap<i64, i64>,
    /// New attachment id -> source message ids that link to it.
    claims: Vec<(i64, Vec<i64>)>,
    /// The organization as loaded after [`Writer::begin`], to render messages that come
    /// without HTML.
    state: RealmState,
    /// Source ids the source gives the system bots -> this organization's system bots.
    batch: Vec<Message>,
    batch_size: usize,
    summary: Summary,
}

impl<'a> Writer<'a> {
    /// Checks the subdomain, then writes the organization, its people, groups, channels,
    /// subscriptions, emoji, linkifiers and files. On failure nothing is left.
    pub fn begin(
        target: Target<'a>,
        subdomain: &str,
        org: &Organization,
        files: &mut dyn Files,
        progress: &mut dyn Progress,
        now: i64,
    ) -> Result<Writer<'a>, ImportError> {
        let Target { store, storage, config, batch: batch_size } = target;
        crate::validate::subdomain(subdomain)
            .map_err(|e| ImportError::new(format!("--subdomain {subdomain:?}: {}", e.msg)))?;
        if store::transfer::subdomain_taken(&*store.conn()?, subdomain)? {
            return Err(ImportError::new(format!("the subdomain {subdomain:?} is in use by another organization")));
        }
        let placeholder =
            format!("{}{}/{}", store::transfer::IMPORTING, std::process::id(), crate::secrets::new_api_key());
        let realm = Realm {
            id: RealmId(0),
            subdomain: placeholder,
            name: org.name.clone(),
            description: org.description.clone(),
            settings: Map::new(),
            user_defaults: org.user_defaults.clone(),
            deactivated: true,
            date_created: org.date_created,
        };
        let realm_id = store.write(|tx| crate::realm::organization::ops::insert_skeleton(tx, &realm, now))?;
        let state = RealmState::new(Realm { id: realm_id, ..realm }, Vec::new(), Default::default());
        let mut writer = Writer {
            store,
            storage,
            realm_id,
            subdomain: subdomain.to_owned(),
            deactivated: org.deactivated,
            ids: IdMaps { realm: org.upload_realm_id.map(|old| (old, realm_id.0)), ..Default::default() },
            attachments: HashMap::new(),
            claims: Vec::new(),
            state,
            batch: Vec::new(),
            batch_size: batch_size.max(1),
            summary: Summary { realm_id: realm_id.0, subdomain: subdomain.to_owned(), ..Default::default() },
        };
        let written =
            writer.write_organization(config, org, now).and_then(|_| writer.write_files(org, files, progress));
        match written {
            Ok(()) => Ok(writer),
            Err(e) => {
                writer.abort();
                Err(e)
            }
        }
    }

    /// The new organization's id.
    pub fn realm_id(&self) -> RealmId {
        self.realm_id
    }

    /// Takes one message (in the order they were sent); written with the next batch.
    pub fn message(&mut self, message: Message) -> Result<(), ImportError> {
        self.batch.push(message);
        if self.batch.len() >= self.batch_size {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the last messages and the uploads' links to them, then publishes the
    /// organization under its subdomain. With `reset_mails`, every active person is then
    /// mailed a link to set a password (an import brings none).
    pub fn finish(mut self, reset_mails: Option<&ServerConfig>) -> Result<Summary, ImportError> {
        let done = self.flush().and_then(|_| self.write_claims()).and_then(|_| self.publish());
        if let Err(e) = done {
            self.abort();
            return Err(e);
        }
        if let Some(config) = reset_mails {
            self.mail_resets(config)?;
        }
        Ok(std::mem::take(&mut self.summary))
    }

    /// Queues a password-reset mail for every active human of the published organization.
    fn mail_resets(&mut self, config: &ServerConfig) -> Result<(), ImportError> {
        let mut state = RealmState::load(&*self.store.conn()?, self.realm_id)?
            .ok_or_else(|| ImportError::new("the organization vanished"))?;
        let now = crate::clock::now();
        let emails: Vec<String> =
            state.users().filter(|u| u.is_active && !u.is_bot).map(|u| u.delivery_email.clone()).collect();
        for email in emails {
            if let Some(reset) = crate::realm::password_reset::ops::plan_request(&state, config, &email, now) {
                crate::realm::commit(&mut state, self.store, reset).map_err(|e| ImportError::new(e.msg))?;
                self.summary.reset_mails += 1;
            }
        }
        Ok(())
    }

    /// Removes every row and file of the organization.
    pub fn abort(&mut self) {
        remove(self.store, self.storage, self.realm_id);
    }

    fn publish(&mut self) -> Result<(), ImportError> {
        let (realm_id, subdomain, deactivated) = (self.realm_id, self.subdomain.clone(), self.deactivated);
        self.store
            .write(|tx| {
                if store::transfer::subdomain_taken(tx, &subdomain)? {
                    return Ok(false);
                }
                store::transfer::publish(tx, realm_id, &subdomain, deactivated)?;
                Ok::<_, store::StoreError>(true)
            })?
            .then_some(())
            .ok_or_else(|| ImportError::new(format!("the subdomain {subdomain:?} was taken while importing")))
    }
}

/// Removes an organization's rows and files (a failed import, or one a crash left).
pub fn remove(store: &Store, storage: &dyn Storage, realm: RealmId) {
    if let Err(e) = store.write(|tx| store::transfer::delete_realm(tx, realm)) {
        tracing::error!(realm.id = %realm, error = %e, "could not remove an unfinished import");
    }
    for prefix in [format!("{}", realm.0), format!("user_avatars/{}", realm.0)] {
        if let Err(e) = storage.delete_tree(&prefix) {
            tracing::warn!(realm.id = %realm, error = %e, "could not remove an unfinished import's files");
        }
    }
}

/// Removes the organizations that imports which are no longer running left behind
/// (their process is gone). Returns how many.
pub fn clean_up_unfinished(store: &Store, storage: &dyn Storage) -> Result<usize, ImportError> {
    let unfinished = store::transfer::unfinished_imports(&*store.conn()?)?;
    let mut removed = 0;
    for (realm, subdomain) in unfinished {
        let pid = subdomain.trim_start_matches(store::transfer::IMPORTING).split('/').next().unwrap_or("");
        let running = pid.parse::<u32>().is_ok_and(|pid| pid != std::process::id() && process_exists(pid));
        if !running {
            remove(store, storage, realm);
            removed += 1;
        }
    }
    Ok(removed)
}

fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}
