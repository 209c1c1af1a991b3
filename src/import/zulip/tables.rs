//! The rows of Zulip's export format that an import reads (`realm.json`, `attachment.json`,
//! `messages-NNNNNN.json`, `records.json`), with Zulip's field names. Unknown tables and
//! fields are skipped; datetimes are float UNIX timestamps.

use serde::Deserialize;
use serde_json::{Map, Value};

/// A datetime as Zulip exports it (seconds, a float), in whole seconds.
pub fn seconds(value: Option<f64>) -> i64 {
    value.map(|v| v.floor() as i64).unwrap_or(0)
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct RealmJson {
    pub zerver_realm: Vec<Map<String, Value>>,
    pub zerver_realmuserdefault: Vec<Map<String, Value>>,
    pub zerver_userprofile: Vec<Map<String, Value>>,
    pub zerver_userprofile_mirrordummy: Vec<Map<String, Value>>,
    pub zerver_userprofile_crossrealm: Vec<CrossRealmBot>,
    pub zerver_service: Vec<Service>,
    pub zerver_stream: Vec<Map<String, Value>>,
    pub zerver_recipient: Vec<Recipient>,
    pub zerver_subscription: Vec<Subscription>,
    pub zerver_namedusergroup: Vec<Map<String, Value>>,
    pub zerver_usergroupmembership: Vec<GroupMembership>,
    pub zerver_groupgroupmembership: Vec<SubgroupMembership>,
    pub zerver_customprofilefield: Vec<ProfileField>,
    pub zerver_customprofilefieldvalue: Vec<ProfileFieldValue>,
    pub zerver_defaultstream: Vec<DefaultStream>,
    pub zerver_realmemoji: Vec<RealmEmoji>,
    pub zerver_realmfilter: Vec<Linkifier>,
    pub zerver_realmplayground: Vec<Playground>,
    pub zerver_reaction: Vec<Reaction>,
    pub zerver_usertopic: Vec<UserTopic>,
    pub zerver_channelfolder: Vec<Folder>,
    pub zerver_client: Vec<Client>,
}

#[derive(Debug, Deserialize)]
pub struct CrossRealmBot {
    pub id: i64,
    pub email: String,
}

#[derive(Debug, Deserialize)]
pub struct Service {
    pub user_profile: i64,
    #[serde(default)]
    pub base_url: String,
    #[serde(default)]
    pub token: String,
    #[serde(default = "one")]
    pub interface: i64,
}

fn one() -> i64 {
    1
}

#[derive(Debug, Deserialize)]
pub struct Recipient {
    pub id: i64,
    /// 1 a user, 2 a channel, 3 a group of users.
    #[serde(rename = "type")]
    pub kind: i64,
    pub type_id: i64,
}

#[derive(Debug, Deserialize)]
pub struct Subscription {
    pub user_profile: i64,
    pub recipient: i64,
    #[serde(default = "yes")]
    pub active: bool,
    #[serde(default)]
    pub color: Option<String>,
    #[serde(default)]
    pub is_muted: bool,
    #[serde(default)]
    pub pin_to_top: bool,
    #[serde(default)]
    pub desktop_notifications: Option<bool>,
    #[serde(default)]
    pub audible_notifications: Option<bool>,
    #[serde(default)]
    pub push_notifications: Option<bool>,
    #[serde(default)]
    pub email_notifications: Option<bool>,
    #[serde(default)]
    pub wildcard_mentions_notify: Option<bool>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
pub struct GroupMembership {
    pub user_group: i64,
    pub user_profile: i64,
}

#[derive(Debug, Deserialize)]
pub struct SubgroupMembership {
    pub supergroup: i64,
    pub subgroup: i64,
}

#[derive(Debug, Deserialize)]
pub struct ProfileField {
    pub id: i64,
    pub name: String,
    #[serde(default)]
    pub hint: String,
    #[serde(default)]
    pub order: i64,
    pub field_type: i64,
    #[serde(default)]
    pub field_data: String,
    #[serde(default)]
    pub display_in_profile_summary: bool,
    #[serde(default)]
    pub required: bool,
    #[serde(default = "yes")]
    pub editable_by_user: bool,
    /// FL 455.
    #[serde(default)]
    pub use_for_user_matching: bool,
}

#[derive(Debug, Deserialize)]
pub struct ProfileFieldValue {
    pub user_profile: i64,
    pub field: i64,
    pub value: String,
}

#[derive(Debug, Deserialize)]
pub struct DefaultStream {
    pub stream: i64,
}

#[derive(Debug, Deserialize)]
pub struct RealmEmoji {
    pub id: i64,
    pub name: String,
    #[serde(default)]
    pub file_name: Option<String>,
    #[serde(default)]
    pub author: Option<i64>,
    #[serde(default)]
    pub deactivated: bool,
    #[serde(default)]
    pub is_animated: bool,
}

#[derive(Debug, Deserialize)]
pub struct Linkifier {
    pub pattern: String,
    pub url_template: String,
    #[serde(default)]
    pub order: i64,
    /// Zulip 12 (FL 471, 478); absent from older exports.
    #[serde(default)]
    pub example_input: Option<String>,
    #[serde(default)]
    pub reverse_template: Option<String>,
    #[serde(default)]
    pub alternative_url_templates: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct Playground {
    pub name: String,
    pub pygments_language: String,
    pub url_template: String,
}

#[derive(Debug, Deserialize)]
pub struct Reaction {
    pub message: i64,
    pub user_profile: i64,
    pub emoji_name: String,
    pub emoji_code: String,
    pub reaction_type: String,
}

#[derive(Debug, Deserialize)]
pub struct UserTopic {
    pub user_profile: i64,
    pub stream: i64,
    pub topic_name: String,
    pub visibility_policy: i64,
    #[serde(default)]
    pub last_updated: Option<f64>,
}

#[derive(Debug, Deserialize)]
pub struct Folder {
    pub id: i64,
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub order: i64,
    #[serde(default)]
    pub date_created: Option<f64>,
    #[serde(default)]
    pub creator: Option<i64>,
    #[serde(default)]
    pub is_archived: bool,
}

#[derive(Debug, Deserialize)]
pub struct Client {
    pub id: i64,
    pub name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct AttachmentJson {
    pub zerver_attachment: Vec<Attachment>,
}

#[derive(Debug, Deserialize)]
pub struct Attachment {
    pub id: i64,
    pub file_name: String,
    pub path_id: String,
    pub owner: i64,
    #[serde(default)]
    pub create_time: Option<f64>,
    #[serde(default)]
    pub size: i64,
    #[serde(default)]
    pub content_type: Option<String>,
    #[serde(default)]
    pub messages: Vec<i64>,
}

/// One entry of a `records.json`: where a file is in the export, and whose it is.
#[derive(Debug, Deserialize)]
pub struct Record {
    pub path: String,
    #[serde(default)]
    pub s3_path: Option<String>,
    #[serde(default)]
    pub user_profile_id: Option<i64>,
    #[serde(default)]
    pub file_name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MessagesJson {
    pub zerver_message: Vec<Message>,
    pub zerver_usermessage: Vec<UserMessage>,
}

#[derive(Debug, Deserialize)]
pub struct Message {
    pub id: i64,
    pub sender: i64,
    pub recipient: i64,
    #[serde(default)]
    pub subject: String,
    pub content: String,
    #[serde(default)]
    pub rendered_content: Option<String>,
    pub date_sent: f64,
    #[serde(default)]
    pub sending_client: Option<i64>,
    #[serde(default)]
    pub last_edit_time: Option<f64>,
    #[serde(default)]
    pub edit_history: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct UserMessage {
    pub user_profile: i64,
    pub message: i64,
    pub flags_mask: i64,
}

#[derive(Debug, Deserialize)]
pub struct MigrationStatus {
    #[serde(default)]
    pub zulip_version: Option<String>,
}
