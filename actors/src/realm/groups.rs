//! User groups (spec 2.1, 2.13, 4.17, 4.18): the group-setting value type, group
//! operations, their messages and the realm actor's handlers for them.
