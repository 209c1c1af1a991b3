//! Custom profile fields (spec 2.12, 4.11) and users' values of them: operations, their
//! messages and the realm actor's handlers for them.
