//! Personal channel and topic settings: subscription properties (spec 4.3), muted topics
//! (4.4), topic visibility policies (4.5) and the topics of a channel (4.6).
