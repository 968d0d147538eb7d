"""The recorded outputs of one run."""

import numpy as np


class Result:
    """The rows a run recorded, as ``nonsmooth run`` writes them to its CSV.

    * ``.t`` — the output instants (1-D array);
    * ``.columns`` — the column names, ``t`` first, then
      ``<object>.<variable>[<index>]`` (the CSV header);
    * ``result["plant.x[0]"]`` — one column (1-D array);
    * ``.to_numpy()`` — every column, one row per output instant (2-D);
    * ``.to_pandas()`` — a DataFrame indexed by nothing, ``t`` a column;
    * ``.events`` — the event log: a list of ``(t, kind, object)``;
    * ``.plot(columns)`` — a Matplotlib figure of the columns against t;
    * ``t, y = result`` — the times and the recorded columns (one row per
      column, as python-control's time responses).
    """

    def __init__(self, columns, data, event_t, event_kind, event_object, steps, solver_iterations, native_time=float("nan")):
        self.columns = list(columns)
        self._data = data
        self._index = {c: j for j, c in enumerate(self.columns)}
        self._event_t = event_t
        self._event_kind = event_kind
        self._event_object = event_object
        self.steps = steps
        self.solver_iterations = solver_iterations
        #: Seconds spent in Rust (reading, building, simulating, keeping rows).
        self.native_time = native_time

    @property
    def t(self):
        return self._data[:, 0]

    @property
    def y(self):
        """The recorded columns but t, one row per column."""
        return self._data[:, 1:].T

    @property
    def events(self):
        return list(zip(self._event_t.tolist(), self._event_kind, self._event_object))

    def __getitem__(self, name):
        try:
            j = self._index[name]
        except KeyError:
            raise KeyError(f"no column {name!r}; the run records {', '.join(self.columns)}") from None
        return self._data[:, j]

    def __contains__(self, name):
        return name in self._index

    def __len__(self):
        return self._data.shape[0]

    def __iter__(self):
        # t, y = result
        return iter((self.t, self.y))

    def to_numpy(self):
        """All columns (t first), one row per output instant."""
        return self._data

    def to_pandas(self):
        """A pandas DataFrame with the CSV's columns (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self._data, columns=self.columns)

    def plot(self, columns=None, ax=None):
        """Plots the columns (all but t when None) against t with Matplotlib
        (needs matplotlib); returns the axes."""
        import matplotlib.pyplot as plt

        if columns is None:
            columns = self.columns[1:]
        elif isinstance(columns, str):
            columns = [columns]
        if ax is None:
            _, ax = plt.subplots()
        for c in columns:
            ax.plot(self.t, self[c], label=c)
        ax.set_xlabel("t [s]")
        ax.legend()
        return ax

    def __repr__(self):
        return f"Result({len(self)} rows × {len(self.columns)} columns, {len(self._event_kind)} events)"
