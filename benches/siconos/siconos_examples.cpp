// Cost per time step of the bundled examples, computed with the Siconos 4.4 C++ API.
//
// The examples are built exactly as in tests/oracle/siconos_examples.py (same
// classes, same parameters); only the time-stepping loop is timed
// (std::chrono::steady_clock around `while (hasNextEvent()) { computeOneStep();
// nextStep(); }`), not the model construction nor Simulation::initialize().
//
// Usage:
//   siconos_examples bouncing_ball            [--T T] [--repeat R] [--csv FILE]
//   siconos_examples diode_bridge             [--T T] [--repeat R] [--csv FILE]
//   siconos_examples relay                    [--T T] [--repeat R] [--csv FILE]
//   siconos_examples beads_falling N          [--T T] [--repeat R] [--csv FILE]
//   siconos_examples beads_resting N          [--T T] [--repeat R] [--csv FILE]
//   siconos_examples beads_resting_overlap N  [--T T] [--repeat R] [--csv FILE]
//   siconos_examples bouncing_ball_ed         [--T T] [--repeat R] [--csv FILE]
//
// Prints one line:
//   RESULT <example> <N> <steps> <wall s> <wall us/step> <cpu s> <cpu us/step> <final state>
// wall = std::chrono::steady_clock, cpu = CLOCK_PROCESS_CPUTIME_ID (the same loop;
// on a loaded machine the CPU time is the steadier number).
// --repeat R builds and runs the case R times and reports the fastest run.
// --csv FILE records every step (same columns as tests/oracle/examples/*.csv);
// recording happens inside the loop, so use it to check results, not to time.
//
// One-step problem solvers are the defaults of the kernel classes:
// LCP() -> SICONOS_LCP_LEMKE, Relay() -> SICONOS_RELAY_AVI_CAOFERRIS, with
// the dense OSNS matrix storage (LinearOSNS default NM_DENSE).

#include <SiconosKernel.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <ctime>
#include <string>
#include <vector>

namespace {

struct Column {
  std::string name;
  std::function<double()> get;
};

struct Case {
  SP::NonSmoothDynamicalSystem nsds;
  SP::TimeStepping sim;
  // Event-driven cases: the simulation (sim is then null).
  SP::EventDriven ed;
  std::vector<Column> columns;
  std::function<std::string()> summary;
};

SP::SimpleMatrix mat(unsigned r, unsigned c, std::initializer_list<double> v) {
  SP::SimpleMatrix m(new SimpleMatrix(r, c));
  unsigned k = 0;
  for (double x : v) {
    (*m)(k / c, k % c) = x;
    ++k;
  }
  return m;
}

SP::SiconosVector vec(std::initializer_list<double> v) {
  SP::SiconosVector x(new SiconosVector(v.size()));
  unsigned k = 0;
  for (double a : v) (*x)(k++) = a;
  return x;
}

std::string fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

void lagrangian_columns(Case& c, const std::string& name, SP::LagrangianDS ds, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    c.columns.push_back({name + ".q[" + std::to_string(i) + "]", [ds, i] { return (*ds->q())(i); }});
  for (unsigned i = 0; i < n; ++i)
    c.columns.push_back(
        {name + ".v[" + std::to_string(i) + "]", [ds, i] { return (*ds->velocity())(i); }});
}

void first_order_columns(Case& c, const std::string& name, SP::FirstOrderLinearDS ds, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    c.columns.push_back({name + ".x[" + std::to_string(i) + "]", [ds, i] { return (*ds->x())(i); }});
}

void interaction_columns(Case& c, const std::string& name, SP::Interaction inter, unsigned n,
                         unsigned lambda_level) {
  for (unsigned i = 0; i < n; ++i)
    c.columns.push_back(
        {name + ".y[" + std::to_string(i) + "]", [inter, i] { return (*inter->y(0))(i); }});
  for (unsigned i = 0; i < n; ++i)
    c.columns.push_back({name + ".lambda[" + std::to_string(i) + "]",
                         [inter, i, lambda_level] { return (*inter->lambda(lambda_level))(i); }});
}

// 1. bouncing ball: LagrangianLinearTIDS + LagrangianLinearTIR (y = q0 - R), Newton impact.
Case bouncing_ball(double T) {
  const double m = 1.0, R = 0.1, g = 9.81, e = 0.9, theta = 0.5, h = 0.005;
  Case c;
  SP::LagrangianLinearTIDS ball(new LagrangianLinearTIDS(
      vec({1.0, 0.0, 0.0}), vec({0.0, 0.0, 0.0}), mat(3, 3, {m, 0, 0, 0, m, 0, 0, 0, 0.4 * m * R * R})));
  ball->setFExtPtr(vec({-m * g, 0.0, 0.0}));
  SP::LagrangianLinearTIR rel(new LagrangianLinearTIR(mat(1, 3, {1.0, 0.0, 0.0}), vec({-R})));
  SP::Interaction floor(new Interaction(SP::NonSmoothLaw(new NewtonImpactNSL(e)), rel));
  c.nsds.reset(new NonSmoothDynamicalSystem(0.0, T));
  c.nsds->insertDynamicalSystem(ball);
  c.nsds->link(floor, ball);
  SP::MoreauJeanOSI osi(new MoreauJeanOSI(theta));
  SP::TimeDiscretisation td(new TimeDiscretisation(0.0, h));
  SP::OneStepNSProblem lcp(new LCP());
  c.sim.reset(new TimeStepping(c.nsds, td, osi, lcp));
  lagrangian_columns(c, "ball", ball, 3);
  interaction_columns(c, "floor", floor, 1, 1);
  c.summary = [ball] { return "q0=" + fmt("%.17g", (*ball->q())(0)) + " v0=" + fmt("%.17g", (*ball->velocity())(0)); };
  return c;
}

// 1b. the same ball, event-driven: EventDriven + LsodarOSI (rtol = atol = 1e-10, as the
// nonsmooth event-driven default), impact LCP and acceleration LCP, outputs every 5e-3 s
// (the TimeDiscretisation of an EventDriven simulation gives its output instants).
Case bouncing_ball_ed(double T) {
  const double m = 1.0, R = 0.1, g = 9.81, e = 0.9, h = 0.005;
  Case c;
  SP::LagrangianLinearTIDS ball(new LagrangianLinearTIDS(
      vec({1.0, 0.0, 0.0}), vec({0.0, 0.0, 0.0}), mat(3, 3, {m, 0, 0, 0, m, 0, 0, 0, 0.4 * m * R * R})));
  ball->setFExtPtr(vec({-m * g, 0.0, 0.0}));
  SP::LagrangianLinearTIR rel(new LagrangianLinearTIR(mat(1, 3, {1.0, 0.0, 0.0}), vec({-R})));
  SP::Interaction floor(new Interaction(SP::NonSmoothLaw(new NewtonImpactNSL(e)), rel));
  c.nsds.reset(new NonSmoothDynamicalSystem(0.0, T));
  c.nsds->insertDynamicalSystem(ball);
  c.nsds->link(floor, ball);
  SP::LsodarOSI osi(new LsodarOSI());
  osi->setTol(1, 1e-10, 1e-10);
  SP::TimeDiscretisation td(new TimeDiscretisation(0.0, h));
  c.ed.reset(new EventDriven(c.nsds, td));
  c.ed->insertIntegrator(osi);
  // With the default tolerance of the event classification (2.2e-12) the run stops with a
  // penetration exception (y = -3.0e-12 < -TOL_ED) at t = 8.13 s, in the accumulation of
  // impacts; 1e-11 is the smallest value tried (1e-11, 3e-11, 1e-10, 1e-8, 1e-6) that reaches
  // T = 10 (the ball then rests, v = 9e-12). SICONOS_TOL_ED overrides it.
  const char* tol = std::getenv("SICONOS_TOL_ED");
  c.ed->setToleranceED(tol ? std::atof(tol) : 1e-11);
  c.ed->insertNonSmoothProblem(SP::OneStepNSProblem(new LCP()), SICONOS_OSNSP_ED_IMPACT);
  c.ed->insertNonSmoothProblem(SP::OneStepNSProblem(new LCP()), SICONOS_OSNSP_ED_SMOOTH_ACC);
  lagrangian_columns(c, "ball", ball, 3);
  interaction_columns(c, "floor", floor, 1, 2);
  c.summary = [ball] { return "q0=" + fmt("%.17g", (*ball->q())(0)) + " v0=" + fmt("%.17g", (*ball->velocity())(0)); };
  return c;
}

// 2. diode bridge: FirstOrderLinearDS + FirstOrderLinearTIR, 4 complementarity conditions.
Case diode_bridge(double T) {
  const double L = 1e-2, C = 1e-6, R = 1e3, theta = 0.5, h = 1e-6;
  Case c;
  SP::FirstOrderLinearDS circuit(
      new FirstOrderLinearDS(vec({10.0, 0.0}), mat(2, 2, {0.0, -1.0 / C, 1.0 / L, 0.0})));
  SP::SimpleMatrix Cm = mat(4, 2, {0, 0, 0, 0, -1, 0, 1, 0});
  SP::SimpleMatrix D = mat(4, 4, {1 / R, 1 / R, -1, 0, 1 / R, 1 / R, 0, -1, 1, 0, 0, 0, 0, 1, 0, 0});
  SP::SimpleMatrix B = mat(2, 4, {0, 0, -1 / C, 1 / C, 0, 0, 0, 0});
  SP::FirstOrderLinearTIR rel(new FirstOrderLinearTIR(Cm, B));
  rel->setDPtr(D);
  SP::Interaction diodes(new Interaction(SP::NonSmoothLaw(new ComplementarityConditionNSL(4)), rel));
  c.nsds.reset(new NonSmoothDynamicalSystem(0.0, T));
  c.nsds->insertDynamicalSystem(circuit);
  c.nsds->link(diodes, circuit);
  SP::EulerMoreauOSI osi(new EulerMoreauOSI(theta));
  SP::TimeDiscretisation td(new TimeDiscretisation(0.0, h));
  SP::OneStepNSProblem lcp(new LCP());
  c.sim.reset(new TimeStepping(c.nsds, td, osi, lcp));
  first_order_columns(c, "circuit", circuit, 2);
  interaction_columns(c, "diodes", diodes, 4, 0);
  c.summary = [circuit] { return "vL=" + fmt("%.17g", (*circuit->x())(0)) + " iL=" + fmt("%.17g", (*circuit->x())(1)); };
  return c;
}

// 3. relay: FirstOrderLinearTIDS + FirstOrderLinearTIR, RelayNSL(1, -1, 1).
Case relay(double T) {
  const double c1 = 1.0, alpha = 1.0, theta = 1.0, h = 0.01;
  Case c;
  SP::FirstOrderLinearTIDS plant(
      new FirstOrderLinearTIDS(vec({0.0, 2.21}), mat(2, 2, {0.0, 1.0, 0.0, -c1})));
  SP::FirstOrderLinearTIR rel(new FirstOrderLinearTIR(mat(1, 2, {c1, 1.0}), mat(2, 1, {0.0, alpha})));
  rel->setDPtr(mat(1, 1, {0.0}));
  SP::Interaction relay(new Interaction(SP::NonSmoothLaw(new RelayNSL(1, -1.0, 1.0)), rel));
  c.nsds.reset(new NonSmoothDynamicalSystem(0.0, T));
  c.nsds->insertDynamicalSystem(plant);
  c.nsds->link(relay, plant);
  SP::EulerMoreauOSI osi(new EulerMoreauOSI(theta));
  SP::TimeDiscretisation td(new TimeDiscretisation(0.0, h));
  SP::OneStepNSProblem osnspb(new Relay());
  c.sim.reset(new TimeStepping(c.nsds, td, osi, osnspb));
  first_order_columns(c, "plant", plant, 2);
  interaction_columns(c, "relay", relay, 1, 0);
  c.summary = [plant] { return "x0=" + fmt("%.17g", (*plant->x())(0)) + " x1=" + fmt("%.17g", (*plant->x())(1)); };
  return c;
}

// 4. column of N one-dof beads on the ground, Newton impacts between neighbours.
double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

Case beads(unsigned N, double gap, double T) {
  const double m = 1.0, g = 9.81, R = 0.1, e = 0.5, theta = 0.5, h = 1e-3;
  Case c;
  c.nsds.reset(new NonSmoothDynamicalSystem(0.0, T));
  std::vector<SP::LagrangianLinearTIDS> ds(N);
  for (unsigned i = 0; i < N; ++i) {
    double q0 = R + gap + i * (2.0 * R + gap);
    ds[i].reset(new LagrangianLinearTIDS(vec({q0}), vec({0.0}), mat(1, 1, {m})));
    ds[i]->setFExtPtr(vec({-m * g}));
    c.nsds->insertDynamicalSystem(ds[i]);
  }
  SP::NonSmoothLaw nsl(new NewtonImpactNSL(e));
  std::vector<std::pair<std::string, SP::Interaction>> inters;
  {
    SP::LagrangianLinearTIR rel(new LagrangianLinearTIR(mat(1, 1, {1.0}), vec({-R})));
    SP::Interaction ground(new Interaction(nsl, rel));
    c.nsds->link(ground, ds[0]);
    inters.push_back({"ground", ground});
  }
  for (unsigned i = 1; i < N; ++i) {
    SP::LagrangianLinearTIR rel(new LagrangianLinearTIR(mat(1, 2, {-1.0, 1.0}), vec({-2.0 * R})));
    SP::Interaction contact(new Interaction(nsl, rel));
    c.nsds->link(contact, ds[i - 1], ds[i]);
    inters.push_back({"contact" + std::to_string(i), contact});
  }
  SP::MoreauJeanOSI osi(new MoreauJeanOSI(theta));
  SP::TimeDiscretisation td(new TimeDiscretisation(0.0, h));
  SP::OneStepNSProblem lcp(new LCP());
  c.sim.reset(new TimeStepping(c.nsds, td, osi, lcp));
  for (unsigned i = 0; i < N; ++i) lagrangian_columns(c, "bead" + std::to_string(i), ds[i], 1);
  for (auto& p : inters) interaction_columns(c, p.first, p.second, 1, 1);
  SP::LagrangianLinearTIDS top = ds[N - 1], bottom = ds[0];
  SP::Interaction ground = inters[0].second;
  c.summary = [top, bottom, ground] {
    return "q_bottom=" + fmt("%.17g", (*bottom->q())(0)) + " q_top=" + fmt("%.17g", (*top->q())(0)) +
           " lambda_ground=" + fmt("%.17g", (*ground->lambda(1))(0));
  };
  return c;
}

int usage() {
  std::fprintf(stderr,
               "usage: siconos_examples {bouncing_ball|bouncing_ball_ed|diode_bridge|relay|beads_falling N|"
               "beads_resting N|beads_resting_overlap N} [--T T] [--repeat R] [--csv FILE]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string ex = argv[1];
  int a = 2;
  unsigned N = 1;
  bool is_beads = ex.rfind("beads_", 0) == 0;
  if (is_beads) {
    if (argc < 3) return usage();
    N = static_cast<unsigned>(std::atoi(argv[2]));
    a = 3;
  }
  double T = std::numeric_limits<double>::quiet_NaN();
  int repeat = 1;
  const char* csv = nullptr;
  for (; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--T") && a + 1 < argc) T = std::atof(argv[++a]);
    else if (!std::strcmp(argv[a], "--repeat") && a + 1 < argc) repeat = std::atoi(argv[++a]);
    else if (!std::strcmp(argv[a], "--csv") && a + 1 < argc) csv = argv[++a];
    else return usage();
  }

  double best = std::numeric_limits<double>::infinity();
  double best_cpu = std::numeric_limits<double>::infinity();
  long steps = 0;
  std::string summary;
  for (int r = 0; r < repeat; ++r) {
    Case c;
    if (ex == "bouncing_ball") c = bouncing_ball(std::isnan(T) ? 10.0 : T);
    else if (ex == "bouncing_ball_ed") c = bouncing_ball_ed(std::isnan(T) ? 10.0 : T);
    else if (ex == "diode_bridge") c = diode_bridge(std::isnan(T) ? 5e-3 : T);
    else if (ex == "relay") c = relay(std::isnan(T) ? 10.0 : T);
    else if (ex == "beads_falling") c = beads(N, 0.01, std::isnan(T) ? 1.0 : T);
    else if (ex == "beads_resting") c = beads(N, 0.0, std::isnan(T) ? 1.0 : T);
    else if (ex == "beads_resting_overlap") c = beads(N, -1e-12, std::isnan(T) ? 1.0 : T);
    else return usage();

    Simulation& sim = c.ed ? static_cast<Simulation&>(*c.ed) : static_cast<Simulation&>(*c.sim);
    sim.initialize();
    std::FILE* out = nullptr;
    if (csv) {
      out = std::fopen(csv, "w");
      if (!out) { std::perror(csv); return 1; }
      std::fprintf(out, "t");
      for (auto& col : c.columns) std::fprintf(out, ",%s", col.name.c_str());
      std::fprintf(out, "\n%.17g", sim.startingTime());
      for (auto& col : c.columns) std::fprintf(out, ",%.17g", col.get());
      std::fprintf(out, "\n");
    }
    long k = 0;
    double c0 = cpu_seconds();
    auto t0 = std::chrono::steady_clock::now();
    if (c.ed) {
      // Event-driven: one iteration per event (outputs and impacts).
      EventDriven& ed = *c.ed;
      while (ed.hasNextEvent()) {
        ed.advanceToEvent();
        ed.processEvents();
        if (out) {
          std::fprintf(out, "%.17g", ed.startingTime());
          for (auto& col : c.columns) std::fprintf(out, ",%.17g", col.get());
          std::fprintf(out, "\n");
        }
        ++k;
      }
    } else {
      TimeStepping& ts = *c.sim;
      while (ts.hasNextEvent()) {
        ts.computeOneStep();
        if (out) {
          std::fprintf(out, "%.17g", ts.nextTime());
          for (auto& col : c.columns) std::fprintf(out, ",%.17g", col.get());
          std::fprintf(out, "\n");
        }
        ts.nextStep();
        ++k;
      }
    }
    auto t1 = std::chrono::steady_clock::now();
    double c1 = cpu_seconds();
    if (out) std::fclose(out);
    double s = std::chrono::duration<double>(t1 - t0).count();
    if (s < best) best = s;
    if (c1 - c0 < best_cpu) best_cpu = c1 - c0;
    steps = k;
    summary = c.summary();
  }
  std::printf("RESULT %s %u %ld %.6g %.6g %.6g %.6g %s\n", ex.c_str(), N, steps, best,
              1e6 * best / steps, best_cpu, 1e6 * best_cpu / steps, summary.c_str());
  return 0;
}
