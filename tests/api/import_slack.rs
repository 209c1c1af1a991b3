//! `agora import slack`: tests (to come).
