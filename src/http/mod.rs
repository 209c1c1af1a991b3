//! The HTTP layer: extractors, parameter decoding, envelopes and routes. Handlers here only
//! authenticate, decode parameters, send one message and render the reply.

pub mod auth;
pub mod decode;
pub mod params;
pub mod response;
pub mod routes;
pub mod state;
