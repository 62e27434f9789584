// C++: a class that mirrors its buffer on the device with enter/exit data
// in its constructor/destructor, used by several member functions.
//
// RUN: %libomptarget-compilexx-run-and-check-generic

#include <cstdio>
#include <omp.h>

class DeviceVector {
public:
  explicit DeviceVector(int n) : n_(n), data_(new double[n]) {
    for (int i = 0; i < n_; ++i)
      data_[i] = i;
    double *d = data_;
    int len = n_;
#pragma omp target enter data map(to : d[0 : len])
  }
  ~DeviceVector() {
    double *d = data_;
    int len = n_;
#pragma omp target exit data map(delete : d[0 : len])
    delete[] data_;
  }
  void axpy(double a, double b) {
    double *d = data_;
    int len = n_;
#pragma omp target teams distribute parallel for
    for (int i = 0; i < len; ++i)
      d[i] = a * d[i] + b;
  }
  double sum() const {
    double *d = data_;
    int len = n_;
    double s = 0;
#pragma omp target teams distribute parallel for reduction(+ : s)
    for (int i = 0; i < len; ++i)
      s += d[i];
    return s;
  }
  void pull() {
    double *d = data_;
    int len = n_;
#pragma omp target update from(d[0 : len])
  }
  bool present() const { return omp_target_is_present(data_, omp_get_default_device()); }
  double at(int i) const { return data_[i]; }

private:
  int n_;
  double *data_;
};

int main() {
  bool was_present;
  {
    DeviceVector v(1000);
    was_present = v.present();
    v.axpy(2.0, 1.0);
    v.axpy(0.5, 0.0);
    std::printf("device sum = %.1f\n", v.sum());
    std::printf("host v[10] before pull = %.1f\n", v.at(10));
    v.pull();
    std::printf("host v[10] after pull = %.1f\n", v.at(10));
  }
  std::printf("was present = %d\n", was_present);
  return 0;
}

// CHECK: device sum = 500000.0
// CHECK: host v[10] before pull = 10.0
// CHECK: host v[10] after pull = 10.5
// CHECK: was present = 1
