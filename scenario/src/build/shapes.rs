//! Shapes of `[[bodies]]` entries (docs/rigid-scenarios.md): the keys of
//! each `type`, checked and turned into a [`ShapeDesc`] with its pose in
//! the body frame.
//!
//! Capsules, cylinders and height fields lie along parry3d's y axis; a
//! quarter turn about x puts them along the shape's z axis. Height fields
//! and grid meshes sample z = f(x, y) at x_j = −lx/2 + lx j/(nx − 1),
//! y_i = −ly/2 + ly i/(ny − 1); a mesh from a file is read relative to the
//! scenario file's folder (Wavefront OBJ or STL).

use std::f64::consts::FRAC_PI_2;
use std::path::Path;

use nalgebra::{DMatrix, Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use nonsmooth_collision::{grid_mesh, read_mesh_file, ShapeDesc};

use super::bodies::{invalid, opt_vec3, positive, vec3};
use crate::error::{Result, ScenarioError};
use crate::schema::{SVec, ShapeEntry};
use crate::values::Ctx;

/// Rotation by a rotation vector (axis × angle).
pub(super) fn rotation(ctx: Ctx<'_>, v: &Option<SVec>, what: &str) -> Result<UnitQuaternion<f64>> {
    Ok(UnitQuaternion::from_scaled_axis(opt_vec3(ctx, v, what)?))
}

/// The quarter turn about x that takes parry3d's y axis (capsules,
/// cylinders, height fields) to the shape's z axis.
fn y_to_z() -> UnitQuaternion<f64> {
    UnitQuaternion::from_axis_angle(&Vector3::x_axis(), FRAC_PI_2)
}

/// One shape: its description and pose in the body frame.
pub(super) fn shape(
    ctx: Ctx<'_>,
    s: &ShapeEntry,
    span: std::ops::Range<usize>,
) -> Result<(ShapeDesc, Isometry3<f64>)> {
    let kind = s.kind.get_ref().as_str();
    let need = |v: bool, key: &str| {
        if v {
            Ok(())
        } else {
            Err(invalid(
                ctx.at(span.clone()),
                format!("a {kind} shape needs `{key}`"),
            ))
        }
    };
    let translation = opt_vec3(ctx, &s.position, "position")?;
    let rot = rotation(ctx, &s.rotation, "rotation")?;
    let mut pose = Isometry3::from_parts(Translation3::from(translation), rot);
    let kind_name = format!("a {kind} shape");
    let only = |present: &[(&str, bool)]| -> Result<()> {
        let accepted: Vec<&str> = present.iter().map(|p| p.0).collect();
        let all: [(&str, Option<std::ops::Range<usize>>); 9] = [
            ("radius", s.radius.as_ref().map(|v| v.span())),
            ("half_extents", s.half_extents.as_ref().map(|v| v.span())),
            ("half_height", s.half_height.as_ref().map(|v| v.span())),
            ("points", s.points.as_ref().map(|v| v.span())),
            ("normal", s.normal.as_ref().map(|v| v.span())),
            ("height", s.height.as_ref().map(|v| v.span())),
            ("size", s.size.as_ref().map(|v| v.span())),
            ("samples", s.samples.as_ref().map(|v| v.span())),
            ("file", s.file.as_ref().map(|v| v.span())),
        ];
        for (key, sp) in all {
            if let Some(sp) = sp {
                if !accepted.contains(&key) {
                    return Err(ScenarioError::UnknownKey {
                        at: ctx.at(sp),
                        message: format!(
                            "`{key}` does not apply to {kind_name} (its keys: {}, position, rotation, material)",
                            accepted.join(", ")
                        ),
                    });
                }
            }
        }
        for (key, ok) in present {
            need(*ok, key)?;
        }
        Ok(())
    };
    let desc = match kind {
        "sphere" => {
            only(&[("radius", s.radius.is_some())])?;
            ShapeDesc::Sphere {
                radius: positive(ctx, s.radius.as_ref().unwrap(), "radius")?,
            }
        }
        "box" => {
            only(&[("half_extents", s.half_extents.is_some())])?;
            let e = vec3(ctx, s.half_extents.as_ref().unwrap(), "half_extents")?;
            ShapeDesc::Cuboid { half_extents: e }
        }
        "capsule" | "cylinder" => {
            only(&[("radius", s.radius.is_some()), ("half_height", s.half_height.is_some())])?;
            let radius = positive(ctx, s.radius.as_ref().unwrap(), "radius")?;
            let half_height = positive(ctx, s.half_height.as_ref().unwrap(), "half_height")?;
            pose *= y_to_z();
            if kind == "capsule" {
                ShapeDesc::Capsule { half_height, radius }
            } else {
                ShapeDesc::Cylinder { half_height, radius }
            }
        }
        "convex_hull" => {
            only(&[("points", s.points.is_some())])?;
            let m = ctx.matrix(s.points.as_ref().unwrap(), "points")?;
            if m.ncols() != 3 {
                return Err(ScenarioError::Shape {
                    at: ctx.at(s.points.as_ref().unwrap().span()),
                    what: "points".into(),
                    reason: format!("expected rows of 3 coordinates, got {}", m.ncols()),
                });
            }
            ShapeDesc::ConvexHull {
                points: m
                    .row_iter()
                    .map(|r| Point3::new(r[0], r[1], r[2]))
                    .collect(),
            }
        }
        "plane" => {
            only(&[("normal", s.normal.is_some())])?;
            ShapeDesc::HalfSpace {
                normal: vec3(ctx, s.normal.as_ref().unwrap(), "normal")?,
            }
        }
        "height_field" => {
            only(&[
                ("height", s.height.is_some()),
                ("size", s.size.is_some()),
                ("samples", s.samples.is_some()),
            ])?;
            let (grid, size) = sampled_heights(ctx, s)?;
            // parry3d's field spans x and z (rows along z) with heights along
            // y; the quarter turn about x takes (x, h, z) to (x, −z, h): row
            // i lies at y = −z_i, so the rows of the grid (y increasing)
            // are taken in reverse.
            let ny = grid.nrows();
            let heights = DMatrix::from_fn(ny, grid.ncols(), |i, j| grid[(ny - 1 - i, j)]);
            pose *= y_to_z();
            ShapeDesc::HeightField {
                heights,
                scale: Vector3::new(size[0], 1.0, size[1]),
            }
        }
        "mesh" => {
            if let Some(file) = &s.file {
                only(&[("file", true)])?;
                let dir = ctx.src.path().parent().unwrap_or(Path::new(""));
                read_mesh_file(&dir.join(file.get_ref()))
                    .map_err(|e| invalid(ctx.at(file.span()), e.to_string()))?
            } else if s.height.is_some() || s.size.is_some() || s.samples.is_some() {
                only(&[
                    ("height", s.height.is_some()),
                    ("size", s.size.is_some()),
                    ("samples", s.samples.is_some()),
                ])?;
                let (grid, size) = sampled_heights(ctx, s)?;
                grid_mesh(&grid, size).map_err(|e| invalid(ctx.at(span.clone()), e.to_string()))?
            } else {
                return Err(invalid(
                    ctx.at(span.clone()),
                    "a mesh shape needs `file` (an .obj or .stl file) or `height`, `size` and `samples`",
                ));
            }
        }
        other => {
            return Err(invalid(
                ctx.at(s.kind.span()),
                format!(
                    "unknown shape type `{other}` (types: sphere, box, capsule, cylinder, convex_hull, plane, height_field, mesh)"
                ),
            ))
        }
    };
    Ok((desc, pose))
}

/// The heights f(x_j, y_i) of a `height` expression at `samples` points
/// over `size` (rows i along y, columns j along x), and the size.
fn sampled_heights(ctx: Ctx<'_>, s: &ShapeEntry) -> Result<(DMatrix<f64>, [f64; 2])> {
    let size_v = s.size.as_ref().expect("checked by the caller");
    let size = ctx.vector(size_v, "size")?;
    let samples_v = s.samples.as_ref().expect("checked by the caller");
    let samples = ctx.vector(samples_v, "samples")?;
    if size.len() != 2 || size.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return Err(invalid(
            ctx.at(size_v.span()),
            "size must be [lx, ly], both > 0",
        ));
    }
    if samples.len() != 2
        || samples
            .iter()
            .any(|v| v.fract() != 0.0 || *v < 2.0 || *v > 4096.0)
    {
        return Err(invalid(
            ctx.at(samples_v.span()),
            "samples must be [nx, ny], integers from 2 to 4096",
        ));
    }
    let (nx, ny) = (samples[0] as usize, samples[1] as usize);
    let h = s.height.as_ref().expect("checked by the caller");
    let f = ctx
        .scope
        .compile_vars(h.get_ref(), &["x".to_string(), "y".to_string()])
        .map_err(|f| ctx.fault(ctx.at(h.span()), h.get_ref(), "the height", f))?;
    let mut heights = DMatrix::zeros(ny, nx);
    for i in 0..ny {
        let y = -0.5 * size[1] + size[1] * i as f64 / (ny - 1) as f64;
        for j in 0..nx {
            let x = -0.5 * size[0] + size[0] * j as f64 / (nx - 1) as f64;
            let v = f.eval(|k| if k == 0 { x } else { y });
            if !v.is_finite() {
                return Err(ScenarioError::NonFinite {
                    at: ctx.at(h.span()),
                    what: format!("the height at x = {x}, y = {y}"),
                    value: v,
                });
            }
            heights[(i, j)] = v;
        }
    }
    Ok((heights, [size[0], size[1]]))
}
