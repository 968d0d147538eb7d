"""Shared fixtures: the repository's paths and the command-line tool.

The command line (`nonsmooth run`) is the oracle of `nonsmooth.run`: its
binary is taken from NONSMOOTH_CLI, else from $CARGO_TARGET_DIR/release or
target/release of the repository. A missing binary fails the tests that
need it (it is built by `cargo build --release -p nonsmooth-cli`).
"""

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="session")
def cli():
    candidates = []
    if os.environ.get("NONSMOOTH_CLI"):
        candidates.append(pathlib.Path(os.environ["NONSMOOTH_CLI"]))
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(pathlib.Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "nonsmooth")
    candidates.append(ROOT / "target" / "release" / "nonsmooth")
    for c in candidates:
        if c.is_file():
            return c
    pytest.fail(
        "the nonsmooth command-line tool is missing (looked at "
        + ", ".join(map(str, candidates))
        + "): cargo build --release -p nonsmooth-cli, or set NONSMOOTH_CLI"
    )
