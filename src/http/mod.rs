//! The HTTP layer: gates, extractors, parameter decoding, envelopes and routes. Handlers
//! here only authenticate, decode parameters, send one message and render the reply.

pub mod access;
pub mod assets;
pub mod auth;
pub mod body;
pub mod compress;
pub mod decode;
pub mod files;
pub mod gate;
pub mod guard;
pub mod hashing;
pub mod pages;
pub mod params;
pub mod ratelimit;
pub mod response;
pub mod routes;
pub mod session;
pub mod state;
pub mod upload_body;
