// C++ templates with teams reductions over several element types.
//
// RUN: %libomptarget-compilexx-run-and-check-generic

#include <cstdio>

template <typename T> T device_sum(const T *v, int n) {
  T s = T(0);
#pragma omp target teams distribute parallel for reduction(+ : s) map(to : v[0 : n])
  for (int i = 0; i < n; ++i)
    s += v[i];
  return s;
}

template <typename T> T device_max(const T *v, int n) {
  T m = v[0];
#pragma omp target teams distribute parallel for reduction(max : m) map(to : v[0 : n])
  for (int i = 0; i < n; ++i)
    m = v[i] > m ? v[i] : m;
  return m;
}

struct Stats {
  long count;
  double mean;
};

static Stats stats(const double *v, int n) {
  double s = 0.0;
  long c = 0;
#pragma omp target teams distribute parallel for reduction(+ : s, c) map(to : v[0 : n])
  for (int i = 0; i < n; ++i) {
    s += v[i];
    c += 1;
  }
  return Stats{c, s / c};
}

int main() {
  const int n = 5000;
  static int vi[n];
  static long vl[n];
  static float vf[n];
  static double vd[n];
  for (int i = 0; i < n; ++i) {
    vi[i] = i % 97;
    vl[i] = 1000000L * (i % 3);
    vf[i] = 0.25f * (i % 8);
    vd[i] = i;
  }
  std::printf("sum<int> = %d\n", device_sum(vi, n));
  std::printf("sum<long> = %ld\n", device_sum(vl, n));
  std::printf("sum<float> = %.2f\n", device_sum(vf, n));
  std::printf("max<int> = %d\n", device_max(vi, n));
  std::printf("max<double> = %.1f\n", device_max(vd, n));
  Stats st = stats(vd, n);
  std::printf("count = %ld mean = %.1f\n", st.count, st.mean);
  return 0;
}

// CHECK: sum<int> = 238834
// CHECK: sum<long> = 4999000000
// CHECK: sum<float> = 4375.00
// CHECK: max<int> = 96
// CHECK: max<double> = 4999.0
// CHECK: count = 5000 mean = 2499.5
