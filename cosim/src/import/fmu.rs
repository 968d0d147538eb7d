//! A loaded FMU: its archive unpacked, its description read, its binary
//! found. Instances ([`super::Instance`]) are created from it; several
//! instances of one FMU share it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fmi::fmi2::import::Fmi2Import;
use fmi::schema::traits::FmiModelDescription;
use fmi::traits::FmiImport;
use tempfile::TempDir;
use zip::ZipArchive;

use super::description::Description;
use crate::error::CosimError;

/// An unpacked FMI 3.0 archive: its binary and resources.
#[derive(Debug)]
pub(crate) struct Archive3 {
    _dir: TempDir,
    /// The shared library for this platform.
    pub(crate) lib: PathBuf,
    /// The resources folder (given to the FMU with a trailing `/`).
    pub(crate) resources: PathBuf,
}

/// The FMI version of an FMU and what its instances are made from.
#[derive(Debug)]
pub(crate) enum Kind {
    V2(Box<Fmi2Import>),
    V3(Box<Archive3>),
}

/// A loaded co-simulation FMU (FMI 2.0 or 3.0).
#[derive(Debug)]
pub struct Fmu {
    pub(crate) kind: Kind,
    pub(crate) description: Description,
    path: PathBuf,
}

impl Fmu {
    /// Loads an FMU file: checks that it is a zip archive with a readable
    /// FMI 2.0 or 3.0 modelDescription.xml, that it has a co-simulation
    /// interface and a binary for this platform (FMI 2.0:
    /// `binaries/linux64/<id>.so`, FMI 3.0: `binaries/x86_64-linux/<id>.so`
    /// on this machine's kind).
    pub fn load(path: impl AsRef<Path>) -> Result<Arc<Fmu>, CosimError> {
        let path = path.as_ref().to_path_buf();
        if let Err(e) = std::fs::File::open(&path) {
            return Err(CosimError::Missing {
                path,
                reason: e.to_string(),
            });
        }
        let corrupt = |reason: String| CosimError::Corrupt {
            path: path.clone(),
            reason,
        };
        let (dir, xml) = unpack(&path).map_err(corrupt)?;
        let version = super::xml_check::check(&xml)
            .map_err(|e| corrupt(format!("modelDescription.xml:{e}")))?;
        if version.starts_with("3.") {
            return load3(path, dir, &xml);
        }
        if !version.starts_with("2.") {
            return Err(CosimError::Version { path, version });
        }
        let import = Fmi2Import::new(dir, &without_unknown_attributes(&xml))
            .map_err(|e| corrupt(format!("modelDescription.xml: {e}")))?;
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
            kind: Kind::V2(Box::new(import)),
            description,
            path,
        }))
    }

    /// The FMI version: 2 or 3.
    pub fn fmi_version(&self) -> u32 {
        match self.kind {
            Kind::V2(_) => 2,
            Kind::V3(_) => 3,
        }
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

/// Loads an unpacked FMI 3.0 FMU: reads its description with the `fmi`
/// crate's FMI 3.0 schema, finds its binary.
fn load3(path: PathBuf, dir: TempDir, xml: &str) -> Result<Arc<Fmu>, CosimError> {
    let corrupt = |reason: String| CosimError::Corrupt {
        path: path.clone(),
        reason,
    };
    let md = fmi::fmi3::schema::Fmi3ModelDescription::deserialize(xml)
        .map_err(|e| corrupt(format!("modelDescription.xml: {e}")))?;
    let Some(cs) = md.co_simulation.as_ref() else {
        return Err(CosimError::ModelExchangeOnly { path });
    };
    let description = super::fmi3::description(&md, cs)
        .map_err(|e| corrupt(format!("modelDescription.xml: {e}")))?;
    let platform = format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH);
    let Some(folder) = super::fmi3::platform_folder() else {
        return Err(CosimError::NoBinary {
            path,
            platform,
            expected: "binaries/<platform>".into(),
        });
    };
    let rel = format!(
        "binaries/{folder}/{}{}",
        description.model_identifier,
        std::env::consts::DLL_SUFFIX
    );
    let lib = dir.path().join(&rel);
    if !lib.is_file() {
        return Err(CosimError::NoBinary {
            path,
            platform,
            expected: rel,
        });
    }
    let resources = dir.path().join("resources");
    Ok(Arc::new(Fmu {
        kind: Kind::V3(Box::new(Archive3 {
            lib,
            resources,
            _dir: dir,
        })),
        description,
        path,
    }))
}

/// Unpacks an archive into a temporary directory; returns it with the
/// text of its modelDescription.xml.
fn unpack(path: &Path) -> Result<(TempDir, String), String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut archive = ZipArchive::new(file).map_err(|e| format!("not a zip archive: {e}"))?;
    let dir = tempfile::Builder::new()
        .prefix("nonsmooth-fmu")
        .tempdir()
        .map_err(|e| format!("cannot create a directory to unpack it: {e}"))?;
    archive
        .extract(dir.path())
        .map_err(|e| format!("cannot unpack it: {e}"))?;
    let file = dir.path().join("modelDescription.xml");
    if !file.is_file() {
        return Err("the archive has no modelDescription.xml".into());
    }
    let xml = std::fs::read_to_string(&file).map_err(|e| format!("modelDescription.xml: {e}"))?;
    Ok((dir, xml))
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
