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

        impl From<$name> for serde_json::Value {
            fn from(id: $name) -> Self {
                serde_json::Value::from(id.0)
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
id_type!(
    /// A message (channel or direct), unique across all realms.
    MessageId
);

/// `ids` without repeats, in first-occurrence order (a list a client sent may name the same
/// id many times; Zulip collapses such lists with sets). A list already strictly
/// increasing, as lists built from sets are, is returned after one cheap check.
pub fn distinct<T: Copy + Ord + std::hash::Hash>(mut ids: Vec<T>) -> Vec<T> {
    if ids.windows(2).all(|pair| pair[0] < pair[1]) {
        return ids;
    }
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    ids.retain(|id| seen.insert(*id));
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_keeps_the_first_of_each() {
        assert_eq!(distinct(vec![3, 1, 3, 2, 1, 3]), vec![3, 1, 2]);
        assert_eq!(distinct(vec![UserId(1), UserId(2), UserId(5)]), vec![UserId(1), UserId(2), UserId(5)]);
        assert_eq!(distinct(vec![7; 60_000]), vec![7]);
        assert_eq!(distinct(Vec::<i64>::new()), Vec::<i64>::new());
    }
}
