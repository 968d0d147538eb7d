"""A mass-spring-damper with an input force, packaged by pythonfmu as an
FMI 2.0 co-simulation FMU (cosim/tests/third_party.rs):
    m x'' = -k x - c x' + F
stepped by its own integrator: semi-implicit (symplectic) Euler with a
fixed internal step dt = step_size / substeps,
    v <- v + dt (-k x - c v + F) / m,   x <- x + dt v."""

from pythonfmu import Fmi2Causality, Fmi2Variability, Fmi2Slave, Real, Integer


class Msd(Fmi2Slave):
    # No `author`: the fmi crate 0.7 (fmi-schema 0.7) rejects the FMI 2.0
    # attribute fmiModelDescription/@author as unknown
    # (docs/cosimulation.md, "Not yet").
    description = "mass-spring-damper with input force"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.m = 1.0
        self.k = 4.0
        self.c = 0.4
        self.substeps = 10
        self.F = 0.0
        self.x = 1.0
        self.v = 0.0
        for name in ("m", "k", "c"):
            self.register_variable(Real(name, causality=Fmi2Causality.parameter,
                                        variability=Fmi2Variability.fixed))
        self.register_variable(Integer("substeps", causality=Fmi2Causality.parameter,
                                       variability=Fmi2Variability.fixed))
        self.register_variable(Real("F", causality=Fmi2Causality.input))
        self.register_variable(Real("x", causality=Fmi2Causality.output))
        self.register_variable(Real("v", causality=Fmi2Causality.output))

    def do_step(self, current_time, step_size):
        dt = step_size / self.substeps
        for _ in range(self.substeps):
            self.v = self.v + dt * (-self.k * self.x - self.c * self.v + self.F) / self.m
            self.x = self.x + dt * self.v
        return True
