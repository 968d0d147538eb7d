"""Scenario files: load, list and set parameters, validate."""

import os

from . import _native


class Scenario:
    """A scenario file (TOML, docs/scenarios.md) and parameter overrides.

    ``Scenario.load(path)`` or ``Scenario.from_text(text)``; ``.parameter_names``,
    ``.parameters()`` (values after overrides), ``.set(name=value, ...)``,
    ``.validate()`` (builds the model and the loop: raises
    :class:`ScenarioError` with file and line), ``.run(...)``.
    """

    def __init__(self, text, path="<text>", overrides=None):
        self.text = text
        self.path = path
        self.overrides = dict(overrides or {})
        # Reads the file against the schema at once.
        self._names = list(_native.parameters(self.text, self.path, []).keys())

    @classmethod
    def load(cls, path):
        from ._run import _source

        text, path, _ = _source(os.fspath(path) if not isinstance(path, str) else path)
        return cls(text, path)

    @classmethod
    def from_text(cls, text, name="<text>"):
        return cls(text, name)

    @property
    def parameter_names(self):
        return sorted(self._names)

    def parameters(self):
        """The parameter values after the overrides (numbers; words as texts)."""
        from ._run import _pairs

        return _native.parameters(self.text, self.path, _pairs(self.overrides))

    def set(self, **values):
        """Overrides parameters; returns self. Unknown names raise ScenarioError."""
        from ._errors import ScenarioError

        for k in values:
            if k not in self._names:
                raise ScenarioError(
                    f"{self.path}: no parameter `{k}` (known: {', '.join(self.parameter_names)})",
                    self.path,
                    None,
                )
        self.overrides.update(values)
        return self

    def validate(self):
        """Builds the scenario without running it; returns the column names."""
        from ._run import _pairs

        return _native.validate(self.text, self.path, _pairs(self.overrides))

    def export_fmu(self, path, library=None, fmi_version=2):
        """Writes an FMI 2.0 (or, with ``fmi_version=3``, FMI 3.0)
        co-simulation FMU of this scenario with its overrides, as
        ``nonsmooth fmu export [--fmi-version 3]`` does; returns a dict
        (``path``, ``model_identifier``, ``guid``, ``parameters``,
        ``tunable``, ``inputs``, ``outputs``, ``glibc``).

        The FMU carries the runtime library (``libnonsmooth_fmus.so``, the
        cdylib of the nonsmooth-fmus crate), taken from, in order:
        ``library``; the ``NONSMOOTH_FMU_LIBRARY`` environment variable;
        the package directory (a wheel built with it there ships it).
        Raises :class:`ScenarioError` for a bad scenario and
        :class:`FmuExportError` when the library is missing or the FMU
        cannot be written.
        """
        from ._errors import FmuExportError
        from ._run import _pairs

        lib = _fmu_library(library)
        if lib is None:
            raise FmuExportError(
                f"the FMU runtime library {_FMU_LIBRARY} was not found (looked in "
                f"{os.path.dirname(__file__)}); build it with `cargo build --release "
                "-p nonsmooth-fmus` and give it with library=PATH or the "
                "NONSMOOTH_FMU_LIBRARY environment variable",
                self.path,
                None,
            )
        return _native.export_fmu(
            self.text,
            self.path,
            _pairs(self.overrides),
            lib,
            os.fspath(path),
            int(fmi_version),
        )

    def run(self, **kwargs):
        from ._run import run

        return run(self, **kwargs)

    def __repr__(self):
        return f"Scenario({self.path!r}, overrides={self.overrides!r})"


_FMU_LIBRARY = "libnonsmooth_fmus.so"


def _fmu_library(library):
    """The runtime library's path (see ``Scenario.export_fmu``), or None."""
    if library is not None:
        return os.fspath(library)
    env = os.environ.get("NONSMOOTH_FMU_LIBRARY")
    if env:
        return env
    shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)), _FMU_LIBRARY)
    return shipped if os.path.isfile(shipped) else None
