// Siconos 4.4 bouncing ball with SchatzmanPaoliOSI or D1MinusLinearOSI.
// Usage: siconos_ball sp|d1 STEP T_END RESTITUTION [THETA]; prints t,q[0],v[0],impulse per step (see README.md).
#include "SiconosKernel.hpp"
#include <cstdio>
#include <cstring>
int main(int argc, char** argv) {
  const char* scheme = argv[1];
  double h = atof(argv[2]);
  double T = atof(argv[3]);
  double e = atof(argv[4]);
  double theta = argc > 5 ? atof(argv[5]) : 0.5;
  double R = 0.1, m = 1.0, g = 9.81;
  SP::SiconosVector q0(new SiconosVector(3)); (*q0)(0) = 1.0;
  SP::SiconosVector v0(new SiconosVector(3));
  SP::SimpleMatrix M(new SimpleMatrix(3,3)); (*M)(0,0)=m; (*M)(1,1)=m; (*M)(2,2)=0.4*m*R*R;
  SP::LagrangianLinearTIDS ball(new LagrangianLinearTIDS(q0, v0, M));
  SP::SiconosVector F(new SiconosVector(3)); (*F)(0) = -m*g;
  ball->setFExtPtr(F);
  SP::SimpleMatrix H(new SimpleMatrix(1,3)); (*H)(0,0)=1.0;
  SP::SiconosVector b(new SiconosVector(1)); (*b)(0) = -R;
  SP::NonSmoothLaw nslaw(new NewtonImpactNSL(e));
  SP::Relation rel(new LagrangianLinearTIR(H, b));
  SP::Interaction inter(new Interaction(nslaw, rel));
  SP::NonSmoothDynamicalSystem nsds(new NonSmoothDynamicalSystem(0, T));
  nsds->insertDynamicalSystem(ball);
  nsds->link(inter, ball);
  SP::TimeDiscretisation td(new TimeDiscretisation(0, h));
  SP::Simulation s;
  if (!strcmp(scheme, "sp")) {
    SP::SchatzmanPaoliOSI osi(new SchatzmanPaoliOSI(theta));
    SP::OneStepNSProblem lcp(new LCP());
    SP::TimeStepping ts(new TimeStepping(nsds, td, osi, lcp));
    s = ts;
  } else {
    SP::D1MinusLinearOSI osi(new D1MinusLinearOSI());
    SP::TimeSteppingD1Minus ts(new TimeSteppingD1Minus(nsds, td, 2));
    ts->insertIntegrator(osi);
    SP::OneStepNSProblem impact(new LCP());
    SP::OneStepNSProblem force(new LCP());
    ts->insertNonSmoothProblem(impact, SICONOS_OSNSP_TS_VELOCITY);
    ts->insertNonSmoothProblem(force, SICONOS_OSNSP_TS_VELOCITY + 1);
    s = ts;
  }
  SP::SiconosVector q = ball->q(); SP::SiconosVector v = ball->velocity();
  SP::SiconosVector p = ball->p(1);
  SP::SiconosVector lam = inter->lambda(1);
  printf("%.17g,%.17g,%.17g,%.17g\n", 0.0, (*q)(0), (*v)(0), 0.0);
  while (s->hasNextEvent()) {
    s->advanceToEvent();
    double l = 0;
    if (!strcmp(scheme, "sp")) l = (*ball->p(0))(0); else l = (*ball->p(1))(0);
    printf("%.17g,%.17g,%.17g,%.17g\n", s->nextTime(), (*q)(0), (*v)(0), l);
    s->processEvents();
  }
  return 0;
}
