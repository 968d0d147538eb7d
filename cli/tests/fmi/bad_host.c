/* A small FMI 2.0 host that makes every mistake it can and checks that the
 * FMU answers each with fmi2Error or fmi2Discard and a log message, never a
 * crash. Usage: bad_host LIBRARY.so RESOURCE_URI GUID
 * Prints one line per check and "N passed, M failed"; exits 1 on failure. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *fmi2Component;
typedef void *fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Boolean;
typedef int fmi2Integer;
typedef const char *fmi2String;
typedef char fmi2Byte;
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;

typedef struct {
    void (*logger)(void *, fmi2String, fmi2Status, fmi2String, fmi2String, ...);
    void *(*allocateMemory)(size_t, size_t);
    void (*freeMemory)(void *);
    void (*stepFinished)(void *, fmi2Status);
    void *componentEnvironment;
} fmi2CallbackFunctions;

static int messages = 0;
static char last[2048];

static void logger(void *env, fmi2String name, fmi2Status status, fmi2String category,
                   fmi2String message, ...) {
    va_list ap;
    (void)env;
    (void)status;
    va_start(ap, message);
    vsnprintf(last, sizeof last, message, ap);
    va_end(ap);
    messages++;
    fprintf(stderr, "  [%s] %s: %s\n", name ? name : "?", category ? category : "?", last);
}

static int passed = 0, failed = 0;

static void check(int ok, const char *what) {
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    if (ok) passed++; else failed++;
}

/* The call returned `want` (one of two statuses) and logged a message. */
static void expect(fmi2Status got, fmi2Status want, int before, const char *what) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s (status %d, %s)", what, (int)got,
             messages > before ? "logged" : "NOT logged");
    check(got == want && messages > before, buf);
}

#define SYM(ret, name, args) ret(*name) args = (ret(*) args)dlsym(lib, #name); \
    if (!name) { fprintf(stderr, "missing symbol %s\n", #name); return 2; }

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: bad_host LIBRARY RESOURCE_URI GUID\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
    const char *uri = argv[2], *guid = argv[3];

    SYM(fmi2Component, fmi2Instantiate, (fmi2String, int, fmi2String, fmi2String, const fmi2CallbackFunctions *, fmi2Boolean, fmi2Boolean))
    SYM(void, fmi2FreeInstance, (fmi2Component))
    SYM(fmi2Status, fmi2SetDebugLogging, (fmi2Component, fmi2Boolean, size_t, const fmi2String *))
    SYM(fmi2Status, fmi2SetupExperiment, (fmi2Component, fmi2Boolean, fmi2Real, fmi2Real, fmi2Boolean, fmi2Real))
    SYM(fmi2Status, fmi2EnterInitializationMode, (fmi2Component))
    SYM(fmi2Status, fmi2ExitInitializationMode, (fmi2Component))
    SYM(fmi2Status, fmi2Terminate, (fmi2Component))
    SYM(fmi2Status, fmi2Reset, (fmi2Component))
    SYM(fmi2Status, fmi2GetReal, (fmi2Component, const fmi2ValueReference *, size_t, fmi2Real *))
    SYM(fmi2Status, fmi2SetReal, (fmi2Component, const fmi2ValueReference *, size_t, const fmi2Real *))
    SYM(fmi2Status, fmi2GetInteger, (fmi2Component, const fmi2ValueReference *, size_t, fmi2Integer *))
    SYM(fmi2Status, fmi2SetString, (fmi2Component, const fmi2ValueReference *, size_t, const fmi2String *))
    SYM(fmi2Status, fmi2DoStep, (fmi2Component, fmi2Real, fmi2Real, fmi2Boolean))
    SYM(fmi2Status, fmi2CancelStep, (fmi2Component))
    SYM(fmi2Status, fmi2GetFMUstate, (fmi2Component, fmi2FMUstate *))
    SYM(fmi2Status, fmi2SetFMUstate, (fmi2Component, fmi2FMUstate))
    SYM(fmi2Status, fmi2FreeFMUstate, (fmi2Component, fmi2FMUstate *))
    SYM(fmi2Status, fmi2SerializedFMUstateSize, (fmi2Component, fmi2FMUstate, size_t *))
    SYM(fmi2Status, fmi2SerializeFMUstate, (fmi2Component, fmi2FMUstate, fmi2Byte *, size_t))
    SYM(fmi2Status, fmi2DeSerializeFMUstate, (fmi2Component, const fmi2Byte *, size_t, fmi2FMUstate *))
    SYM(fmi2Status, fmi2GetStatus, (fmi2Component, int, fmi2Status *))
    SYM(fmi2Status, fmi2GetRealStatus, (fmi2Component, int, fmi2Real *))
    SYM(fmi2Status, fmi2GetBooleanStatus, (fmi2Component, int, fmi2Boolean *))
    SYM(fmi2Status, fmi2GetDirectionalDerivative, (fmi2Component, const fmi2ValueReference *, size_t, const fmi2ValueReference *, size_t, const fmi2Real *, fmi2Real *))
    SYM(fmi2Status, fmi2SetRealInputDerivatives, (fmi2Component, const fmi2ValueReference *, size_t, const fmi2Integer *, const fmi2Real *))
    SYM(const char *, fmi2GetVersion, (void))
    SYM(const char *, fmi2GetTypesPlatform, (void))

    check(strcmp(fmi2GetVersion(), "2.0") == 0, "fmi2GetVersion is 2.0");
    check(strcmp(fmi2GetTypesPlatform(), "default") == 0, "fmi2GetTypesPlatform is default");

    fmi2CallbackFunctions fns = {logger, calloc, free, NULL, NULL};
    fmi2CallbackFunctions no_logger = {NULL, calloc, free, NULL, NULL};
    int before;

    /* Instantiation mistakes: NULL, with a message where a logger exists. */
    check(fmi2Instantiate("a", 1, guid, uri, NULL, 0, 0) == NULL, "NULL callback functions: NULL instance");
    check(fmi2Instantiate("a", 1, guid, uri, &no_logger, 0, 0) == NULL, "NULL logger: NULL instance");
    before = messages;
    check(fmi2Instantiate("a", 1, "{wrong}", uri, &fns, 0, 0) == NULL && messages > before, "wrong GUID: NULL, logged");
    before = messages;
    check(fmi2Instantiate("a", 0, guid, uri, &fns, 0, 0) == NULL && messages > before, "model exchange requested: NULL, logged");
    before = messages;
    check(fmi2Instantiate("a", 1, guid, NULL, &fns, 0, 0) == NULL && messages > before, "NULL resource location: NULL, logged");
    before = messages;
    check(fmi2Instantiate("a", 1, guid, "file:///no/such/dir", &fns, 0, 0) == NULL && messages > before, "missing resources: NULL, logged");
    before = messages;
    check(fmi2Instantiate("a", 1, guid, "http://host/x", &fns, 0, 0) == NULL && messages > before, "non-file URI: NULL, logged");
    before = messages;
    check(fmi2Instantiate(NULL, 1, guid, uri, &fns, 0, 0) == NULL && messages > before, "NULL instance name: NULL, logged");
    before = messages;
    check(fmi2Instantiate("a", 1, NULL, uri, &fns, 0, 0) == NULL && messages > before, "NULL GUID: NULL, logged");

    fmi2Component c = fmi2Instantiate("a", 1, guid, uri, &fns, 0, 0);
    check(c != NULL, "good instantiation");
    if (!c) { printf("%d passed, %d failed\n", passed, failed + 1); return 1; }

    /* A NULL component: an error, no crash. */
    check(fmi2DoStep(NULL, 0, 0.1, 0) == fmi2Error, "NULL component: fmi2DoStep error");
    check(fmi2GetReal(NULL, NULL, 0, NULL) == fmi2Error, "NULL component: fmi2GetReal error");
    fmi2FreeInstance(NULL);
    check(1, "fmi2FreeInstance(NULL) returns");

    /* Out of order. */
    before = messages; expect(fmi2DoStep(c, 0, 0.005, 0), fmi2Error, before, "fmi2DoStep before initialization");
    before = messages; expect(fmi2ExitInitializationMode(c), fmi2Error, before, "exit before enter");
    before = messages; expect(fmi2Terminate(c), fmi2Error, before, "terminate before initialization");
    fmi2FMUstate s = NULL;
    before = messages; expect(fmi2GetFMUstate(c, &s), fmi2Error, before, "fmi2GetFMUstate before initialization");
    before = messages; expect(fmi2SetupExperiment(c, 0, 0, 1.0, 1, 0.5), fmi2Error, before, "stop time before start time");

    /* NULL arrays and unknown value references. */
    fmi2ValueReference vr_q = 9, vr_bad = 4242, vr_radius = 3, vr_push = 8;
    fmi2Real x = 0;
    before = messages; expect(fmi2GetReal(c, NULL, 1, &x), fmi2Error, before, "fmi2GetReal with NULL vr");
    before = messages; expect(fmi2GetReal(c, &vr_q, 1, NULL), fmi2Error, before, "fmi2GetReal with NULL value");
    before = messages; expect(fmi2SetReal(c, &vr_bad, 1, &x), fmi2Error, before, "fmi2SetReal of an unknown vr");
    before = messages; expect(fmi2GetReal(c, &vr_bad, 1, &x), fmi2Error, before, "fmi2GetReal of an unknown vr");
    fmi2Integer i = 0;
    before = messages; expect(fmi2GetInteger(c, &vr_q, 1, &i), fmi2Error, before, "fmi2GetInteger (no Integer variables)");
    check(fmi2GetInteger(c, NULL, 0, NULL) == fmi2OK, "fmi2GetInteger of nothing is fine");
    fmi2String str = "x";
    before = messages; expect(fmi2SetString(c, &vr_q, 1, &str), fmi2Error, before, "fmi2SetString (no String variables)");
    fmi2String cats[2] = {"logEvents", NULL};
    before = messages; expect(fmi2SetDebugLogging(c, 1, 1, NULL), fmi2Error, before, "debug logging with NULL categories");
    before = messages; expect(fmi2SetDebugLogging(c, 1, 2, cats), fmi2Error, before, "debug logging with a NULL category");
    fmi2String bad_cat = "logNothing";
    before = messages; expect(fmi2SetDebugLogging(c, 1, 1, &bad_cat), fmi2Error, before, "unknown log category");

    /* Initialize properly (stop time 1 s). */
    check(fmi2SetupExperiment(c, 0, 0, 0.0, 1, 1.0) == fmi2OK, "fmi2SetupExperiment");
    check(fmi2EnterInitializationMode(c) == fmi2OK, "fmi2EnterInitializationMode");
    before = messages; expect(fmi2EnterInitializationMode(c), fmi2Error, before, "enter initialization twice");
    check(fmi2ExitInitializationMode(c) == fmi2OK, "fmi2ExitInitializationMode");

    /* Bad steps. */
    before = messages; expect(fmi2DoStep(c, 0, 0.0, 0), fmi2Error, before, "zero communication step");
    before = messages; expect(fmi2DoStep(c, 0, -0.005, 0), fmi2Error, before, "negative communication step");
    before = messages; expect(fmi2DoStep(c, 0, NAN, 0), fmi2Error, before, "NaN communication step");
    before = messages; expect(fmi2DoStep(c, 0.3, 0.005, 0), fmi2Error, before, "wrong current communication point");
    fmi2Real r = 0.2;
    before = messages; expect(fmi2SetReal(c, &vr_radius, 1, &r), fmi2Error, before, "fixed parameter after initialization");
    before = messages; expect(fmi2SetReal(c, &vr_q, 1, &r), fmi2Error, before, "setting an output");
    r = INFINITY;
    before = messages; expect(fmi2SetReal(c, &vr_push, 1, &r), fmi2Error, before, "infinite input");
    before = messages; expect(fmi2CancelStep(c), fmi2Error, before, "fmi2CancelStep");
    fmi2Status st;
    before = messages; expect(fmi2GetStatus(c, 0, &st), fmi2Error, before, "fmi2GetStatus(fmi2DoStepStatus)");
    before = messages; expect(fmi2GetDirectionalDerivative(c, NULL, 0, NULL, 0, NULL, NULL), fmi2Error, before, "fmi2GetDirectionalDerivative");
    before = messages; expect(fmi2SetRealInputDerivatives(c, NULL, 0, NULL, NULL), fmi2Error, before, "fmi2SetRealInputDerivatives");

    /* The instance still works: 100 steps, then compare with a second instance. */
    fmi2Real t = 0;
    int ok = 1;
    for (int k = 0; k < 100; k++) { ok &= fmi2DoStep(c, t, 0.005, 0) == fmi2OK; t += 0.005; }
    check(ok, "100 steps after the mistakes");
    fmi2Real q_a = 0;
    fmi2GetReal(c, &vr_q, 1, &q_a);

    fmi2Component d = fmi2Instantiate("b", 1, guid, uri, &fns, 0, 0);
    check(d != NULL, "second instance");
    fmi2SetupExperiment(d, 0, 0, 0.0, 0, 0.0);
    fmi2EnterInitializationMode(d);
    fmi2ExitInitializationMode(d);
    fmi2Real td = 0;
    for (int k = 0; k < 100; k++) { fmi2DoStep(d, td, 0.005, 0); td += 0.005; }
    fmi2Real q_b = -1;
    fmi2GetReal(d, &vr_q, 1, &q_b);
    check(q_a == q_b && q_a < 1.0, "two instances agree after the same steps");

    /* FMU states: misuse. */
    before = messages; expect(fmi2GetFMUstate(c, NULL), fmi2Error, before, "fmi2GetFMUstate(NULL)");
    check(fmi2GetFMUstate(c, &s) == fmi2OK && s != NULL, "fmi2GetFMUstate");
    fmi2FMUstate foreign = (fmi2FMUstate)&x;
    before = messages; expect(fmi2SetFMUstate(c, foreign), fmi2Error, before, "fmi2SetFMUstate with a foreign pointer");
    before = messages; expect(fmi2SetFMUstate(d, s), fmi2Error, before, "fmi2SetFMUstate with another instance's state");
    before = messages; expect(fmi2SetFMUstate(c, NULL), fmi2Error, before, "fmi2SetFMUstate(NULL)");
    size_t size = 0;
    check(fmi2SerializedFMUstateSize(c, s, &size) == fmi2OK && size > 0, "fmi2SerializedFMUstateSize");
    fmi2Byte *bytes = malloc(size);
    before = messages; expect(fmi2SerializeFMUstate(c, s, bytes, size - 1), fmi2Error, before, "serialize into a too small buffer");
    check(fmi2SerializeFMUstate(c, s, bytes, size) == fmi2OK, "fmi2SerializeFMUstate");
    fmi2FMUstate s2 = NULL;
    before = messages; expect(fmi2DeSerializeFMUstate(c, bytes, size - 3, &s2), fmi2Error, before, "deserialize truncated bytes");
    bytes[0] ^= 0x55;
    before = messages; expect(fmi2DeSerializeFMUstate(c, bytes, size, &s2), fmi2Error, before, "deserialize damaged bytes");
    bytes[0] ^= 0x55;
    check(fmi2DeSerializeFMUstate(d, bytes, size, &s2) == fmi2OK && s2 != NULL, "deserialize into another instance of the FMU");
    fmi2Real q_before = 0, q_after = 0, q_rolled = 0;
    fmi2GetReal(c, &vr_q, 1, &q_before);
    fmi2DoStep(c, t, 0.1, 0);
    fmi2GetReal(c, &vr_q, 1, &q_after);
    check(fmi2SetFMUstate(c, s) == fmi2OK, "fmi2SetFMUstate");
    fmi2GetReal(c, &vr_q, 1, &q_rolled);
    check(q_rolled == q_before && q_after != q_before, "rolled back to the saved output");
    check(fmi2DoStep(c, t, 0.1, 0) == fmi2OK, "the step again");
    fmi2Real q_again = 0;
    fmi2GetReal(c, &vr_q, 1, &q_again);
    check(q_again == q_after, "the step again gives the same output");
    check(fmi2SetFMUstate(d, s2) == fmi2OK, "deserialized state restored in the second instance");
    check(fmi2DoStep(d, t, 0.1, 0) == fmi2OK, "second instance steps from the restored state");
    fmi2Real q_d = 0;
    fmi2GetReal(d, &vr_q, 1, &q_d);
    check(q_d == q_after, "second instance gives the same output");

    fmi2FMUstate copy = s;
    check(fmi2FreeFMUstate(c, &s) == fmi2OK && s == NULL, "fmi2FreeFMUstate");
    before = messages; expect(fmi2FreeFMUstate(c, &copy), fmi2Error, before, "freeing a state twice");
    before = messages; expect(fmi2SetFMUstate(c, copy), fmi2Error, before, "setting a freed state");
    check(fmi2FreeFMUstate(c, &s) == fmi2OK, "freeing NULL is fine");
    free(bytes);

    /* Past the stop time: discarded, fmi2Terminated. */
    t += 0.1;
    before = messages; expect(fmi2DoStep(c, t, 5.0, 0), fmi2Discard, before, "a step past the stop time is discarded");
    fmi2Boolean term = 0;
    check(fmi2GetBooleanStatus(c, 3, &term) == fmi2OK && term, "fmi2Terminated is true");
    fmi2Real lst = -1;
    check(fmi2GetRealStatus(c, 2, &lst) == fmi2OK && fabs(lst - t) < 1e-12, "fmi2LastSuccessfulTime");
    before = messages; expect(fmi2DoStep(c, t, 0.005, 0), fmi2Error, before, "stepping after a discarded step");
    check(fmi2Terminate(c) == fmi2OK, "fmi2Terminate");
    before = messages; expect(fmi2SetReal(c, &vr_push, 1, &x), fmi2Error, before, "fmi2SetReal after terminate");
    check(fmi2Reset(c) == fmi2OK, "fmi2Reset");
    check(fmi2SetupExperiment(c, 0, 0, 0.0, 0, 0.0) == fmi2OK && fmi2EnterInitializationMode(c) == fmi2OK &&
              fmi2ExitInitializationMode(c) == fmi2OK && fmi2DoStep(c, 0.0, 0.005, 0) == fmi2OK,
          "usable after fmi2Reset");

    fmi2FMUstate leak = NULL;
    fmi2GetFMUstate(d, &leak); /* freed with the instance */
    fmi2FreeInstance(c);
    fmi2FreeInstance(d);
    check(1, "instances freed");

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
