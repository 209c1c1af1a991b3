//! `users.json` to people, as Zulip's Slack converter maps them: roles, names, addresses,
//! bots, deactivated members; and the integration bots that only messages name.

use std::collections::{HashMap, HashSet};

use agora_actors::realm::model::Role;
use agora_actors::transfer::model::Person;
use agora_actors::transfer::ImportError;

use super::tables::User;

/// Slack's own bot, present in every workspace.
pub const SLACKBOT: &str = "USLACKBOT";

/// Who is who: Slack ids to the ids the import gives people.
#[derive(Debug, Default)]
pub struct People {
    pub persons: Vec<Person>,
    /// Slack user id -> person id (members sharing an address share one person).
    by_slack: HashMap<String, i64>,
    /// Slack bot id (`B…`) -> person id.
    bots: HashMap<String, i64>,
    /// Addresses in use, lowercased, with their person.
    emails: HashMap<String, i64>,
    /// For addresses made up: the workspace's id.
    team: String,
}

impl People {
    /// Reads `users.json`.
    pub fn new(users: &[User]) -> Result<People, ImportError> {
        let mut people = People {
            team: users.iter().find_map(|u| u.team_id.clone()).unwrap_or_else(|| "workspace".into()).to_lowercase(),
            ..Default::default()
        };
        let mut seen = HashSet::new();
        for user in users {
            if !seen.insert(user.id.as_str()) {
                return Err(ImportError::at("users.json", format!("user {} is there twice", user.id)));
            }
            people.add(user)?;
        }
        Ok(people)
    }

    /// The person a Slack user id names.
    pub fn user(&self, slack_id: &str) -> Option<i64> {
        self.by_slack.get(slack_id).copied()
    }

    /// The person a Slack bot id names.
    pub fn bot(&self, bot_id: &str) -> Option<i64> {
        self.bots.get(bot_id).copied()
    }

    /// A person's full name.
    pub fn full_name(&self, id: i64) -> &str {
        // Ids are dense from 1, in the order of `persons`.
        usize::try_from(id - 1).ok().and_then(|i| self.persons.get(i)).map(|p| p.full_name.as_str()).unwrap_or_default()
    }

    fn add(&mut self, user: &User) -> Result<(), ImportError> {
        let profile = user.profile.clone().unwrap_or_default();
        let name = user.name.clone().unwrap_or_default();
        let deleted = user.deleted.unwrap_or(false);
        // Zulip's `get_user_full_name`: a deleted member keeps only their handle.
        let full_name = if deleted {
            name.clone()
        } else {
            user.real_name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(|| name.clone())
        };
        let full_name = if full_name.trim().is_empty() { user.id.clone() } else { full_name };
        let is_bot = user.is_bot.unwrap_or(false) || user.id == SLACKBOT || full_name == "slackbot";
        let flag = |f: Option<bool>| f.unwrap_or(false);
        // Zulip's order: owners, then administrators; a guest is a guest whatever else.
        let role = if flag(user.is_restricted) || flag(user.is_ultra_restricted) {
            Role::Guest
        } else if flag(user.is_owner) || flag(user.is_primary_owner) {
            Role::Owner
        } else if flag(user.is_admin) {
            Role::Administrator
        } else {
            Role::Member
        };
        let email = match profile.email.as_deref().map(str::trim).filter(|e| !e.is_empty()) {
            Some(email) => email.to_owned(),
            None => match &profile.bot_id {
                Some(_) => {
                    let bot_name = profile
                        .real_name_normalized
                        .clone()
                        .filter(|n| !n.is_empty())
                        .or_else(|| profile.first_name.clone())
                        .unwrap_or_else(|| full_name.clone());
                    self.bot_email(&bot_name, &user.id)
                }
                None if full_name == "slackbot" || user.id == SLACKBOT => {
                    self.unique(&format!("imported-slackbot-bot@{}", self.domain()))
                }
                None => self.unique(&format!("{}@{}", local_part(&name, &user.id), self.domain())),
            },
        };
        if !agora_actors::validate::is_valid_email(&email) {
            return Err(ImportError::at(
                "users.json",
                format!("user {} ({full_name}): {email:?} is not a valid email address", user.id),
            ));
        }
        // Zulip merges members who share an address into one account.
        if let Some(first) = self.emails.get(&email.to_lowercase()).copied() {
            self.by_slack.insert(user.id.clone(), first);
            if let Some(bot_id) = &profile.bot_id {
                self.bots.insert(bot_id.clone(), first);
            }
            return Ok(());
        }
        let id = self.persons.len() as i64 + 1;
        let timezone = user.tz.clone().filter(|tz| tz.contains('/')).unwrap_or_default();
        self.persons.push(Person {
            is_active: !deleted,
            bot_type: is_bot.then_some(1),
            // Zulip's converter makes every member a stub (FL 433) until they log in; bots
            // never log in.
            is_imported_stub: !is_bot,
            timezone,
            ..Person::new(id, email.clone(), full_name, role)
        });
        self.emails.insert(email.to_lowercase(), id);
        self.by_slack.insert(user.id.clone(), id);
        if let Some(bot_id) = profile.bot_id {
            self.bots.insert(bot_id, id);
        }
        Ok(())
    }

    /// An integration bot that `users.json` does not list (its messages name it by `bot_id`
    /// only): a bot of its own, named as its messages name it.
    pub fn add_integration_bot(&mut self, bot_id: &str, name: Option<&str>) {
        if self.bots.contains_key(bot_id) {
            return;
        }
        let full_name =
            name.map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned).unwrap_or_else(|| format!("Bot {bot_id}"));
        let email = self.bot_email(&full_name, bot_id);
        let id = self.persons.len() as i64 + 1;
        self.persons.push(Person::bot(id, email.clone(), full_name));
        self.emails.insert(email.to_lowercase(), id);
        self.bots.insert(bot_id.to_owned(), id);
    }

    /// Slackbot, when messages name it and `users.json` does not list it.
    pub fn add_slackbot(&mut self) {
        if self.by_slack.contains_key(SLACKBOT) {
            return;
        }
        let email = self.unique(&format!("imported-slackbot-bot@{}", self.domain()));
        let id = self.persons.len() as i64 + 1;
        self.persons.push(Person::bot(id, email.clone(), "slackbot".into()));
        self.emails.insert(email.to_lowercase(), id);
        self.by_slack.insert(SLACKBOT.into(), id);
    }

    /// The domain of made-up addresses. Zulip uses the workspace's `team_domain` (which the
    /// export does not hold) for people and the server's host for bots (which the reader
    /// does not know): the workspace's id stands in for both.
    fn domain(&self) -> String {
        let team: String = self.team.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
        format!("{}.slack.com", if team.is_empty() { "workspace" } else { &team })
    }

    /// Zulip's `SlackBotEmail`: the bot's name without "Bot" and spaces, lowercased, with
    /// `-bot`; `-2`, `-3` ... when taken.
    fn bot_email(&self, name: &str, fallback: &str) -> String {
        let stem = name.replace("Bot", "").replace(' ', "").to_lowercase();
        self.unique(&format!("{}-bot@{}", local_part(&stem, fallback), self.domain()))
    }

    /// `address`, or with `-2`, `-3` ... before the `@` when it is taken.
    fn unique(&self, address: &str) -> String {
        let (local, domain) = address.split_once('@').unwrap_or((address, ""));
        let mut candidate = address.to_owned();
        let mut n = 1;
        while self.emails.contains_key(&candidate.to_lowercase()) {
            n += 1;
            candidate = format!("{local}-{n}@{domain}");
        }
        candidate
    }
}

/// `name` as the part of an address before the `@` (characters an address cannot hold
/// dropped); `fallback`, lowercased, when nothing is left.
fn local_part(name: &str, fallback: &str) -> String {
    let kept: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
        .collect::<String>()
        .trim_matches('.')
        .replace("..", ".");
    if kept.is_empty() {
        fallback.to_lowercase()
    } else {
        kept
    }
}
