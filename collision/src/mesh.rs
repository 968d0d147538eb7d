//! Triangle meshes for terrain: read from a file (Wavefront OBJ, STL in
//! its ASCII or binary form) or generated from heights over a grid.
//!
//! Either way the result is a [`ShapeDesc::TriMesh`], which parry3d builds
//! with `TriMeshFlags::FIX_INTERNAL_EDGES` (duplicate vertices merged,
//! pseudo-normals on edges and vertices), so that a body sliding across
//! the edge between two coplanar triangles sees the plane's normal and
//! does not catch on it.
//!
//! The grid mesh of heights z_{ij} = f(x_j, y_i) over [−lx/2, lx/2] ×
//! [−ly/2, ly/2] with x_j = −lx/2 + lx j/(nx − 1), y_i = −ly/2 + ly i/(ny − 1)
//! has the vertices (x_j, y_i, z_{ij}) and, per cell, the two triangles
//! (a, b, c) and (a, c, d) with a = (i, j), b = (i, j+1), c = (i+1, j+1),
//! d = (i+1, j): counter-clockwise seen from +z, so that the solid is
//! below the surface (outward normal (b − a) × (c − a) with a positive z
//! component). Between the samples the surface is the piecewise-linear
//! interpolant of f on that triangulation.

use std::path::Path;

use nalgebra::{DMatrix, Point3};

use crate::error::{CollisionError, Result};
use crate::shapes::ShapeDesc;

/// The triangle mesh of a grid of heights: `heights[(i, j)]` is the
/// height at y_i (row i) and x_j (column j), spread over `size` = [lx, ly]
/// centred on the origin (the equations are in the module's doc).
pub fn grid_mesh(heights: &DMatrix<f64>, size: [f64; 2]) -> Result<ShapeDesc> {
    let (ny, nx) = heights.shape();
    let bad = |reason: String| CollisionError::InvalidSetting {
        name: "grid mesh",
        reason,
    };
    if nx < 2 || ny < 2 {
        return Err(bad(format!(
            "a grid mesh needs at least 2 × 2 heights, got {nx} × {ny}"
        )));
    }
    if !size.iter().all(|v| v.is_finite() && *v > 0.0) {
        return Err(bad(format!(
            "a grid mesh's size must be finite and > 0, got {size:?}"
        )));
    }
    if nx.checked_mul(ny).is_none_or(|n| n > u32::MAX as usize) {
        return Err(bad(format!("a grid of {nx} × {ny} heights is too large")));
    }
    let mut vertices = Vec::with_capacity(nx * ny);
    for i in 0..ny {
        let y = -0.5 * size[1] + size[1] * i as f64 / (ny - 1) as f64;
        for j in 0..nx {
            let x = -0.5 * size[0] + size[0] * j as f64 / (nx - 1) as f64;
            vertices.push(Point3::new(x, y, heights[(i, j)]));
        }
    }
    let index = |i: usize, j: usize| (i * nx + j) as u32;
    let mut triangles = Vec::with_capacity(2 * (nx - 1) * (ny - 1));
    for i in 0..ny - 1 {
        for j in 0..nx - 1 {
            let (a, b, c, d) = (
                index(i, j),
                index(i, j + 1),
                index(i + 1, j + 1),
                index(i + 1, j),
            );
            triangles.push([a, b, c]);
            triangles.push([a, c, d]);
        }
    }
    Ok(ShapeDesc::TriMesh {
        vertices,
        triangles,
    })
}

/// What went wrong in reading a mesh file.
fn file_error(path: &Path, reason: impl Into<String>) -> CollisionError {
    CollisionError::MeshFile {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// Reads a triangle mesh from a Wavefront OBJ (`.obj`) or STL (`.stl`,
/// ASCII or binary) file, chosen by the extension. Polygons of an OBJ
/// file are split into triangles (fans); the objects of the file are
/// joined into one mesh. A file without triangles, with an index beyond
/// its vertices or with a non-finite coordinate is refused.
pub fn read_mesh_file(path: &Path) -> Result<ShapeDesc> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let (vertices, triangles) = match ext.as_deref() {
        Some("obj") => read_obj(path)?,
        Some("stl") => read_stl(path)?,
        _ => {
            return Err(file_error(
                path,
                "unknown mesh format (the file name must end in .obj or .stl)",
            ))
        }
    };
    if triangles.is_empty() {
        return Err(file_error(path, "the file holds no triangle"));
    }
    if let Some(k) = vertices
        .iter()
        .position(|p| p.iter().any(|v| !v.is_finite()))
    {
        return Err(file_error(
            path,
            format!("vertex {} has a non-finite coordinate", k + 1),
        ));
    }
    if let Some(t) = triangles
        .iter()
        .position(|t| t.iter().any(|&i| i as usize >= vertices.len()))
    {
        return Err(file_error(
            path,
            format!(
                "triangle {} names a vertex beyond the {} vertices",
                t + 1,
                vertices.len()
            ),
        ));
    }
    Ok(ShapeDesc::TriMesh {
        vertices,
        triangles,
    })
}

type Triangles = (Vec<Point3<f64>>, Vec<[u32; 3]>);

fn open(path: &Path) -> Result<std::fs::File> {
    std::fs::File::open(path).map_err(|e| file_error(path, format!("cannot open: {e}")))
}

fn read_obj(path: &Path) -> Result<Triangles> {
    let mut reader = std::io::BufReader::new(open(path)?);
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: false,
        ignore_points: true,
        ignore_lines: true,
    };
    // Materials (.mtl) do not matter to contact: none is loaded.
    let (models, _) = tobj::load_obj_buf(&mut reader, &options, |_| {
        Ok((Vec::new(), Default::default()))
    })
    .map_err(|e| file_error(path, format!("not a readable OBJ file: {e}")))?;
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for model in &models {
        let m = &model.mesh;
        let base = vertices.len();
        if base + m.positions.len() / 3 > u32::MAX as usize {
            return Err(file_error(path, "too many vertices"));
        }
        vertices.extend(
            m.positions
                .chunks_exact(3)
                .map(|p| Point3::new(p[0], p[1], p[2])),
        );
        for t in m.indices.chunks_exact(3) {
            let n = (m.positions.len() / 3) as u32;
            if t.iter().any(|&i| i >= n) {
                return Err(file_error(
                    path,
                    format!(
                        "object `{}`: a face names vertex {} of {n}",
                        model.name,
                        t.iter().max().map_or(0, |i| i + 1)
                    ),
                ));
            }
            triangles.push([t[0] + base as u32, t[1] + base as u32, t[2] + base as u32]);
        }
    }
    Ok((vertices, triangles))
}

fn read_stl(path: &Path) -> Result<Triangles> {
    let mut reader = std::io::BufReader::new(open(path)?);
    let mesh = stl_io::read_stl(&mut reader)
        .map_err(|e| file_error(path, format!("not a readable STL file: {e}")))?;
    if mesh.vertices.len() > u32::MAX as usize {
        return Err(file_error(path, "too many vertices"));
    }
    let vertices = mesh
        .vertices
        .iter()
        .map(|v| Point3::new(v.0[0] as f64, v.0[1] as f64, v.0[2] as f64))
        .collect();
    let triangles = mesh
        .faces
        .iter()
        .map(|f| f.vertices.map(|i| i as u32))
        .collect();
    Ok((vertices, triangles))
}
