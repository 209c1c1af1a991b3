//! User administration (spec 4.13-4.16): updating, deactivating and reactivating
//! accounts, planned from the state (no I/O), written, then applied with their events.
//!
//! Every plan checks its target as Zulip's `access_user_by_id` does (`access`) and
//! validates the whole request before anything is written.

pub mod access;
pub mod first_login;
pub mod status;
pub mod update;

pub use access::{access_user, is_last_owner, Access, UserRef};
pub use first_login::{plan_first_login, FirstLogin};
pub use status::{
    plan_deactivate, plan_deactivate_own, plan_reactivate, plan_set_active, set_active, AccountStatus,
    DeactivationActions,
};
pub use update::{checked_full_name, plan_deleted_profile, plan_role, plan_update, UserEdit, UserUpdate};
