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

/// FMI 2.0 allows `author` on `<fmiModelDescription>`; fmi-schema 0.7
/// refuses it as unknown. The loader removes it: the FMU loads and steps
/// as the original (Dahlquist, x_{n+1} = (1 − k h) x_n with its defaults
/// k = 1, x0 = 1: forward Euler inside the Reference FMU).
#[test]
fn an_author_attribute_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let good = common::reference_fmus().join("Dahlquist.fmu");
    let with_author = dir.path().join("author.fmu");
    rewrite(
        &good,
        &with_author,
        |_| false,
        |x| {
            assert!(!x.contains("author="), "the original has no author");
            x.replacen(
                "<fmiModelDescription",
                "<fmiModelDescription author=\"Someone (someone@example.org)\"",
                1,
            )
        },
    );
    let fmu = Fmu::load(&with_author).unwrap();
    let mut inst = nonsmooth_cosim::Instance::new(&fmu, "d").unwrap();
    inst.initialize(0.0, Some(1.0)).unwrap();
    let x = fmu.description().variable("x").unwrap().value_reference;
    let mut v = [0.0];
    let mut expected = 1.0;
    for k in 1..=10 {
        inst.do_step(0.1, 0.1 * k as f64).unwrap();
        inst.get_real(&[x], &mut v).unwrap();
        expected *= 1.0 - 0.1;
        assert!(
            (v[0] - expected).abs() < 1e-14,
            "step {k}: {} vs {expected}",
            v[0]
        );
    }
}

/// Units come from the `<SimpleType>` a real variable's `declaredType`
/// names (BouncingBall's modelDescription.xml: Position in m, Velocity in
/// m/s, Acceleration in m/s2); a variable without one has none.
#[test]
fn units_of_declared_types_are_read() {
    let fmu = Fmu::load(common::reference_fmus().join("BouncingBall.fmu")).unwrap();
    let d = fmu.description();
    let unit = |n: &str| d.variable(n).unwrap().unit.clone();
    assert_eq!(unit("h").as_deref(), Some("m"));
    assert_eq!(unit("v").as_deref(), Some("m/s"));
    assert_eq!(unit("g").as_deref(), Some("m/s2"));
    assert_eq!(unit("time"), None);
}
