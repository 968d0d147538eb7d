//! Every bad FMU file gives its own typed error naming the file.

mod common;

use std::io::{Read, Write};
use std::path::Path;

use nonsmooth_cosim::{CosimError, Fmu};

/// Copies an FMU archive, dropping the entries `drop` rejects and
/// rewriting modelDescription.xml with `edit`.
fn rewrite(src: &Path, dst: &Path, drop: impl Fn(&str) -> bool, edit: impl Fn(String) -> String) {
    let mut a = zip::ZipArchive::new(std::fs::File::open(src).unwrap()).unwrap();
    let mut w = zip::ZipWriter::new(std::fs::File::create(dst).unwrap());
    for i in 0..a.len() {
        let mut f = a.by_index(i).unwrap();
        let name = f.name().unwrap().to_string();
        if drop(&name) || f.is_dir() {
            continue;
        }
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        if name == "modelDescription.xml" {
            bytes = edit(String::from_utf8(bytes).unwrap()).into_bytes();
        }
        w.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(&bytes).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn bad_fmus_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = common::reference_fmus().join("Dahlquist.fmu");

    let missing = dir.path().join("nowhere.fmu");
    let e = Fmu::load(&missing).unwrap_err();
    assert!(matches!(e, CosimError::Missing { .. }), "{e}");
    assert!(e.to_string().contains("nowhere.fmu"), "{e}");

    let corrupt = dir.path().join("corrupt.fmu");
    std::fs::write(&corrupt, "not a zip archive").unwrap();
    let e = Fmu::load(&corrupt).unwrap_err();
    assert!(matches!(e, CosimError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("corrupt.fmu"), "{e}");

    let me_only = dir.path().join("me_only.fmu");
    rewrite(
        &good,
        &me_only,
        |_| false,
        |xml| {
            let a = xml.find("<CoSimulation").unwrap();
            let b = xml.find("</CoSimulation>").unwrap() + "</CoSimulation>".len();
            format!("{}{}", &xml[..a], &xml[b..])
        },
    );
    let e = Fmu::load(&me_only).unwrap_err();
    assert!(matches!(e, CosimError::ModelExchangeOnly { .. }), "{e}");

    let no_binary = dir.path().join("no_binary.fmu");
    rewrite(&good, &no_binary, |n| n.starts_with("binaries/"), |x| x);
    let e = Fmu::load(&no_binary).unwrap_err();
    assert!(matches!(e, CosimError::NoBinary { .. }), "{e}");
    assert!(e.to_string().contains("linux64"), "{e}");

    let v3 = dir.path().join("v3.fmu");
    rewrite(
        &good,
        &v3,
        |_| false,
        |x| x.replace("fmiVersion=\"2.0\"", "fmiVersion=\"3.0\""),
    );
    let e = Fmu::load(&v3).unwrap_err();
    assert!(
        matches!(e, CosimError::Version { .. } | CosimError::Corrupt { .. }),
        "{e}"
    );
}
