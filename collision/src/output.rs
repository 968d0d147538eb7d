//! Output for viewers: one CSV file per output instant (a "CSV series").
//!
//! [`FrameWriter::write`] writes `<dir>/<stem>_<k>.csv` (k = 0, 1, … with six
//! digits) with one row per free body:
//!
//! `t,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,shape,sx,sy,sz`
//!
//! the time, the body index, the centre of mass and the unit quaternion
//! (body → world; scalar first), the centre velocity (world) and the angular
//! velocity (body frame), and the first collider's shape kind with its
//! sizes (sphere: radius; box: half extents; capsule and cylinder: radius,
//! half height). ParaView opens the numbered files as one time series
//! (File → Open, then "Table To Points" on x, y, z, and a Glyph filter
//! scaled by sx); any spreadsheet or script reads them too.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use nonsmooth::rigid::{BodyState, RigidBody};

use crate::detector::Collider;
use crate::shapes::ShapeDesc;

/// The header of every frame file.
pub const FRAME_HEADER: &str = "t,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,shape,sx,sy,sz";

/// Writes numbered frame files into a directory.
#[derive(Debug)]
pub struct FrameWriter {
    dir: PathBuf,
    stem: String,
    next: usize,
    /// First collider of each body (index into the colliders), if any.
    shape_of: Vec<Option<usize>>,
}

impl FrameWriter {
    /// A writer of `<dir>/<stem>_<k>.csv`; the directory is created.
    pub fn new(
        dir: &Path,
        stem: &str,
        bodies: usize,
        colliders: &[Collider],
    ) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let mut shape_of = vec![None; bodies];
        for (i, c) in colliders.iter().enumerate() {
            if c.body < bodies && shape_of[c.body].is_none() {
                shape_of[c.body] = Some(i);
            }
        }
        Ok(FrameWriter {
            dir: dir.to_path_buf(),
            stem: stem.to_string(),
            next: 0,
            shape_of,
        })
    }

    /// Writes the next frame; returns its path.
    pub fn write(
        &mut self,
        t: f64,
        bodies: &[RigidBody],
        states: &[BodyState],
        colliders: &[Collider],
    ) -> std::io::Result<PathBuf> {
        let path = self.dir.join(format!("{}_{:06}.csv", self.stem, self.next));
        let mut f = BufWriter::new(File::create(&path)?);
        writeln!(f, "{FRAME_HEADER}")?;
        for (b, (body, s)) in bodies.iter().zip(states).enumerate() {
            if body.fixed {
                continue;
            }
            let q = s.orientation.quaternion();
            let (kind, size) = match self.shape_of.get(b).copied().flatten() {
                Some(i) => sizes(&colliders[i].desc),
                None => ("none", [0.0; 3]),
            };
            writeln!(
                f,
                "{t:e},{b},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{kind},{:e},{:e},{:e}",
                s.position.x, s.position.y, s.position.z,
                q.w, q.i, q.j, q.k,
                s.velocity.x, s.velocity.y, s.velocity.z,
                s.omega.x, s.omega.y, s.omega.z,
                size[0], size[1], size[2],
            )?;
        }
        f.flush()?;
        self.next += 1;
        Ok(path)
    }
}

fn sizes(d: &ShapeDesc) -> (&'static str, [f64; 3]) {
    match d {
        ShapeDesc::Sphere { radius } => ("sphere", [*radius, 0.0, 0.0]),
        ShapeDesc::Cuboid { half_extents: e } => ("box", [e.x, e.y, e.z]),
        ShapeDesc::Capsule {
            half_height,
            radius,
        } => ("capsule", [*radius, *half_height, 0.0]),
        ShapeDesc::Cylinder {
            half_height,
            radius,
        } => ("cylinder", [*radius, *half_height, 0.0]),
        ShapeDesc::ConvexHull { .. } => ("convex_hull", [0.0; 3]),
        ShapeDesc::HalfSpace { .. } => ("half_space", [0.0; 3]),
        ShapeDesc::TriMesh { .. } => ("triangle_mesh", [0.0; 3]),
        ShapeDesc::HeightField { .. } => ("height_field", [0.0; 3]),
    }
}
