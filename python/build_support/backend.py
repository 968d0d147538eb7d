"""The package's PEP 517 build backend: maturin's, after putting the FMU
runtime library into the package.

``Scenario.export_fmu`` copies ``libnonsmooth_fmus.so`` (the cdylib of the
workspace's ``nonsmooth-fmus`` crate, whose C entry points every exported
FMU carries) into the FMU. The Python extension module cannot serve: it
leaves the interpreter's symbols to be resolved by the interpreter, and an
FMU is loaded by hosts that have none. So before maturin builds the wheel,
this backend builds that library with cargo (``cargo build --release -p
nonsmooth-fmus`` in the workspace, ``CARGO_TARGET_DIR`` honoured, nothing
done when it is up to date) and copies it next to ``__init__.py``, where
maturin picks it up as package data (pyproject.toml, ``include``) and
``export_fmu`` looks for it. ``pip install ./python``, ``pip wheel``,
``python -m build`` and ``maturin develop`` (which calls no backend: run
``python build_support/backend.py`` first) all end with the library in
the package.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import maturin

HERE = pathlib.Path(__file__).resolve().parent.parent
ROOT = HERE.parent
LIBRARY = "libnonsmooth_fmus.so"


def build_fmu_runtime():
    """Builds the FMU runtime library and copies it into the package;
    returns the copy's path."""
    cargo = os.environ.get("CARGO", "cargo")
    cmd = [
        cargo,
        "build",
        "--release",
        "-p",
        "nonsmooth-fmus",
        "--lib",
        "--message-format=json-render-diagnostics",
        "--manifest-path",
        str(ROOT / "Cargo.toml"),
    ]
    out = subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True)
    built = None
    for line in out.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        target = msg.get("target") or {}
        if msg.get("reason") == "compiler-artifact" and target.get("name") == "nonsmooth_fmus":
            built = next((f for f in msg.get("filenames", []) if f.endswith(LIBRARY)), built)
    if built is None:
        raise RuntimeError(f"cargo built no {LIBRARY} (command: {' '.join(cmd)})")
    dest = HERE / "nonsmooth" / LIBRARY
    shutil.copy2(built, dest)
    return dest


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    build_fmu_runtime()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    build_fmu_runtime()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    return maturin.build_sdist(sdist_directory, config_settings)


get_requires_for_build_wheel = maturin.get_requires_for_build_wheel
get_requires_for_build_sdist = maturin.get_requires_for_build_sdist
prepare_metadata_for_build_wheel = maturin.prepare_metadata_for_build_wheel
if hasattr(maturin, "get_requires_for_build_editable"):
    get_requires_for_build_editable = maturin.get_requires_for_build_editable
if hasattr(maturin, "prepare_metadata_for_build_editable"):
    prepare_metadata_for_build_editable = maturin.prepare_metadata_for_build_editable


if __name__ == "__main__":
    print(build_fmu_runtime())
    sys.exit(0)
