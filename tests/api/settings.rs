//! Personal settings and organization defaults over HTTP.
