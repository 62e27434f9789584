// The stock launch line of the host plugin, word for word against LLVM's
// own x86_64 plugin of the same version, with LIBOMPTARGET_INFO=16: the
// stock host plugin calls every kernel Generic and, as each host kernel is
// one call whatever the clauses, reports one block of one thread, except
// that libomptarget 18's rule for kernels without a kernel environment
// (every host kernel) reports the num_teams and thread_limit clauses as
// they are. Ours must report what the stock plugin reports.
//
// REQUIRES: host-plugin
// RUN: %libomptarget-compile-generic
// RUN: env LIBOMPTARGET_INFO=16 %libomptarget-run-generic 2>&1 \
// RUN:   | grep -F 'info: Launching kernel' > %t.ours
// RUN: env LIBOMPTARGET_INFO=16 %run-stock-generic 2>&1 \
// RUN:   | grep -F 'info: Launching kernel' > %t.stock
// RUN: diff %t.stock %t.ours
// RUN: %if llvm-18 %{ %fcheck-generic --input-file %t.ours --match-full-lines \
// RUN:   --check-prefix=BARE %} %else %{ %fcheck-generic --input-file %t.ours \
// RUN:   --match-full-lines --check-prefix=ONE %}

#include <omp.h>
#include <stdio.h>

int main(void) {
  int x = 0;
#pragma omp target map(tofrom : x)
  x += 1;
#pragma omp target teams num_teams(3) thread_limit(5) map(tofrom : x)
  {
    if (omp_get_team_num() == 0)
      x += 1;
  }
#pragma omp target teams distribute parallel for reduction(+ : x)
  for (int i = 0; i < 1000; ++i)
    x += 1;
#pragma omp target teams distribute parallel for thread_limit(7)               \
    reduction(+ : x)
  for (int i = 0; i < 1000; ++i)
    x += 1;
#pragma omp target teams num_teams(2) map(tofrom : x)
  {
    if (omp_get_team_num() == 0)
      x += 1;
  }
  printf("x = %d\n", x);
  return x != 2003;
}

// ONE: "PluginInterface" device 0 info: Launching kernel __omp_offloading_{{[^ ]+}}_main_l{{[0-9]+}} with 1 blocks and 1 threads in Generic mode
// ONE-NEXT: "PluginInterface" device 0 info: Launching kernel __omp_offloading_{{[^ ]+}}_main_l{{[0-9]+}} with 1 blocks and 1 threads in Generic mode
// ONE-NEXT: "PluginInterface" device 0 info: Launching kernel __omp_offloading_{{[^ ]+}}_main_l{{[0-9]+}} with 1 blocks and 1 threads in Generic mode
// ONE-NEXT: "PluginInterface" device 0 info: Launching kernel __omp_offloading_{{[^ ]+}}_main_l{{[0-9]+}} with 1 blocks and 1 threads in Generic mode
// ONE-NEXT: "PluginInterface" device 0 info: Launching kernel __omp_offloading_{{[^ ]+}}_main_l{{[0-9]+}} with 1 blocks and 1 threads in Generic mode
// ONE-NOT: {{.}}

// BARE: "PluginInterface" device 0 info: Launching kernel __omp_offloading_{{[^ ]+}}_main_l{{[0-9]+}} with 1 blocks and 1 threads in Generic mode
// BARE-NEXT: "PluginInterface" device 0 info: Launching kernel __omp_offloading_{{[^ ]+}}_main_l{{[0-9]+}} with 3 blocks and 5 threads in Generic mode
// BARE-NEXT: "PluginInterface" device 0 info: Launching kernel __omp_offloading_{{[^ ]+}}_main_l{{[0-9]+}} with 1 blocks and 1 threads in Generic mode
// BARE-NEXT: "PluginInterface" device 0 info: Launching kernel __omp_offloading_{{[^ ]+}}_main_l{{[0-9]+}} with 1 blocks and 7 threads in Generic mode
// BARE-NEXT: "PluginInterface" device 0 info: Launching kernel __omp_offloading_{{[^ ]+}}_main_l{{[0-9]+}} with 2 blocks and 1 threads in Generic mode
// BARE-NOT: {{.}}
