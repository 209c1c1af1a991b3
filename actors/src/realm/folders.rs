//! Channel folders (spec 2.14, 4.8).
