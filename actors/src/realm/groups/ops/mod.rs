//! User group changes: each is planned from the state with Zulip's checks and messages (no
//! I/O), written by the store in one transaction, then applied with its events.

pub mod access;
pub mod create;
pub mod deactivate;
pub mod membership;
pub mod update;

pub use access::{check_group_name, MAX_GROUP_NAME_LENGTH};
pub use create::{create_group, plan_create, GroupCreation, NewGroup};
pub use deactivate::{channel_setting_objections, deactivation_objections, plan_deactivate, GroupDeactivation};
pub use membership::{plan_membership, MembershipChange, MembershipEdit, MembershipEndpoint};
pub use update::{plan_update, GroupEdit, GroupUpdate};
