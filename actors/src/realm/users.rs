//! User administration (spec 4.13-4.16): listing, updating, deactivating and reactivating
//! accounts; operations, messages and handlers.
