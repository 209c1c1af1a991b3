//! Fetching messages: `GET /messages` with anchors and narrows, `GET /messages/{id}`, `GET /messages/matches_narrow`.
