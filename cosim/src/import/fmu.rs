//! A loaded FMU: its archive unpacked, its description read, its binary
//! found. Instances ([`super::Instance`]) are created from it; several
//! instances of one FMU share it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fmi::fmi2::import::Fmi2Import;
use fmi::traits::FmiImport;
use zip::ZipArchive;

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
        let import = extract(&path).map_err(corrupt)?;
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

/// Unpacks the archive into a temporary directory and hands its
/// modelDescription.xml to the `fmi` crate, without the FMI 2.0 attributes
/// its strict schema (fmi-schema 0.7) does not know ([`UNKNOWN_TO_SCHEMA`]):
/// they are informative (e.g. `author`) and the master does not use them.
fn extract(path: &Path) -> Result<Fmi2Import, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut archive = ZipArchive::new(file).map_err(|e| format!("not a zip archive: {e}"))?;
    let dir = tempfile::Builder::new()
        .prefix("nonsmooth-fmu")
        .tempdir()
        .map_err(|e| format!("cannot create a directory to unpack it: {e}"))?;
    archive
        .extract(dir.path())
        .map_err(|e| format!("cannot unpack it: {e}"))?;
    let xml = std::fs::read_to_string(dir.path().join("modelDescription.xml"))
        .map_err(|e| format!("modelDescription.xml: {e}"))?;
    let xml = without_unknown_attributes(&xml);
    Fmi2Import::new(dir, &xml).map_err(|e| format!("modelDescription.xml: {e}"))
}

/// Attributes of `<fmiModelDescription>` that FMI 2.0 defines but that
/// fmi-schema 0.7 refuses as unknown.
pub(crate) const UNKNOWN_TO_SCHEMA: &[&str] = &["author"];

/// The description with the attributes of [`UNKNOWN_TO_SCHEMA`] removed
/// from its `<fmiModelDescription …>` start tag (anything else unchanged;
/// a tag that does not read as `name="value"` pairs is left as it is).
pub(crate) fn without_unknown_attributes(xml: &str) -> String {
    const TAG: &str = "<fmiModelDescription";
    let Some(start) = xml.find(TAG) else {
        return xml.to_string();
    };
    let body_start = start + TAG.len();
    let mut kept = String::new();
    let mut i = body_start;
    let bytes = xml.as_bytes();
    loop {
        // One attribute: white space, name, `=`, quoted value.
        let attr_start = i;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= bytes.len() || bytes[i] == b'>' || bytes[i] == b'/' {
            kept.push_str(&xml[attr_start..i]);
            break;
        }
        let name_start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'=' {
            i += 1;
        }
        let name = &xml[name_start..i];
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= bytes.len() || bytes[i] != b'=' {
            return xml.to_string();
        }
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let Some(&quote) = bytes.get(i).filter(|q| **q == b'"' || **q == b'\'') else {
            return xml.to_string();
        };
        let Some(len) = xml[i + 1..].find(quote as char) else {
            return xml.to_string();
        };
        i += 1 + len + 1;
        if !UNKNOWN_TO_SCHEMA.contains(&name) {
            kept.push_str(&xml[attr_start..i]);
        }
    }
    format!("{}{kept}{}", &xml[..body_start], &xml[i..])
}

#[cfg(test)]
mod tests {
    use super::without_unknown_attributes;

    #[test]
    fn author_is_removed_and_nothing_else() {
        let xml = "<?xml version=\"1.0\"?>\n<fmiModelDescription fmiVersion=\"2.0\" author=\"A. B. <c@d>\"\n  modelName='m' author = 'x' >\n<ModelVariables author=\"kept\"/></fmiModelDescription>";
        assert_eq!(
            without_unknown_attributes(xml),
            "<?xml version=\"1.0\"?>\n<fmiModelDescription fmiVersion=\"2.0\"\n  modelName='m' >\n<ModelVariables author=\"kept\"/></fmiModelDescription>"
        );
        let plain =
            "<fmiModelDescription fmiVersion=\"2.0\" modelName=\"author\" x='author=\"y\"'>";
        assert_eq!(without_unknown_attributes(plain), plain);
    }
}
