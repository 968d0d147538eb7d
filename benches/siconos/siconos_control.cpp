// Siconos 4.4 side of the control benchmark: the sliding-mode tutorial loop
// (first-order plant A = 0, x0 = (1, -1), matched perturbation
// b(t) = (sin 50t, -sin 50t), B = (0, 2)^T, sensor C = I, sigma = x2, alpha = 1,
// theta = 0.5, integration step 1e-4, control period 1e-2, T = 1) run with
// ControlZOHSimulation and one of LinearSMC, ExplicitLinearSMC, LinearSMCOT2.
//
//   siconos_control LAW [--T T] [--repeat K] [--csv FILE]
//
// Prints "RESULT smc_<law> steps wall_s wall_us_per_step cpu_s cpu_us_per_step"
// (best of K runs; a run = build, initialise, simulate, store data).
#include <SiconosKernel.hpp>
#include <SiconosControl.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <string>

extern "C" void perturbation(double t, unsigned int n, double* b, unsigned int, double*) {
  b[0] = std::sin(50.0 * t);
  b[1] = -std::sin(50.0 * t);
}

static double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

struct Run {
  SP::ControlZOHSimulation sim;
  unsigned steps;
};

static Run smc_tutorial(const std::string& law, double T) {
  const double t0 = 0.0, h = 1e-4, hControl = 1e-2;
  SP::SiconosVector x0(new SiconosVector(2));
  (*x0)(0) = 1.0;
  (*x0)(1) = -1.0;
  SP::SimpleMatrix A(new SimpleMatrix(2, 2, 0.0));
  SP::FirstOrderLinearDS ds(new FirstOrderLinearDS(x0, A));
  ds->setComputebFunction(perturbation);
  SP::SimpleMatrix C(new SimpleMatrix(2, 2, 0.0));
  (*C)(0, 0) = 1.0;
  (*C)(1, 1) = 1.0;
  SP::SimpleMatrix Csurface(new SimpleMatrix(1, 2, 0.0));
  (*Csurface)(0, 1) = 1.0;
  SP::SimpleMatrix B(new SimpleMatrix(2, 1, 0.0));
  (*B)(1, 0) = 2.0;

  SP::ControlZOHSimulation sim(new ControlZOHSimulation(t0, T, h));
  sim->setSaveOnlyMainSimulation(true);
  sim->addDynamicalSystem(ds);
  SP::LinearSensor sensor(new LinearSensor(ds, C));
  sim->addSensor(sensor, hControl);
  SP::CommonSMC act;
  if (law == "implicit") {
    act.reset(new LinearSMC(sensor));
  } else if (law == "explicit") {
    act.reset(new ExplicitLinearSMC(sensor));
  } else if (law == "ot2") {
    act.reset(new LinearSMCOT2(sensor));
  } else {
    std::fprintf(stderr, "unknown law %s (implicit, explicit, ot2)\n", law.c_str());
    std::exit(2);
  }
  act->setCsurface(Csurface);
  act->setB(B);
  sim->addActuator(act, hControl);
  sim->initialize();
  Run r{sim, static_cast<unsigned>(std::llround((T - t0) / h))};
  return r;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s implicit|explicit|ot2 [--T T] [--repeat K] [--csv FILE]\n", argv[0]);
    return 2;
  }
  std::string law = argv[1];
  double T = 1.0;
  int repeat = 1;
  std::string csv;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--T")) T = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeat")) repeat = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--csv")) csv = argv[i + 1];
    else { std::fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
  }
  double best = std::numeric_limits<double>::infinity();
  double best_cpu = best;
  unsigned steps = 0;
  for (int k = 0; k < repeat; ++k) {
    double c0 = cpu_seconds();
    auto t0 = std::chrono::steady_clock::now();
    Run r = smc_tutorial(law, T);
    r.sim->run();
    auto t1 = std::chrono::steady_clock::now();
    double c1 = cpu_seconds();
    steps = r.steps;
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    best_cpu = std::min(best_cpu, c1 - c0);
    if (k == 0 && !csv.empty()) {
      SP::SimpleMatrix d = r.sim->data();
      std::ofstream f(csv);
      f << "# " << r.sim->dataLegend() << "\n";
      f.precision(17);
      for (unsigned i = 0; i < d->size(0); ++i) {
        for (unsigned j = 0; j < d->size(1); ++j) f << (j ? "," : "") << (*d)(i, j);
        f << "\n";
      }
    }
  }
  std::printf("RESULT smc_%s %u %.6g %.6g %.6g %.6g\n", law.c_str(), steps, best, 1e6 * best / steps,
              best_cpu, 1e6 * best_cpu / steps);
  return 0;
}
