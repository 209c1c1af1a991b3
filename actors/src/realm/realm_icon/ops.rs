//! Changing the organization's icon, planned from the state, written, applied.

use rusqlite::Transaction;
use serde_json::json;

use crate::error::ApiResult;
use crate::events::Event;
use crate::ids::UserId;
use crate::realm::model::Realm;
use crate::realm::permissions::require_admin;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::server_info::{realm_icon_source, realm_icon_url};
use crate::store;

/// Zulip's `MAX_ICON_FILE_SIZE_MIB`.
pub use crate::realm::catalog::MAX_ICON_FILE_SIZE_MIB;

/// Only administrators change the icon (Zulip's `require_realm_admin`).
pub fn check_may_change(state: &RealmState, user_id: UserId) -> ApiResult<()> {
    require_admin(state.user_or_err(user_id)?.role)
}

/// A planned icon change.
#[derive(Debug)]
pub struct IconChange {
    realm: Realm,
}

/// Plans an uploaded icon (`uploaded`) or the default one: the source (`U` or `G`) and a
/// new version, kept in the organization's settings.
pub fn plan_change(state: &RealmState, user_id: UserId, uploaded: bool) -> ApiResult<IconChange> {
    check_may_change(state, user_id)?;
    let mut realm = state.realm().clone();
    let version = realm.settings.get("icon_version").and_then(|v| v.as_i64()).unwrap_or(1);
    realm.settings.insert("icon_source".into(), json!(if uploaded { "U" } else { "G" }));
    realm.settings.insert("icon_version".into(), json!(version + 1));
    Ok(IconChange { realm })
}

impl Change for IconChange {
    type Output = String;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        store::realms::save_settings(tx, &self.realm)?;
        Ok(())
    }

    /// The new `icon_url`; `realm` `update_dict` `icon` to everyone.
    fn apply(self, state: &mut RealmState) -> Applied<String> {
        state.set_realm(self.realm);
        let url = realm_icon_url(state);
        let data = json!({"icon_url": url, "icon_source": realm_icon_source(state)});
        let event = Event::new("realm", json!({"op": "update_dict", "property": "icon", "data": data}));
        Applied::new(url, vec![state.to_everyone(event)])
    }
}
