//! Personal settings (`PATCH /settings`) and the organization's defaults for new users
//! (`PATCH /realm/user_settings_defaults`): operations, messages and handlers.
