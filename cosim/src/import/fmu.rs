//! A loaded FMU: its archive unpacked, its description read, its binary
//! found. Instances ([`super::Instance`]) are created from it; several
//! instances of one FMU share it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fmi::fmi2::import::Fmi2Import;
use fmi::traits::FmiImport;

use super::description::Description;
use crate::error::CosimError;

/// A loaded FMI 2.0 co-simulation FMU.
#[derive(Debug)]
pub struct Fmu {
    pub(crate) import: Fmi2Import,
    pub(crate) description: Description,
    path: PathBuf,
}

impl Fmu {
    /// Loads an FMU file: checks that it is a zip archive with a readable
    /// FMI 2.0 modelDescription.xml, that it has a co-simulation interface
    /// and a binary for this platform (`binaries/<platform>/<id>.so`).
    pub fn load(path: impl AsRef<Path>) -> Result<Arc<Fmu>, CosimError> {
        let path = path.as_ref().to_path_buf();
        let file = std::fs::File::open(&path).map_err(|e| CosimError::Missing {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        let corrupt = |reason: String| CosimError::Corrupt {
            path: path.clone(),
            reason,
        };
        let peek = fmi::import::peek_descr(file).map_err(|e| corrupt(e.to_string()))?;
        if !peek.fmi_version.starts_with("2.") {
            return Err(CosimError::Version {
                path,
                version: peek.fmi_version.clone(),
            });
        }
        let import: Fmi2Import =
            fmi::import::from_path(&path).map_err(|e| corrupt(e.to_string()))?;
        let md = import.model_description();
        let Some(cs) = md.co_simulation.as_ref() else {
            return Err(CosimError::ModelExchangeOnly { path });
        };
        let description = Description::from_schema(md, cs);
        let platform = format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH);
        let lib = import
            .shared_lib_path(&description.model_identifier)
            .map_err(|_| CosimError::NoBinary {
                path: path.clone(),
                platform: platform.clone(),
                expected: "binaries/<platform>".into(),
            })?;
        if !import.archive_path().join(&lib).is_file() {
            return Err(CosimError::NoBinary {
                path,
                platform,
                expected: lib.display().to_string(),
            });
        }
        Ok(Arc::new(Fmu {
            import,
            description,
            path,
        }))
    }

    /// What the FMU declares.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
