//! Applying a manifest to a machine (to come).
