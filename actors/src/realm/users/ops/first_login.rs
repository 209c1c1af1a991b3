//! A user's first login (FL 433, 475): an imported stub becomes an ordinary account, and
//! imported stubs and accounts created through `POST /users` take the login's time as
//! `date_joined`.

use rusqlite::Transaction;
use serde_json::json;

use crate::error::ApiResult;
use crate::ids::UserId;
use crate::realm::events::realm_user_update;
use crate::realm::format::format_date_joined;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// The first login of an account waiting for it.
#[derive(Debug, Clone)]
pub struct FirstLogin {
    user: UserId,
    was_stub: bool,
    date_joined: i64,
}

/// Plans the login of `user` at `now`: `None` unless the account waits for its first one.
pub fn plan_first_login(state: &RealmState, user: UserId, now: i64) -> Option<FirstLogin> {
    let user = state.user(user).filter(|u| u.first_login_pending || u.is_imported_stub)?;
    Some(FirstLogin { user: user.id, was_stub: user.is_imported_stub, date_joined: now })
}

impl Change for FirstLogin {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        Ok(store::users::set_first_login(tx, self.user, self.date_joined)?)
    }

    /// `realm_user` `update` events to everyone: `is_imported_stub: false` for a stub (FL
    /// 433), then the new `date_joined` (FL 475).
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let mut events = Vec::with_capacity(2);
        if let Some(user) = state.user_mut(self.user) {
            user.is_imported_stub = false;
            user.first_login_pending = false;
            user.date_joined = self.date_joined;
        }
        if self.was_stub {
            events.push(state.to_everyone(realm_user_update(json!({"user_id": self.user, "is_imported_stub": false}))));
        }
        let date_joined = format_date_joined(self.date_joined);
        events.push(state.to_everyone(realm_user_update(json!({"user_id": self.user, "date_joined": date_joined}))));
        Applied::events(events)
    }
}
