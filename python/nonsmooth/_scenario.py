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

    def run(self, **kwargs):
        from ._run import run

        return run(self, **kwargs)

    def __repr__(self):
        return f"Scenario({self.path!r}, overrides={self.overrides!r})"
