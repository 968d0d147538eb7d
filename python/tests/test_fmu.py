"""Scenario.export_fmu: the FMU written from Python, simulated by FMPy (an
independent FMI 2.0 importer), gives the outputs of nonsmooth.run at its
communication points."""

import os
import pathlib
import zipfile

import numpy as np
import pytest

import nonsmooth

from conftest import EXAMPLES, ROOT


def _library():
    """The FMU runtime library: NONSMOOTH_FMU_LIBRARY, else the release
    build of the workspace (`cargo build --release -p nonsmooth-fmus`)."""
    if os.environ.get("NONSMOOTH_FMU_LIBRARY"):
        return pathlib.Path(os.environ["NONSMOOTH_FMU_LIBRARY"])
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    lib = target / "release" / "libnonsmooth_fmus.so"
    if not lib.is_file():
        pytest.fail(f"the FMU runtime library is missing ({lib}); cargo build --release -p nonsmooth-fmus")
    return lib


def test_exported_fmu_matches_run(tmp_path):
    fmpy = pytest.importorskip("fmpy")
    s = nonsmooth.Scenario.load(EXAMPLES / "bouncing_ball.toml").set(t_end=2, restitution=0.8)
    out = tmp_path / "ball.fmu"
    info = s.export_fmu(out, library=_library())
    assert info["path"] == str(out) and out.is_file()
    assert info["outputs"] > 0
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
    assert "modelDescription.xml" in names
    assert f"binaries/linux64/{info['model_identifier']}.so" in names

    from fmpy.validation import validate_fmu

    assert validate_fmu(str(out)) == []

    r = s.run(strategy="time-stepping")
    step = float(s.parameters()["step"])
    res = fmpy.simulate_fmu(str(out), stop_time=2.0, output_interval=step, step_size=step)
    names = [c for c in r.columns if c != "t" and c in res.dtype.names]
    assert names, (r.columns, res.dtype.names)
    # The FMU's communication points are the run's output instants.
    n = min(len(res), len(r.t))
    assert n > 100
    assert np.allclose(res["time"][:n], r.t[:n], rtol=0, atol=1e-12)
    for c in names:
        assert np.allclose(res[c][:n], r[c][:n], rtol=0, atol=1e-12), c


def test_export_errors(tmp_path):
    s = nonsmooth.Scenario.load(EXAMPLES / "bouncing_ball.toml")
    with pytest.raises(nonsmooth.FmuExportError, match="not-there.so"):
        s.export_fmu(tmp_path / "x.fmu", library=tmp_path / "not-there.so")
    text = tmp_path / "text.txt"
    text.write_text("not a library")
    with pytest.raises(nonsmooth.FmuExportError, match="not an ELF"):
        s.export_fmu(tmp_path / "x.fmu", library=text)
    # A bad value is found when the scenario is built for the export.
    bad = nonsmooth.Scenario.load(EXAMPLES / "bouncing_ball.toml").set(theta="2*nope")
    with pytest.raises(nonsmooth.ScenarioError, match="nope") as e:
        bad.export_fmu(tmp_path / "x.fmu", library=_library())
    assert e.value.file == str(EXAMPLES / "bouncing_ball.toml")
    assert not (tmp_path / "x.fmu").exists()


def test_the_installed_package_ships_the_fmu_runtime(tmp_path, monkeypatch):
    # No library= and no NONSMOOTH_FMU_LIBRARY: the wheel's own copy of the
    # runtime (put in by the package's build backend) is what the FMU
    # carries, and FMPy runs that FMU.
    import fmpy

    monkeypatch.delenv("NONSMOOTH_FMU_LIBRARY", raising=False)
    shipped = pathlib.Path(nonsmooth.__file__).parent / "libnonsmooth_fmus.so"
    assert shipped.is_file(), f"the installed package has no FMU runtime ({shipped})"
    s = nonsmooth.Scenario.load(EXAMPLES / "bouncing_ball.toml").set(t_end=1)
    out = tmp_path / "ball.fmu"
    info = s.export_fmu(out)
    with zipfile.ZipFile(out) as z:
        carried = z.read(f"binaries/linux64/{info['model_identifier']}.so")
    assert carried == shipped.read_bytes()
    r = s.run(strategy="time-stepping")
    step = float(s.parameters()["step"])
    res = fmpy.simulate_fmu(str(out), stop_time=1.0, output_interval=step, step_size=step)
    n = min(len(res), len(r.t))
    assert n > 100
    assert np.allclose(res["ball.q[0]"][:n], r["ball.q[0]"][:n], rtol=0, atol=1e-12)
