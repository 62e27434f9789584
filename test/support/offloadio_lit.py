# SPDX-License-Identifier: Apache-2.0
"""The lit test format of the offload-io suite (test/lit.cfg.py)."""

import copy
import glob
import os

import lit.formats
import lit.TestRunner


# The sanitizer *_OPTIONS that get a log_path (sanitized builds only).
SANITIZER_LOG_OPTIONS = ("ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS")


class OffloadShTest(lit.formats.ShTest):
    """lit's ShTest, with sanitizer reports written to files beside the
    test's other outputs (<Output>/<test>.sanitizer-log.<pid>) and shown
    with the test's output when it fails.

    A report on stderr is lost where a RUN line pipes stderr into FileCheck
    ("2>&1 | FileCheck"): a report at exit leaves FileCheck satisfied and
    the pipeline failing with the runtime's exit status, and lit showed
    nothing but that status. The reports are written only in sanitized
    builds, where lit.cfg.py sets SANITIZER_LOG_OPTIONS; a RUN line that sets
    one of them itself ("env ASAN_OPTIONS=...") replaces the log_path and
    gets its reports on stderr, as a test that checks them needs."""

    def execute(self, test, lit_config):
        _, tmp_base = lit.TestRunner.getTempPaths(test)
        log_prefix = tmp_base + ".sanitizer-log"
        logged = [
            var for var in SANITIZER_LOG_OPTIONS if var in test.config.environment
        ]
        if logged:
            for stale in glob.glob(log_prefix + ".*"):
                os.remove(stale)
            # Each test gets its own environment; the suite's stays as it is.
            test.config = copy.copy(test.config)
            test.config.environment = dict(test.config.environment)
            for var in logged:
                test.config.environment[var] = with_log_path(
                    test.config.environment[var], log_prefix
                )
        result = super().execute(test, lit_config)
        if logged and result.code.isFailure:
            for log in sorted(glob.glob(log_prefix + ".*")):
                with open(log, errors="replace") as f:
                    result.output += "Sanitizer report (%s):\n--\n%s--\n" % (log, f.read())
        return result


def with_log_path(options, log_prefix):
    """Sanitizer options `options` (name=value:...) with a log_path first, so
    that a log_path the caller gave (log_path=stderr, say) comes later and
    wins."""
    return "log_path=%s:%s" % (log_prefix, options) if options else "log_path=" + log_prefix
