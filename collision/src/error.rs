//! Errors of contact detection.

use thiserror::Error;

/// What went wrong in building shapes or detecting contacts.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CollisionError {
    /// A shape's parameters are invalid.
    #[error("shape of body {body}: {reason}")]
    InvalidShape {
        /// Index of the body.
        body: usize,
        /// What is wrong.
        reason: String,
    },
    /// The bodies' states and the colliders do not match.
    #[error("{colliders} colliders but {states} body states")]
    SizeMismatch {
        /// Number of colliders.
        colliders: usize,
        /// Number of states.
        states: usize,
    },
    /// A setting is out of range.
    #[error("invalid setting {name}: {reason}")]
    InvalidSetting {
        /// The setting.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// parry3d has no contact query for this pair of shapes.
    #[error("no contact query between the shapes of bodies {body1} and {body2} ({kinds})")]
    Unsupported {
        /// First body.
        body1: usize,
        /// Second body.
        body2: usize,
        /// The two shape kinds.
        kinds: String,
    },
    /// A mesh file cannot be read or holds no valid triangle mesh.
    #[error("mesh file {}: {reason}", path.display())]
    MeshFile {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// Result of contact detection.
pub type Result<T> = std::result::Result<T, CollisionError>;
