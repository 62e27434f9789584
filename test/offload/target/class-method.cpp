// C++: member functions, templates and lambdas inside target regions.
//
// RUN: %libomptarget-compilexx-run-and-check-generic

#include <cstdio>

template <typename T> struct Accum {
  T total;
  T factor;
  void add(T v) { total += v * factor; }
};

template <typename T> T dot(const T *a, const T *b, int n) {
  T s = 0;
#pragma omp target map(to : a[0 : n], b[0 : n]) map(tofrom : s)
  for (int i = 0; i < n; ++i)
    s += a[i] * b[i];
  return s;
}

class Grid {
public:
  static constexpr int N = 32;
  int cells[N];
  void fill(int base) {
#pragma omp target map(from : cells)
    for (int i = 0; i < N; ++i)
      cells[i] = base + i * i;
  }
};

int main() {
  Accum<long> acc{0, 3};
#pragma omp target map(tofrom : acc)
  for (long i = 1; i <= 100; ++i)
    acc.add(i);
  std::printf("acc.total = %ld\n", acc.total);

  int ai[10], bi[10];
  double ad[10], bd[10];
  for (int i = 0; i < 10; ++i) {
    ai[i] = i;
    bi[i] = i + 1;
    ad[i] = 0.5 * i;
    bd[i] = 2.0;
  }
  std::printf("dot<int> = %d\n", dot(ai, bi, 10));
  std::printf("dot<double> = %.1f\n", dot(ad, bd, 10));

  Grid g;
  g.fill(7);
  std::printf("cells[0] = %d cells[31] = %d\n", g.cells[0], g.cells[31]);

  int out = 0;
  int k = 6;
#pragma omp target map(from : out)
  {
    auto sq = [k](int v) { return v * v + k; };
    out = sq(4) + sq(5);
  }
  std::printf("lambda = %d\n", out);
  return 0;
}

// CHECK: acc.total = 15150
// CHECK: dot<int> = 330
// CHECK: dot<double> = 45.0
// CHECK: cells[0] = 7 cells[31] = 968
// CHECK: lambda = 53
