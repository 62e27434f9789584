// C++: declare target globals in namespaces, static class members and a
// function template used on the device.
//
// RUN: %libomptarget-compilexx-run-and-check-generic

#include <cstdio>

#pragma omp declare target
namespace physics {
double gravity = 9.5;
int steps = 0;
template <typename T> T fall(T t) { return gravity * t * t / 2; }
} // namespace physics

struct Counter {
  static int hits;
};
int Counter::hits = 0;
#pragma omp end declare target

int main() {
  double d = 0;
  float f = 0;
#pragma omp target map(from : d, f)
  {
    d = physics::fall(2.0);
    f = physics::fall(1.0f);
    physics::steps += 3;
    Counter::hits += 7;
  }
  std::printf("fall(2.0) = %.2f fall(1.0f) = %.2f\n", d, f);
#pragma omp target update from(physics::steps, Counter::hits)
  std::printf("steps = %d hits = %d\n", physics::steps, Counter::hits);

  physics::gravity = 1.0;
#pragma omp target update to(physics::gravity)
#pragma omp target map(from : d)
  d = physics::fall(4.0);
  std::printf("after update: fall(4.0) = %.2f\n", d);
  return 0;
}

// CHECK: fall(2.0) = 19.00 fall(1.0f) = 4.75
// CHECK: steps = 3 hits = 7
// CHECK: after update: fall(4.0) = 8.00
