/* A small FMI 3.0 co-simulation host that makes mistakes and checks that
 * the FMU answers each with fmi3Error (or fmi3Discard) and a log message,
 * never a crash. The declarations below are written from the FMI 3.0
 * standard's function signatures (only those this host calls).
 * It is run on the event-driven bouncing ball (cli/tests/fmi/ball_event_driven.toml).
 * Usage: bad_host3 LIBRARY.so RESOURCE_DIR TOKEN
 * Prints one line per check and "N passed, M failed"; exits 1 on failure. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void *Inst;
typedef void *State;
typedef uint32_t VR;
typedef enum { OK, Warning, Discard, Error, Fatal } Status;
typedef void (*LogFn)(void *env, Status status, const char *category, const char *message);

static int messages = 0;
static int passed = 0, failed = 0;

static void logger(void *env, Status status, const char *category, const char *message) {
    (void)env;
    (void)status;
    messages++;
    fprintf(stderr, "  %s: %s\n", category ? category : "?", message ? message : "?");
}

static void check(int ok, const char *what) {
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    if (ok) passed++; else failed++;
}

/* The call returned `want` and, unless the instance is NULL, logged. */
static void expect(Status got, Status want, int before, int logged, const char *what) {
    char buf[512];
    int has = messages > before;
    snprintf(buf, sizeof buf, "%s (status %d, %s)", what, (int)got, has ? "logged" : "not logged");
    check(got == want && (!logged || has), buf);
}

#define SYM(ret, name, args) ret(*name) args = (ret(*) args)dlsym(lib, #name); \
    if (!name) { printf("FAILED: %s not exported\n", #name); return 1; }

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: bad_host3 LIBRARY.so RESOURCE_DIR TOKEN\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { printf("FAILED: dlopen: %s\n", dlerror()); return 1; }
    const char *res = argv[2], *token = argv[3];

    SYM(Inst, fmi3InstantiateCoSimulation, (const char *, const char *, const char *, bool, bool,
        bool, bool, const VR *, size_t, void *, LogFn, void *))
    SYM(Inst, fmi3InstantiateModelExchange, (const char *, const char *, const char *, bool, bool,
        void *, LogFn))
    SYM(void, fmi3FreeInstance, (Inst))
    SYM(Status, fmi3EnterInitializationMode, (Inst, bool, double, double, bool, double))
    SYM(Status, fmi3ExitInitializationMode, (Inst))
    SYM(Status, fmi3EnterEventMode, (Inst))
    SYM(Status, fmi3EnterStepMode, (Inst))
    SYM(Status, fmi3UpdateDiscreteStates, (Inst, bool *, bool *, bool *, bool *, bool *, double *))
    SYM(Status, fmi3DoStep, (Inst, double, double, bool, bool *, bool *, bool *, double *))
    SYM(Status, fmi3GetFloat64, (Inst, const VR *, size_t, double *, size_t))
    SYM(Status, fmi3SetFloat64, (Inst, const VR *, size_t, const double *, size_t))
    SYM(Status, fmi3GetInt32, (Inst, const VR *, size_t, int32_t *, size_t))
    SYM(Status, fmi3SetBoolean, (Inst, const VR *, size_t, const bool *, size_t))
    SYM(Status, fmi3GetFMUState, (Inst, State *))
    SYM(Status, fmi3SetFMUState, (Inst, State))
    SYM(Status, fmi3FreeFMUState, (Inst, State *))
    SYM(Status, fmi3Terminate, (Inst))
    SYM(Status, fmi3GetContinuousStates, (Inst, double *, size_t))
    SYM(Status, fmi3GetClock, (Inst, const VR *, size_t, bool *))

    int before;
    bool a, b, c, d, e;
    double t = 0, x[4];
    VR vr0 = 0, bad = 100000;

    /* Instantiation mistakes: NULL, no crash. */
    before = messages;
    check(!fmi3InstantiateCoSimulation("x", "{wrong}", res, 0, 0, 0, 0, NULL, 0, NULL, logger, NULL)
          && messages > before, "wrong instantiation token: NULL, logged");
    check(!fmi3InstantiateCoSimulation(NULL, token, res, 0, 0, 0, 0, NULL, 0, NULL, logger, NULL),
          "NULL instance name: NULL");
    check(!fmi3InstantiateCoSimulation("x", token, NULL, 0, 0, 0, 0, NULL, 0, NULL, NULL, NULL),
          "NULL resource path and logger: NULL");
    check(!fmi3InstantiateCoSimulation("x", token, "/nonexistent/", 0, 0, 0, 0, NULL, 0, NULL,
          logger, NULL), "missing resources: NULL");
    check(!fmi3InstantiateModelExchange("x", token, res, 0, 0, NULL, logger),
          "model exchange: NULL");

    /* NULL instance. */
    expect(fmi3DoStep(NULL, 0, 0.1, 0, &a, &b, &c, &t), Error, messages, 0, "DoStep(NULL)");
    expect(fmi3ExitInitializationMode(NULL), Error, messages, 0, "ExitInitializationMode(NULL)");
    fmi3FreeInstance(NULL);
    check(1, "FreeInstance(NULL) does nothing");

    /* A host without event mode. */
    Inst s = fmi3InstantiateCoSimulation("plain", token, res, 0, 0, 0, 0, NULL, 0, NULL, logger,
                                         NULL);
    check(s != NULL, "instantiate without event mode");
    if (!s) goto done;
    before = messages;
    expect(fmi3DoStep(s, 0, 0.1, 0, &a, &b, &c, &t), Error, before, 1,
           "DoStep before initialization");
    before = messages;
    expect(fmi3ExitInitializationMode(s), Error, before, 1, "ExitInitializationMode first");
    before = messages;
    expect(fmi3GetFMUState(s, NULL), Error, before, 1, "GetFMUState(NULL)");
    expect(fmi3EnterInitializationMode(s, 0, 0, 0, 1, 1.0), OK, messages, 0, "initialization");
    before = messages;
    expect(fmi3EnterInitializationMode(s, 0, 0, 0, 1, 1.0), Error, before, 1,
           "initialization twice");
    expect(fmi3ExitInitializationMode(s), OK, messages, 0, "exit initialization");
    before = messages;
    expect(fmi3EnterEventMode(s), Error, before, 1, "EnterEventMode without event mode");
    before = messages;
    expect(fmi3UpdateDiscreteStates(s, &a, &b, &c, &d, &e, &t), Error, before, 1,
           "UpdateDiscreteStates without event mode");
    before = messages;
    expect(fmi3EnterStepMode(s), Error, before, 1, "EnterStepMode without event mode");
    before = messages;
    expect(fmi3DoStep(s, 0, 0.1, 0, NULL, &b, &c, &t), Error, before, 1,
           "DoStep with a NULL output");
    before = messages;
    expect(fmi3DoStep(s, 0, -0.1, 0, &a, &b, &c, &t), Error, before, 1, "negative step");
    before = messages;
    expect(fmi3DoStep(s, 0.5, 0.1, 0, &a, &b, &c, &t), Error, before, 1,
           "currentCommunicationPoint not the FMU's time");
    before = messages;
    expect(fmi3GetFloat64(s, &vr0, 1, NULL, 1), Error, before, 1, "GetFloat64 into NULL");
    before = messages;
    expect(fmi3GetFloat64(s, &bad, 1, x, 1), Error, before, 1, "unknown value reference");
    before = messages;
    expect(fmi3GetFloat64(s, &vr0, 1, x, 2), Error, before, 1, "nValues not nValueReferences");
    before = messages;
    expect(fmi3GetInt32(s, &vr0, 1, (int32_t *)x, 1), Error, before, 1, "GetInt32: no such variable");
    bool bv = 1;
    before = messages;
    expect(fmi3SetBoolean(s, &vr0, 1, &bv, 1), Error, before, 1, "SetBoolean: no such variable");
    expect(fmi3GetInt32(s, NULL, 0, NULL, 0), OK, messages, 0, "GetInt32 of nothing");
    before = messages;
    expect(fmi3GetContinuousStates(s, x, 1), Error, before, 1, "model-exchange call");
    before = messages;
    expect(fmi3GetClock(s, &vr0, 1, &bv), Error, before, 1, "clock call");
    before = messages;
    expect(fmi3SetFMUState(s, (State)x), Error, before, 1, "foreign FMU state");
    /* The event-driven ball saves its state: a step to the stop time, back
       to t = 0, the same step again gives the same outputs bit for bit. */
    State st = NULL;
    expect(fmi3GetFMUState(s, &st), OK, messages, 0, "GetFMUState of an event-driven FMU");
    check(st != NULL, "a state handed out");
    /* Every variable (8 parameters, the input, 8 outputs), not time. */
    VR all[17];
    for (int k = 0; k < 17; k++) all[k] = (VR)k;
    double first[17], again[17];
    expect(fmi3DoStep(s, 0, 1.0, 0, &a, &b, &c, &t), OK, messages, 0, "a step to the stop time");
    expect(fmi3GetFloat64(s, all, 17, first, 17), OK, messages, 0, "outputs after the step");
    expect(fmi3SetFMUState(s, st), OK, messages, 0, "SetFMUState back to t = 0");
    expect(fmi3DoStep(s, 0, 1.0, 0, &a, &b, &c, &t), OK, messages, 0, "the same step again");
    expect(fmi3GetFloat64(s, all, 17, again, 17), OK, messages, 0, "outputs after it");
    check(memcmp(first, again, sizeof first) == 0, "the same outputs, bit for bit");
    expect(fmi3FreeFMUState(s, &st), OK, messages, 0, "FreeFMUState");
    check(st == NULL, "the freed handle is set to NULL");
    check(!c, "no early return: the host did not allow it");
    before = messages;
    expect(fmi3DoStep(s, 1.0, 0.5, 0, &a, &b, &c, &t), Discard, before, 1,
           "a step past the stop time");
    check(b, "terminateSimulation after the stop time");
    expect(fmi3Terminate(s), OK, messages, 0, "terminate");
    before = messages;
    expect(fmi3DoStep(s, 1.0, 0.1, 0, &a, &b, &c, &t), Error, before, 1, "DoStep after terminate");
    fmi3FreeInstance(s);

    /* A host with event mode: step mode must be entered first. */
    Inst v = fmi3InstantiateCoSimulation("events", token, res, 0, 0, 1, 1, NULL, 0, NULL, logger,
                                         NULL);
    check(v != NULL, "instantiate with event mode");
    if (!v) goto done;
    expect(fmi3EnterInitializationMode(v, 0, 0, 0, 0, 0), OK, messages, 0, "initialization");
    expect(fmi3ExitInitializationMode(v), OK, messages, 0, "exit initialization (event mode)");
    before = messages;
    expect(fmi3DoStep(v, 0, 0.1, 0, &a, &b, &c, &t), Error, before, 1, "DoStep in event mode");
    before = messages;
    expect(fmi3UpdateDiscreteStates(v, &a, NULL, &c, &d, &e, &t), Error, before, 1,
           "UpdateDiscreteStates with a NULL output");
    expect(fmi3UpdateDiscreteStates(v, &a, &b, &c, &d, &e, &t), OK, messages, 0,
           "UpdateDiscreteStates");
    expect(fmi3EnterStepMode(v), OK, messages, 0, "EnterStepMode");
    before = messages;
    expect(fmi3EnterStepMode(v), Error, before, 1, "EnterStepMode twice");
    expect(fmi3DoStep(v, 0, 0.5, 0, &a, &b, &c, &t), OK, messages, 0, "DoStep with early return");
    check(c && t > 0.42 && t < 0.43, "early return at the first impact");
    /* Two phases: the step stopped at the impact's left limit; the update
       applies the impact law. ball.v[0] is value reference 12. */
    VR vr_v = 12;
    double t_hit = t, v_minus = 0, v_plus = 0, v_again = 0, t_after = -1;
    expect(fmi3GetFloat64(v, &vr_v, 1, &v_minus, 1), OK, messages, 0, "velocity at the early return");
    check(v_minus < -3.0, "the velocity before the impact (falling)");
    before = messages;
    expect(fmi3DoStep(v, t_hit, 0.1, 1, &a, &b, &c, &t_after), Error, before, 1,
           "DoStep while the event's update is pending");
    expect(fmi3GetFloat64(v, &vr_v, 1, &v_again, 1), OK, messages, 0, "velocity after the refused step");
    check(v_again == v_minus, "the refused step changed nothing");
    expect(fmi3EnterEventMode(v), OK, messages, 0, "EnterEventMode at the event");
    before = messages;
    expect(fmi3EnterStepMode(v), Error, before, 1, "EnterStepMode before UpdateDiscreteStates");
    State left = NULL;
    expect(fmi3GetFMUState(v, &left), OK, messages, 0, "GetFMUState at the left limit");
    d = 0;
    expect(fmi3UpdateDiscreteStates(v, &a, &b, &c, &d, &e, &t), OK, messages, 0,
           "UpdateDiscreteStates applies the impact");
    check(!a && d, "valuesOfContinuousStatesChanged, no further update needed");
    expect(fmi3GetFloat64(v, &vr_v, 1, &v_plus, 1), OK, messages, 0, "velocity after the update");
    check(v_plus > 0 && (v_plus + 0.9 * v_minus) <= 1e-12 * -v_minus
              && (v_plus + 0.9 * v_minus) >= -1e-12 * -v_minus,
          "v+ = -e v- after the update");
    d = 1;
    expect(fmi3UpdateDiscreteStates(v, &a, &b, &c, &d, &e, &t), OK, messages, 0,
           "UpdateDiscreteStates twice");
    expect(fmi3GetFloat64(v, &vr_v, 1, &v_again, 1), OK, messages, 0, "velocity after it");
    check(!d && v_again == v_plus, "the second update is a no-op");
    expect(fmi3SetFMUState(v, left), OK, messages, 0, "SetFMUState back to the left limit");
    expect(fmi3GetFloat64(v, &vr_v, 1, &v_again, 1), OK, messages, 0, "velocity restored");
    check(v_again == v_minus, "the left limit restored bit for bit");
    d = 0;
    expect(fmi3UpdateDiscreteStates(v, &a, &b, &c, &d, &e, &t), OK, messages, 0,
           "UpdateDiscreteStates after the restore");
    expect(fmi3GetFloat64(v, &vr_v, 1, &v_again, 1), OK, messages, 0, "velocity after it");
    check(d && v_again == v_plus, "the same impact again, bit for bit");
    expect(fmi3FreeFMUState(v, &left), OK, messages, 0, "FreeFMUState");
    expect(fmi3EnterStepMode(v), OK, messages, 0, "EnterStepMode after the update");
    expect(fmi3DoStep(v, t_hit, 0.05, 1, &a, &b, &c, &t_after), OK, messages, 0,
           "the step after the impact");
    fmi3FreeInstance(v);

done:
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
