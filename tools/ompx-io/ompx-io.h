// SPDX-License-Identifier: Apache-2.0
//
// ompx-io: what the command files share: the utilities, the view of the
// loaded plugins, and each command's entry point.
#ifndef OMPX_IO_TOOL_H
#define OMPX_IO_TOOL_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/// Name of bench's own test file in its directory; mkstemp fills the X's,
/// so that concurrent runs never share (and delete) one file.
#define BENCH_FILE_TEMPLATE "ompx-io-bench.XXXXXX"
/// Directory of bench's own test file when neither --dir nor TMPDIR names one.
#define DEFAULT_BENCH_DIR "/tmp"
#define RESULT_FD 3
#define MAX_LIST 32
#define VERIFY_BYTES 4096
#define MAX_ROUNDS 16

/// The program's name in messages.
extern const char *const Prog;

/// Print a usage error and exit with status 2.
void usageError(const char *Fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
/// Print an error and exit with status 1.
void fatal(const char *Fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
/// Monotonic seconds.
double now(void);
/// Parses "4096", "64K", "1M", "1MiB", "2G", "1GB" (binary units).
int parseSize(const char *S, uint64_t *Out);
/// Parses a decimal number up to \p Max.
int parseUnsigned(const char *S, unsigned long Max, unsigned long *Out);
/// "8 MiB", "4096 B": the largest exact binary unit; "5.9 GiB" where that
/// would take more than four digits.
void formatSize(uint64_t N, char *Buf, size_t Len);
/// Splits a comma-separated list into at most MAX_LIST newly allocated items.
int splitList(const char *Opt, const char *S, char **Items);
/// Full-count pread/pwrite, as the engine does it; returns bytes or -1.
ssize_t fullIO(int Write, int Fd, char *Buf, size_t Count, off_t Off);
/// qsort comparison of doubles, ascending.
int cmpDouble(const void *A, const void *B);

/// One offload plugin libomptarget loaded.
typedef struct {
  char Path[PATH_MAX];
  int OffloadIO; ///< Has the offload-io extensions.
  int32_t (*Resolve)(int32_t);
} PluginInfo;

/// The offload plugins libomptarget loaded.
typedef struct {
  PluginInfo Plugins[8];
  int Num;
} PluginList;

/// The offload plugins libomptarget has loaded (call after device init).
void loadedPlugins(PluginList *L);
/// Describes device \p Dev's plugin into \p Buf; returns 1 if it is served
/// by an offload-io plugin.
int describeDevice(int Dev, const PluginList *L, char *Buf, size_t Len);
/// The offload-io plugin that serves device \p Dev: its short name
/// ("x86_64", "cuda", "amdgpu") into \p Short and its own number of the
/// device into \p *Local; 0 when no offload-io plugin serves it.
int deviceOwner(int Dev, const PluginList *L, char *Short, size_t Len,
                int32_t *Local);

/// What info finds out about one OpenMP device.
typedef struct {
  int Served;          ///< Served by an offload-io plugin.
  char Plugin[64];     ///< That plugin's short name.
  int32_t Local;       ///< The plugin's own number of the device.
  int KernelOk;        ///< A tiny kernel ran on it.
  int PathsErrno;      ///< ompx_io_paths failed with this errno, else 0.
  unsigned Mask;       ///< Available paths, bit (1 << enum ompx_io_path).
  char Why[1024];      ///< One line per unavailable path.
} DeviceProbe;

/// Runs a tiny kernel on device \p Dev and asks for its paths. libomptarget
/// ends the program when the kernel cannot run: flush stdout first.
void probeDevice(int Dev, const PluginList *L, DeviceProbe *P);

/// The path OMPX_IO_PATH=auto takes on the device \p P describes, as a
/// sentence, into \p Buf.
const char *autoPicks(const DeviceProbe *P, char *Buf, size_t Len);

/// The version of the --json output's schema (docs/ompx-io-json.md): one
/// more for each change that removes or redefines a field.
#define OMPX_IO_INFO_JSON_SCHEMA 1

/// ompx-io info --json: the same facts as info, as one JSON object
/// (docs/ompx-io-json.md).
void printInfoJson(int NumDevices, int Initial, const PluginList *L,
                   const DeviceProbe *Probes);

/// The engine settings in force into a new array (free it); its length in
/// \p *Count. NULL with errno when no plugin can say.
struct ompx_io_setting;
struct ompx_io_setting *engineSettings(size_t *Count);
/// Every setting of every layer in force into a new array (free it); its
/// length in \p *Count. NULL with errno when no plugin can say.
struct ompx_io_setting_info;
struct ompx_io_setting_info *allSettings(size_t *Count);
/// Prints every setting in force, by layer, as the plugin reports them.
void printAllSettings(void);
/// Print the process's pinned-memory budget (OFFLOADIO_PINNED_MAX).
void printPinnedBudget(void);
/// The process's CPU share and the defaults derived from it, with their
/// origins (ompx_io_get_process_budget).
void printProcessBudget(void);
/// The value in force of engine setting \p Name for a one-line summary:
/// "8M (default)", the environment's text, or the default and why.
void describeSetting(const char *Name, char *Buf, size_t Len);

/// ompx-io info.
int cmdInfo(int Argc, char **Argv);
/// ompx-io bench.
int cmdBench(int Argc, char **Argv);
/// ompx-io doctor [PATH...] (doctor.c).
int cmdDoctor(int Argc, char **Argv);
/// One measured configuration, in a child process of cmdBench.
int cmdChild(int Argc, char **Argv);

#endif // OMPX_IO_TOOL_H
