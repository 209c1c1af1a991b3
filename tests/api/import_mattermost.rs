//! `agora import mattermost`: tests (to come).
