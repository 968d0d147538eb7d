//! Shapes carried by bodies, built as parry3d shapes.
//!
//! A [`ShapeDesc`] is plain data (what a scenario file describes); its
//! [`ShapeDesc::build`] gives the parry3d `SharedShape` the detector uses,
//! and [`ShapeDesc::mass_properties`] the mass, centre of mass and inertia
//! of the solid for a density (parry3d's formulas: m = ρ V,
//! I = ∫ρ (|r|² I₃ − r rᵀ) dV about the centre of mass).
//!
//! Axes follow parry3d: capsules and cylinders lie along the shape's y axis,
//! a height field spans the x–z plane with heights along y; a collider's
//! local pose (see `Collider`) turns them as needed.

use nalgebra::{DMatrix, Matrix3, Point3, Unit, Vector3};
use parry3d_f64::shape::{HeightFieldFlags, SharedShape, TriMeshFlags};

use crate::error::{CollisionError, Result};

/// A shape, as data.
#[derive(Debug, Clone, PartialEq)]
pub enum ShapeDesc {
    /// A ball of radius r.
    Sphere {
        /// Radius.
        radius: f64,
    },
    /// A box with half extents (a, b, c) along the shape's axes.
    Cuboid {
        /// Half extents.
        half_extents: Vector3<f64>,
    },
    /// A capsule: a segment of half length `half_height` along y, swept by
    /// a ball of radius `radius`.
    Capsule {
        /// Half length of the segment.
        half_height: f64,
        /// Radius.
        radius: f64,
    },
    /// A cylinder along y.
    Cylinder {
        /// Half height.
        half_height: f64,
        /// Radius.
        radius: f64,
    },
    /// The convex hull of points.
    ConvexHull {
        /// The points (shape frame).
        points: Vec<Point3<f64>>,
    },
    /// The half-space {x : n·x ≤ 0} of outward normal n (for fixed bodies).
    HalfSpace {
        /// Outward normal.
        normal: Vector3<f64>,
    },
    /// A triangle mesh (for fixed bodies), built with parry3d's
    /// internal-edge fix so that bodies do not catch on the edges between
    /// triangles.
    TriMesh {
        /// Vertices.
        vertices: Vec<Point3<f64>>,
        /// Triangles, counter-clockwise seen from outside.
        triangles: Vec<[u32; 3]>,
    },
    /// A height field on the x–z plane (for fixed bodies), heights along y,
    /// `heights[(i, j)]` at row i (along z) and column j (along x), spread
    /// over `scale.x` × `scale.z`, heights multiplied by `scale.y`; with the
    /// internal-edge fix.
    HeightField {
        /// Heights.
        heights: DMatrix<f64>,
        /// Scale along x, y, z.
        scale: Vector3<f64>,
    },
}

/// Mass, centre of mass and inertia about it, in the shape frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MassProperties {
    /// Mass.
    pub mass: f64,
    /// Centre of mass, shape frame.
    pub center: Vector3<f64>,
    /// Inertia about the centre of mass, shape frame.
    pub inertia: Matrix3<f64>,
}

impl ShapeDesc {
    /// The kind's name (for messages).
    pub fn kind(&self) -> &'static str {
        match self {
            ShapeDesc::Sphere { .. } => "sphere",
            ShapeDesc::Cuboid { .. } => "box",
            ShapeDesc::Capsule { .. } => "capsule",
            ShapeDesc::Cylinder { .. } => "cylinder",
            ShapeDesc::ConvexHull { .. } => "convex hull",
            ShapeDesc::HalfSpace { .. } => "half-space",
            ShapeDesc::TriMesh { .. } => "triangle mesh",
            ShapeDesc::HeightField { .. } => "height field",
        }
    }

    /// Whether the shape bounds a finite solid (a free body may carry it).
    pub fn is_solid(&self) -> bool {
        matches!(
            self,
            ShapeDesc::Sphere { .. }
                | ShapeDesc::Cuboid { .. }
                | ShapeDesc::Capsule { .. }
                | ShapeDesc::Cylinder { .. }
                | ShapeDesc::ConvexHull { .. }
        )
    }

    /// Builds the parry3d shape (body index `body` for messages).
    pub fn build(&self, body: usize) -> Result<SharedShape> {
        let bad = |reason: String| CollisionError::InvalidShape { body, reason };
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(bad(format!("{name} must be finite and > 0, got {v}")))
            }
        };
        Ok(match self {
            ShapeDesc::Sphere { radius } => {
                positive("radius", *radius)?;
                SharedShape::ball(*radius)
            }
            ShapeDesc::Cuboid { half_extents: e } => {
                for (k, v) in e.iter().enumerate() {
                    positive(["half extent x", "half extent y", "half extent z"][k], *v)?;
                }
                SharedShape::cuboid(e.x, e.y, e.z)
            }
            ShapeDesc::Capsule {
                half_height,
                radius,
            } => {
                positive("radius", *radius)?;
                positive("half height", *half_height)?;
                SharedShape::capsule_y(*half_height, *radius)
            }
            ShapeDesc::Cylinder {
                half_height,
                radius,
            } => {
                positive("radius", *radius)?;
                positive("half height", *half_height)?;
                SharedShape::cylinder(*half_height, *radius)
            }
            ShapeDesc::ConvexHull { points } => {
                if points.iter().any(|p| p.iter().any(|v| !v.is_finite())) {
                    return Err(bad("convex hull point is not finite".into()));
                }
                let degenerate = || {
                    bad(format!(
                        "the convex hull of {} points is degenerate (flat or too few points)",
                        points.len()
                    ))
                };
                let hull = SharedShape::convex_hull(points).ok_or_else(degenerate)?;
                // A flat hull encloses no volume.
                let volume = hull.mass_properties(1.0).mass();
                if volume.is_nan() || volume <= 0.0 {
                    return Err(degenerate());
                }
                hull
            }
            ShapeDesc::HalfSpace { normal } => {
                let n = normal.norm();
                if !(n.is_finite() && n > 0.0) {
                    return Err(bad(format!(
                        "half-space normal must be non-zero, got {normal:?}"
                    )));
                }
                SharedShape::halfspace(Unit::new_normalize(*normal))
            }
            ShapeDesc::TriMesh {
                vertices,
                triangles,
            } => {
                if vertices.iter().any(|p| p.iter().any(|v| !v.is_finite())) {
                    return Err(bad("mesh vertex is not finite".into()));
                }
                if let Some(t) = triangles
                    .iter()
                    .position(|t| t.iter().any(|i| *i as usize >= vertices.len()))
                {
                    return Err(bad(format!(
                        "triangle {t} names a vertex beyond the {} vertices",
                        vertices.len()
                    )));
                }
                SharedShape::trimesh_with_flags(
                    vertices.clone(),
                    triangles.clone(),
                    TriMeshFlags::FIX_INTERNAL_EDGES,
                )
                .map_err(|e| bad(format!("triangle mesh: {e}")))?
            }
            ShapeDesc::HeightField { heights, scale } => {
                if heights.nrows() < 2 || heights.ncols() < 2 {
                    return Err(bad("a height field needs at least 2 × 2 heights".into()));
                }
                if heights.iter().any(|v| !v.is_finite()) {
                    return Err(bad("height is not finite".into()));
                }
                for (k, v) in scale.iter().enumerate() {
                    positive(["scale x", "scale y", "scale z"][k], *v)?;
                }
                SharedShape::heightfield_with_flags(
                    heights.clone(),
                    *scale,
                    HeightFieldFlags::FIX_INTERNAL_EDGES,
                )
            }
        })
    }

    /// Mass properties of the solid of density ρ (None for half-spaces,
    /// meshes and height fields, which carry no mass).
    pub fn mass_properties(&self, density: f64, body: usize) -> Result<Option<MassProperties>> {
        if !(density.is_finite() && density > 0.0) {
            return Err(CollisionError::InvalidShape {
                body,
                reason: format!("density must be finite and > 0, got {density}"),
            });
        }
        if !self.is_solid() {
            return Ok(None);
        }
        let mp = self.build(body)?.mass_properties(density);
        Ok(Some(MassProperties {
            mass: mp.mass(),
            center: mp.local_com.coords,
            inertia: mp.reconstruct_inertia_matrix(),
        }))
    }
}
