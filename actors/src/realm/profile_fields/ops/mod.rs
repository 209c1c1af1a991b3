//! Changes of the custom profile fields (`fields`) and of users' values of them
//! (`values`): planned from the state (no I/O), written, then applied with their events.

pub mod fields;
pub mod values;

pub use fields::{
    create_field, plan_create, plan_delete, plan_reorder, plan_update, FieldChanges, FieldCreation, FieldDeletion,
    FieldEdit, FieldOrder, NewField, MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS,
};
pub use values::{
    apply_profile_data, plan_own_removal, plan_own_values, validate_profile_data, validate_profile_removal,
    ProfileDataChange, ProfileDataWrites,
};
