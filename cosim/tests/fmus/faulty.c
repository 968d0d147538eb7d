/* A small FMI 2.0 co-simulation FMU for the failure paths of the master
 * (cosim/tests/failures.rs, cli/tests/cli_cosim_end.rs). Built by the tests
 * with gcc against the FMI 2.0 headers of the Reference FMUs.
 *
 *   x' = -k x + u,  x(t0) = x0, integrated by forward Euler with the
 *   internal step DT = 1/64 s: x_{n+1} = x_n + DT (-k x_n + u), t_n = t0 + n DT.
 *
 * Parameters choose how a step fails:
 *   h_max    a step longer than h_max is discarded (fmi2Discard, the state
 *            unchanged, fmi2Terminated false) and counted in `discards`;
 *   fail_at  a step that would end after fail_at returns fmi2Error;
 *   end_at   the first internal step reaching t >= end_at ends the
 *            simulation (fmi2Discard, fmi2Terminated true,
 *            fmi2LastSuccessfulTime = that t).
 * Value references: 0 x (output), 1 u (input), 2 k, 3 x0, 4 h_max,
 * 5 fail_at, 6 end_at (parameters), 7 discards (integer output).
 * Saved states (fmi2GetFMUstate) hold x, u and the step counter, not the
 * discard count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

#define DT (1.0 / 64.0)

typedef struct {
    double x, u;
    long n;
} State;

typedef struct {
    State s;
    double t0, k, x0, h_max, fail_at, end_at;
    int discards, terminated, initialised;
    double last_successful;
    fmi2CallbackFunctions cb;
    char name[64];
} Model;

static double now(const Model *m) { return m->t0 + (double)m->s.n * DT; }

static void say(Model *m, fmi2Status status, const char *msg) {
    if (m->cb.logger) m->cb.logger(m->cb.componentEnvironment, m->name, status, "logStatusError", msg);
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) {
    (void)c; (void)on; (void)n; (void)cat;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String res,
                              const fmi2CallbackFunctions *cb, fmi2Boolean visible,
                              fmi2Boolean logging) {
    (void)res; (void)visible; (void)logging;
    if (type != fmi2CoSimulation || !guid || strcmp(guid, "{faulty-test-fmu}") != 0) return NULL;
    Model *m = calloc(1, sizeof(Model));
    if (!m) return NULL;
    if (cb) m->cb = *cb;
    strncpy(m->name, name ? name : "faulty", sizeof m->name - 1);
    m->k = 1.0;
    m->x0 = 1.0;
    m->h_max = 1e30;
    m->fail_at = 1e30;
    m->end_at = 1e30;
    return m;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_defined, fmi2Real tol,
                               fmi2Real start, fmi2Boolean stop_defined, fmi2Real stop) {
    (void)tol_defined; (void)tol; (void)stop_defined; (void)stop;
    ((Model *)c)->t0 = start;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }

fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    Model *m = c;
    m->s.x = m->x0;
    m->s.n = 0;
    m->initialised = 1;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2Reset(fmi2Component c) { (void)c; return fmi2Error; }

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    Model *m = c;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 0: v[i] = m->initialised ? m->s.x : m->x0; break;
        case 1: v[i] = m->s.u; break;
        case 2: v[i] = m->k; break;
        case 3: v[i] = m->x0; break;
        case 4: v[i] = m->h_max; break;
        case 5: v[i] = m->fail_at; break;
        case 6: v[i] = m->end_at; break;
        default: return fmi2Error;
        }
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                       const fmi2Real v[]) {
    Model *m = c;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 1: m->s.u = v[i]; break;
        case 2: m->k = v[i]; break;
        case 3: m->x0 = v[i]; break;
        case 4: m->h_max = v[i]; break;
        case 5: m->fail_at = v[i]; break;
        case 6: m->end_at = v[i]; break;
        default: return fmi2Error;
        }
    }
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          fmi2Integer v[]) {
    Model *m = c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != 7) return fmi2Error;
        v[i] = m->discards;
    }
    return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          const fmi2Integer v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          fmi2Boolean v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          const fmi2Boolean v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         fmi2String v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         const fmi2String v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {
    Model *m = c;
    State *s = *state ? (State *)*state : malloc(sizeof(State));
    if (!s) return fmi2Error;
    *s = m->s;
    *state = s;
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
    Model *m = c;
    if (!state) return fmi2Error;
    m->s = *(State *)state;
    m->terminated = 0;
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {
    (void)c;
    free(*state);
    *state = NULL;
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *size) {
    (void)c; (void)s;
    *size = sizeof(State);
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t size) {
    (void)c;
    if (size < sizeof(State)) return fmi2Error;
    memcpy(b, s, sizeof(State));
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t size,
                                   fmi2FMUstate *state) {
    (void)c;
    if (size < sizeof(State)) return fmi2Error;
    State *s = malloc(sizeof(State));
    if (!s) return fmi2Error;
    memcpy(s, b, sizeof(State));
    *state = s;
    return fmi2OK;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference a[], size_t na,
                                        const fmi2ValueReference b[], size_t nb,
                                        const fmi2Real d[], fmi2Real o[]) {
    (void)c; (void)a; (void)na; (void)b; (void)nb; (void)d; (void)o;
    return fmi2Error;
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer o[], const fmi2Real v[]) {
    (void)c; (void)vr; (void)n; (void)o; (void)v;
    return fmi2Error;
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer o[], fmi2Real v[]) {
    (void)c; (void)vr; (void)n; (void)o; (void)v;
    return fmi2Error;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean new_step) {
    Model *m = c;
    (void)new_step;
    m->last_successful = now(m);
    if (h > m->h_max * (1.0 + 1e-12)) {
        m->discards++;
        say(m, fmi2Discard, "step longer than h_max: discarded");
        return fmi2Discard;
    }
    if (t + h > m->fail_at + 1e-12) {
        say(m, fmi2Error, "the step crosses fail_at");
        return fmi2Error;
    }
    long steps = lround(h / DT);
    if (fabs((double)steps * DT - h) > 1e-12 || fabs(now(m) - t) > 1e-12) {
        say(m, fmi2Error, "a step that is not a whole number of internal steps");
        return fmi2Error;
    }
    for (long i = 0; i < steps; i++) {
        m->s.x += DT * (-m->k * m->s.x + m->s.u);
        m->s.n++;
        m->last_successful = now(m);
        if (now(m) >= m->end_at - 1e-12) {
            m->terminated = 1;
            say(m, fmi2Discard, "end_at reached: the simulation ends");
            return fmi2Discard;
        }
    }
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind k, fmi2Status *v) {
    (void)c; (void)k; (void)v;
    return fmi2Discard;
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k, fmi2Real *v) {
    Model *m = c;
    if (k != fmi2LastSuccessfulTime) return fmi2Discard;
    *v = m->last_successful;
    return fmi2OK;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind k, fmi2Integer *v) {
    (void)c; (void)k; (void)v;
    return fmi2Discard;
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind k, fmi2Boolean *v) {
    Model *m = c;
    if (k != fmi2Terminated) return fmi2Discard;
    *v = m->terminated;
    return fmi2OK;
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind k, fmi2String *v) {
    (void)c; (void)k; (void)v;
    return fmi2Discard;
}
