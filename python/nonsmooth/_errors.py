"""Exceptions raised by the nonsmooth package.

Every one carries the scenario file (``.file``), the line of the fault in it
when there is one (``.line``) and the message (``.message``, which starts
with ``file:line:column:`` when the fault is in the file).
"""


class NonsmoothError(Exception):
    """Base class of the package's errors."""

    def __init__(self, message, file=None, line=None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line

    def __reduce__(self):
        # Picklable with its fields (errors cross process boundaries).
        return (type(self), (self.message, self.file, self.line))


class ScenarioError(NonsmoothError):
    """Bad input: a scenario that cannot be read or built, an unknown
    parameter, a bad option or metric."""


class SimulationError(NonsmoothError):
    """A simulation that stopped with an error (a solver that failed, a
    non-finite state...)."""


class FmuExportError(NonsmoothError):
    """An FMU that could not be written: the runtime library missing or not
    a shared library, or the output file not writable."""
