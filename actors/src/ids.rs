//! Identifier newtypes, so a user id is never passed where a realm id is wanted.

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl rusqlite::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                self.0.to_sql()
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
                i64::column_result(value).map($name)
            }
        }
    };
}

id_type!(
    /// An organization.
    RealmId
);
id_type!(
    /// A user account (human or bot), unique across all realms.
    UserId
);
id_type!(
    /// A user group, system groups included.
    GroupId
);
id_type!(
    /// A custom profile field.
    FieldId
);
id_type!(
    /// A channel (Zulip's stream).
    ChannelId
);
id_type!(
    /// A channel folder.
    FolderId
);
