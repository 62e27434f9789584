# SPDX-License-Identifier: Apache-2.0
"""The lit test format of the offload-io suite (test/lit.cfg.py)."""

import copy
import glob
import os
import re
import shlex

import lit.formats
import lit.ShUtil
import lit.Test
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
        if getattr(test.config, "offloadio_compile_only", False):
            return self.execute_compiles(test, lit_config)
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

    def execute_compiles(self, test, lit_config):
        """Compile-only runs (lit --param compile_only=1): of the test's RUN
        lines, after lit's own substitutions, only the commands that start
        the test compiler (config.offloadio_compilers) run, and the mkdir
        commands that make the folders they write into. The flags stay those
        of the suite's substitutions, so a test compiles here exactly as it
        does before it runs.

        A test is selected if its REQUIRES and UNSUPPORTED lines let it run
        on one of the machines in config.offloadio_compile_machines (the
        features a machine adds): a compile does not depend on the machine,
        and a test for the emulation or for hardware only must build all
        the same. XFAIL is about running and does not apply."""
        config = test.config
        script = None
        for machine_features in config.offloadio_compile_machines:
            test.config = copy.copy(config)
            test.config.available_features = set(config.available_features) | set(
                machine_features
            )
            test.requires, test.unsupported, test.xfails = [], [], []
            script = lit.TestRunner.parseIntegratedTestScript(test)
            if not isinstance(script, lit.Test.Result):
                break
        if isinstance(script, lit.Test.Result):
            return script
        test.xfails = []

        tmp_dir, tmp_base = lit.TestRunner.getTempPaths(test)
        substitutions = list(self.extra_substitutions)
        substitutions += lit.TestRunner.getDefaultSubstitutions(test, tmp_dir, tmp_base)
        conditions = {feature: True for feature in test.config.available_features}
        script = lit.TestRunner.applySubstitutions(
            script, substitutions, conditions,
            recursion_limit=test.config.recursiveExpansionLimit,
        )
        compilers = set(config.offloadio_compilers)
        compiles = []
        compiled = False
        for line in script:
            location = ""
            match = re.match(lit.TestRunner.kPdbgRegex, line)
            if match:
                location, line = "%%dbg(%s) " % match.group(1), match.group(2)
            if not line.strip():  # a false %if
                continue
            try:
                tree = lit.ShUtil.ShParser(line, lit_config.isWindows, config.pipefail).parse()
            except ValueError as exc:
                return lit.Test.Result(lit.Test.FAIL, "shell parser error on %r: %s" % (line, exc))
            for command in simple_commands(tree):
                program = command.args[0] if command.args else None
                if program in compilers or program == "mkdir":
                    compiles.append(location + shlex.join(str(arg) for arg in command.args))
                    compiled = compiled or program in compilers
        if not compiled:
            return lit.Test.Result(lit.Test.UNSUPPORTED, "no RUN line compiles")
        return lit.TestRunner._runShTest(test, lit_config, False, compiles, tmp_base)


def simple_commands(node):
    """The simple commands of a parsed shell line (lit.ShUtil), in order."""
    if isinstance(node, lit.ShUtil.Seq):
        return simple_commands(node.lhs) + simple_commands(node.rhs)
    if isinstance(node, lit.ShUtil.Pipeline):
        return [c for command in node.commands for c in simple_commands(command)]
    return [node]


def with_log_path(options, log_prefix):
    """Sanitizer options `options` (name=value:...) with a log_path first, so
    that a log_path the caller gave (log_path=stderr, say) comes later and
    wins."""
    return "log_path=%s:%s" % (log_prefix, options) if options else "log_path=" + log_prefix
