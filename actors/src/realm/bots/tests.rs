//! Unit tests of the bot plans.
