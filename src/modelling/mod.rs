//! Modelling: dynamical systems, relations, nonsmooth laws and the
//! interactions that tie them together into an immutable [`Model`].
//!
//! ```
//! use nalgebra::{dmatrix, dvector};
//! use nonsmooth::modelling::*;
//!
//! // A ball of mass 1 above the floor: y = q[0] − 0.1, Newton impact e = 0.9.
//! let mut b = ModelBuilder::new();
//! let ball = b
//!     .add_system(
//!         "ball",
//!         LagrangianLinearTi::new(dvector![1.0], dvector![0.0], dmatrix![1.0])
//!             .with_fext(TimeVector::Constant(dvector![-9.81])),
//!     )
//!     .unwrap();
//! b.add_interaction(
//!     "floor",
//!     &[ball],
//!     LagrangianLinearTiR::new(dmatrix![1.0]).with_b(dvector![-0.1]),
//!     NonsmoothLaw::NewtonImpact { size: 1, restitution: 0.9 },
//! )
//! .unwrap();
//! let model = b.build();
//! assert_eq!(model.interactions().len(), 1);
//! ```

pub mod dynamical_system;
pub mod error;
pub mod functions;
pub mod law;
pub mod model;
pub mod models;
pub mod relation;

pub use dynamical_system::{
    DynamicalSystem, FirstOrderLinear, FirstOrderNonlinear, LagrangianLinearTi,
    LagrangianNonlinear, Mass,
};
pub use error::ModelError;
pub use functions::{TimeMatrix, TimeVector};
pub use law::NonsmoothLaw;
pub use model::{Interaction, InteractionId, Model, ModelBuilder, System, SystemId};
pub use relation::{
    FirstOrderLinearTi, FirstOrderNonlinearR, LagrangianLinearTiR, LagrangianScleronomous, Relation,
};
