//! Renders a [`Profile`](crate::profile::Profile) in the formats people know.
