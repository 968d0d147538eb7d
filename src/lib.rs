//! nonsmooth: modelling, simulation and control of nonsmooth dynamical
//! systems — mechanical systems with impacts and friction, circuits with ideal
//! diodes and switches, sliding-mode and switching controllers.
//!
//! Layers, each using only those below it: [`numerics`] (one-step
//! complementarity, relay and QP solvers) → modelling → simulation → control →
//! scenario files (crate `nonsmooth-scenario`) → command-line tool, FMI
//! export; [`io`] holds file formats (Siconos text problems, CSV).

// Numerical kernels index several arrays with one loop variable, mirroring the
// equations in their doc comments; iterator rewrites would obscure them.
#![allow(clippy::needless_range_loop)]
#![forbid(unsafe_code)]

pub mod circuits;
pub mod control;
pub mod io;
pub mod modelling;
pub mod numerics;
pub mod rigid;
pub mod simulation;
