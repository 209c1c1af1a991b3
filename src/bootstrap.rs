//! First start on an empty data directory: create the root organization and its owner,
//! and leave the owner's credentials in the data directory.

use std::path::PathBuf;

use actix::Addr;
use agora_actors::ids::UserId;
use agora_actors::realm::model::Role;
use agora_actors::realm::organization::NewRealm;
use agora_actors::realm::users::NewUser;
use agora_actors::registry::{CreateRealm, RealmRegistry};
use agora_actors::secrets::{hash_password, random_alphanumeric};
use agora_actors::store::{self, Store};
use agora_actors::validate;

use crate::datadir::write_private;
use crate::http::hashing::HashPool;
use crate::settings::Settings;
use crate::startup::StartupError;

/// The credentials file for the `zulip` Python client and tools.
pub const ZULIPRC: &str = "zuliprc";
/// The owner's initial password.
pub const PASSWORD_FILE: &str = "owner-password";

/// What a first start created.
#[derive(Debug, Clone)]
pub struct Bootstrapped {
    pub realm_url: String,
    pub email: String,
    pub user_id: UserId,
    pub api_key: String,
    pub zuliprc: PathBuf,
    pub password_file: PathBuf,
}

/// The first owner's address: `owner@<external host>` when that is a valid address.
fn owner_email(settings: &Settings) -> String {
    let host = settings.server_config().fake_email_domain("");
    let email = format!("owner@{host}");
    if validate::is_valid_email(&email) {
        email
    } else {
        "owner@agora.localhost".to_owned()
    }
}

/// Creates the root organization if the database has no organization at all.
pub async fn if_empty(
    store: &Store,
    registry: &Addr<RealmRegistry>,
    settings: &Settings,
    hashing: &HashPool,
) -> Result<Option<Bootstrapped>, StartupError> {
    if store::realms::any(&*store.conn()?)? {
        return Ok(None);
    }
    let email = owner_email(settings);
    let password = random_alphanumeric(20);
    // The password is written before the account exists: should the start fail half-way,
    // the owner can still log in (`POST /fetch_api_key`) with it.
    let password_file = settings.data_dir.join(PASSWORD_FILE);
    write_private(&password_file, &format!("{password}\n"))?;
    let cost = settings.password_hash;
    let hash = {
        let password = password.clone();
        hashing.run(move || hash_password(&password, cost)).await??
    };
    let created = registry
        .send(CreateRealm(NewRealm {
            subdomain: String::new(),
            name: "Agora".into(),
            owner: NewUser::human(&email, "Organization Owner", Role::Owner, Some(hash)),
        }))
        .await??;

    let config = settings.server_config();
    let realm_url = config.realm_url("");
    let zuliprc = settings.data_dir.join(ZULIPRC);
    write_private(&zuliprc, &format!("[api]\nemail={email}\nkey={}\nsite={realm_url}\n", created.owner.api_key))?;
    Ok(Some(Bootstrapped {
        realm_url,
        email,
        user_id: created.owner.user_id,
        api_key: created.owner.api_key,
        zuliprc,
        password_file,
    }))
}
