#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Keep docs/errors-and-env.md true.

Fails (exit 1, one line per problem) when
  * a source reads an environment variable that no table of the page lists,
  * a table of the page's "Environment variables" section lists a variable
    that no source reads,
  * a setting of common/base/include/offloadio/Settings.def (the one declaration
    of every setting) is not listed in the page's table of its layer, the
    page's file engine table (`OMPX_IO_*`) lists one that Settings.def does
    not declare for the engine, or a source of common, plugin or libompx_io
    spells a declared setting's name itself instead of taking it from the
    table,
  * a row of a declared setting gives a default or valid values that
    Settings.def does not declare (a number, a size, a boolean or a choice
    where the page states one; words only where the declaration's doc says
    the value is known at run time, the default is 0 or unset, or the
    setting is a deprecated name), or
  * common/base/include/offloadio/ErrorCodes.def has a code the page does not
    name, or whose errno (the .def's errno column, the one map from codes to
    errno values) the page's error code table does not give.

A variable counts as read when
  * C/C++ (common, plugin, libompx_io, include, tools, examples, test/support,
    test/hsa-emu, test/conformance, test/fuzz): a string literal that is
    exactly a name of our prefixes (LIBOMPTARGET_, OFFLOADIO_, OMPX_, OMP_,
    HSA_EMU_), which are reserved for variables, or any literal given first
    to getenv, secure_getenv, getEnv, read*Env or env* helpers;
  * shell (tools, .ci): ${NAME:-...}, ${NAME-...}, ${NAME:=...}, ${NAME:+...};
  * Python (test/lit.cfg.py, test/lit.site.cfg.py.in, tools): os.environ.get("NAME"),
    os.environ["NAME"], os.getenv("NAME");
  * CMake: $ENV{NAME}.
A variable the page lists is also read where a C/C++ source has it as a whole
string literal (getenv of a name chosen at run time, as for
CUDA_VISIBLE_DEVICES).

Usage: check-errors-and-env.py <source root>
       check-errors-and-env.py --engine-settings FILE <source root>
The second form compares the file engine table with the settings a running
plugin reports (ompx_io_get_settings): FILE ("-": stdin) holds lines
"setting <NAME> ...", other lines are ignored.
"""

import os
import re
import sys

OUR_PREFIXES = ("LIBOMPTARGET_", "OFFLOADIO_", "OMPX_", "OMP_", "HSA_EMU_")
NAME = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"

C_DIRS = ["common", "plugin", "libompx_io", "include", "tools", "examples",
          "test/support", "test/hsa-emu", "test/conformance", "test/fuzz"]
C_SUFFIXES = (".c", ".cpp", ".h", ".inc", ".def")
SHELL_DIRS = ["tools", ".ci"]
PY_FILES = ["test/lit.cfg.py", "test/lit.site.cfg.py.in"]
PY_DIRS = ["tools"]

C_OURS = re.compile(r'"((?:%s)[A-Z0-9_]*[A-Z0-9])"' %
                    "|".join(re.escape(p) for p in OUR_PREFIXES))
C_CALL = re.compile(
    r'\b(?:std::)?(?:getenv|secure_getenv|getEnv|read[A-Z]\w*Env|env[A-Z]\w*)'
    r'\s*\(\s*"(' + NAME + r')"')
SHELL_READ = re.compile(r"\$\{(" + NAME + r"|[A-Z][A-Z0-9]*)(?::?[-=+?])")
PY_READ = re.compile(
    r'os\.(?:environ\.get|getenv)\(\s*"(' + NAME + r')"|os\.environ\[\s*"(' +
    NAME + r')"\s*\]')
CMAKE_READ = re.compile(r"\$ENV\{(" + NAME + r")\}")


def walk(root, rel_dirs, accept):
    for rel in rel_dirs:
        top = os.path.join(root, rel)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if not d.startswith("build")]
            for name in filenames:
                path = os.path.join(dirpath, name)
                if accept(path):
                    yield path


def shell_script(path):
    if path.endswith(".sh"):
        return True
    if "." in os.path.basename(path):
        return False
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError:
        return False
    return first.startswith(b"#!") and (b"bash" in first or b"/sh" in first)


def read_vars(root):
    """{name: [file, ...]} of every variable the sources read."""
    found = {}

    def add(name, path):
        found.setdefault(name, set()).add(os.path.relpath(path, root))

    for path in walk(root, C_DIRS, lambda p: p.endswith(C_SUFFIXES)):
        text = open(path, encoding="utf-8", errors="replace").read()
        for m in C_OURS.finditer(text):
            add(m.group(1), path)
        for m in C_CALL.finditer(text):
            add(m.group(1), path)
    for path in walk(root, SHELL_DIRS, shell_script):
        text = open(path, encoding="utf-8", errors="replace").read()
        for m in SHELL_READ.finditer(text):
            add(m.group(1), path)
    py = [os.path.join(root, f) for f in PY_FILES]
    py += list(walk(root, PY_DIRS, lambda p: p.endswith(".py")))
    for path in py:
        if not os.path.exists(path):
            continue
        text = open(path, encoding="utf-8", errors="replace").read()
        for m in PY_READ.finditer(text):
            add(m.group(1) or m.group(2), path)
    cmake = [os.path.join(root, "CMakeLists.txt")]
    cmake += list(walk(root, ["cmake", "common", "plugin", "libompx_io",
                              "tools", "test"],
                       lambda p: p.endswith(("CMakeLists.txt", ".cmake"))))
    for path in cmake:
        if not os.path.exists(path):
            continue
        text = open(path, encoding="utf-8", errors="replace").read()
        for m in CMAKE_READ.finditer(text):
            add(m.group(1), path)
    return found


def section(doc, heading):
    """The text under the Markdown heading line \p heading, up to the next
    heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = doc.splitlines()
    if heading not in lines:
        return ""
    out = []
    for line in lines[lines.index(heading) + 1:]:
        m = re.match(r"(#+) ", line)
        if m and len(m.group(1)) <= level:
            break
        out.append(line)
    return "\n".join(out)


def documented_vars(doc):
    """Names in the first cell of the rows of the tables of \p doc."""
    names = set()
    for line in doc.splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        names.update(re.findall(r"`([A-Z][A-Z0-9_]*)`", first))
    return names


ENV_SECTION = "## Environment variables"
ENGINE_SECTION = "### File engine (`OMPX_IO_*`, one engine per device)"


SETTINGS_DEF = "common/base/include/offloadio/Settings.def"
LAYER_SECTIONS = {
    "Plugin": "### Every plugin (`common/`)",
    "Device": "### Every plugin (`common/`)",
    "IOEngine": ENGINE_SECTION,
    "Host": "### Host plugin",
    "CUDA": "### CUDA plugin",
    "AMDGPU": "### AMDGPU plugin",
}


def declared_settings(root):
    """[(name, layer)] of the lines of Settings.def."""
    text = open(os.path.join(root, SETTINGS_DEF), encoding="utf-8").read()
    return re.findall(r'^OFFLOADIO_SETTING\(\s*\w+,\s*"(' + NAME +
                      r')",\s*\w+,\s*(\w+),', text, re.M)


def engine_vars(root):
    """The settings Settings.def declares for the file engine."""
    return {name for name, layer in declared_settings(root)
            if layer == "IOEngine"}


def settings_problems(root, doc):
    """Problems of the settings table against the page and the sources."""
    problems = []
    declared = declared_settings(root)
    for name, layer in declared:
        heading = LAYER_SECTIONS.get(layer)
        if heading is None:
            problems.append("%s: %s has the unknown layer %s"
                            % (SETTINGS_DEF, name, layer))
        elif name not in documented_vars(section(doc, heading)):
            problems.append("%s (layer %s in %s) is not in the table of "
                            "docs/errors-and-env.md's section '%s'"
                            % (name, layer, SETTINGS_DEF, heading))
    names = {name for name, _ in declared}
    for path in walk(root, ["common", "plugin", "libompx_io"],
                     lambda p: p.endswith(C_SUFFIXES)):
        if os.path.relpath(path, root) == SETTINGS_DEF:
            continue
        text = open(path, encoding="utf-8", errors="replace").read()
        for name in sorted(names):
            if '"%s"' % name in text:
                problems.append("%s spells the setting %s itself; take it "
                                "from the table (settingDecl(SettingId::...)"
                                ".Name)" % (os.path.relpath(path, root), name))
    return problems


def c_number(text):
    """The value of a Settings.def number: decimal, 1ULL << 30, 2 << 20,
    64 * 1024, or a <stdint.h> maximum."""
    maxima = {"UINT64_MAX": 2**64 - 1, "SIZE_MAX": 2**64 - 1,
              "UINT32_MAX": 2**32 - 1, "INT32_MAX": 2**31 - 1,
              "INT64_MAX": 2**63 - 1}
    text = text.strip()
    if text in maxima:
        return maxima[text]
    expr = re.sub(r"(\d+)(?:ULL|UL|U|LL|L)\b", r"\1", text)
    if not re.fullmatch(r"[\d\s<*+()-]+", expr):
        raise ValueError("unreadable number %r in %s" % (text, SETTINGS_DEF))
    return int(eval(expr, {"__builtins__": {}}))


def split_args(text):
    """The comma-separated arguments of a macro call, strings kept whole."""
    args, cur, quoted = [], "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    args.append(cur.strip())
    return args


def setting_declarations(root):
    """[dict] of every line of Settings.def: name, kind, layer, default,
    min, max, choices, doc."""
    text = open(os.path.join(root, SETTINGS_DEF), encoding="utf-8").read()
    out = []
    for m in re.finditer(r'^OFFLOADIO_SETTING\((.*?)\)\n(?=\n|OFFLOADIO|//|#)',
                         text, re.M | re.S):
        args = split_args(m.group(1))
        if len(args) != 9:
            raise ValueError("%s: a line with %d arguments: %s"
                             % (SETTINGS_DEF, len(args), m.group(1)[:60]))
        doc = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', args[8]))
        out.append({"name": args[1].strip('"'), "kind": args[2],
                    "layer": args[3], "default": c_number(args[4]),
                    "min": c_number(args[5]), "max": c_number(args[6]),
                    "choices": [c for c in args[7].strip('"').split(",") if c],
                    "doc": doc})
    return out


SIZE_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40,
              "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def page_number(text):
    """A number as the page writes it ("8192", "2 MiB", "64K", "2^31-1"),
    or None for words."""
    text = text.strip().strip("`")
    m = re.fullmatch(r"2\^(\d+)\s*-\s*1", text)
    if m:
        return 2**int(m.group(1)) - 1
    m = re.fullmatch(r"(\d+)\s*([KMGT](?:iB)?)?", text, re.I)
    if m:
        return int(m.group(1)) * SIZE_UNITS[(m.group(2) or "").upper()]
    return None


BOOL_WORDS = {"on": 1, "off": 0, "true": 1, "false": 0, "yes": 1, "no": 0}


def doc_rows(doc, heading):
    """{name: (default cell, valid values cell)} of the table under
    \p heading."""
    rows = {}
    for line in section(doc, heading).splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3:
            continue
        for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", cells[0]):
            rows[name] = (cells[1], cells[2])
    return rows


def value_problems(d, default_cell, valid_cell):
    """What the page's default and valid values of \p d get wrong."""
    problems = []
    where = "docs/errors-and-env.md's row of %s (layer %s)" % (d["name"],
                                                              d["layer"])
    run_time = "run time" in d["doc"]
    deprecated = d["doc"].startswith("deprecated")
    cell = default_cell.strip().strip("`")
    kind = d["kind"]
    # The default.
    if kind == "Bool":
        want = "on" if d["default"] else "off"
        if BOOL_WORDS.get(cell.lower(), -1) != d["default"]:
            problems.append("%s gives the default '%s'; %s declares %s"
                            % (where, default_cell, SETTINGS_DEF, want))
    elif kind == "Choice":
        want = d["choices"][d["default"]]
        if cell.lower() != want:
            problems.append("%s gives the default '%s'; %s declares %s"
                            % (where, default_cell, SETTINGS_DEF, want))
    else:
        n = page_number(cell)
        if n is None:
            if not (run_time or deprecated or d["default"] == 0):
                problems.append("%s gives the default '%s' in words; %s "
                                "declares %d and does not say it is known at "
                                "run time" % (where, default_cell,
                                              SETTINGS_DEF, d["default"]))
        elif n != d["default"]:
            problems.append("%s gives the default %s; %s declares %d"
                            % (where, default_cell, SETTINGS_DEF,
                               d["default"]))
    # The valid values.
    if kind == "Bool":
        if "boolean" not in valid_cell:
            problems.append("%s does not say its valid values are a boolean"
                            % where)
    elif kind == "Path":
        if "file" not in valid_cell:
            problems.append("%s does not say its valid values are a file "
                            "name" % where)
    elif kind == "InfoMask":
        if "integer" not in valid_cell:
            problems.append("%s does not say its valid values are an integer"
                            % where)
    elif kind == "Choice":
        quoted = re.findall(r"`([^`]+)`", valid_cell)
        booleans = "boolean" in valid_cell
        for c in d["choices"]:
            if c not in quoted and not (booleans and c in BOOL_WORDS or
                                        booleans and c in ("0", "1")):
                problems.append("%s does not list the choice %s" % (where, c))
        for q in quoted:
            if q not in d["choices"]:
                problems.append("%s lists `%s`, which %s does not declare"
                                % (where, q, SETTINGS_DEF))
    else:
        text = re.sub(r"\(.*?\)", "", valid_cell)
        text = re.sub(r"^\s*size\b", "", text).strip()
        lo = hi = None
        m = re.match(r"(?:from\s+)?(.+?)\s+to\s+(.+)$", text)
        if m:
            lo, hi = m.group(1), m.group(2)
        elif text.startswith("from "):
            lo = text[5:]
        elif text.startswith("up to "):
            hi = text[6:]
        elif text:
            problems.append("%s gives the valid values '%s', which name no "
                            "bounds" % (where, valid_cell))
        trivial_max = d["max"] >= 2**32 - 1
        for label, cell_text, want, trivial in (
                ("minimum", lo, d["min"], d["min"] == 0),
                ("maximum", hi, d["max"], trivial_max)):
            if cell_text is None:
                if not trivial:
                    problems.append("%s states no %s; %s declares %d"
                                    % (where, label, SETTINGS_DEF, want))
                continue
            n = page_number(cell_text)
            if n is None:
                if not run_time:
                    problems.append("%s gives the %s '%s' in words; %s "
                                    "declares %d and does not say it is "
                                    "known at run time"
                                    % (where, label, cell_text.strip(),
                                       SETTINGS_DEF, want))
            elif n != want:
                problems.append("%s gives the %s %s; %s declares %d"
                                % (where, label, cell_text.strip(),
                                   SETTINGS_DEF, want))
    return problems


def declared_value_problems(root, doc):
    """Problems of the page's defaults and valid values against
    Settings.def."""
    problems = []
    for d in setting_declarations(root):
        heading = LAYER_SECTIONS.get(d["layer"])
        row = doc_rows(doc, heading).get(d["name"]) if heading else None
        if row:
            problems += value_problems(d, *row)
    return problems


def reported_settings(path):
    """Names of the lines "setting <NAME> ..." of \p path ("-": stdin)."""
    text = sys.stdin.read() if path == "-" else open(path).read()
    return set(re.findall(r"^setting (\S+)", text, re.M))


def compare_engine(documented, actual, who, verb):
    """Problems where the file engine table and what \p who \p verb-s (the
    names \p actual) differ."""
    problems = []
    for name in sorted(actual - documented):
        problems.append("%s %ss %s, which the file engine table of "
                        "docs/errors-and-env.md does not list"
                        % (who, verb, name))
    for name in sorted(documented - actual):
        problems.append("the file engine table of docs/errors-and-env.md "
                        "lists %s, which %s does not %s" % (name, who, verb))
    return problems


def error_codes(root):
    path = os.path.join(root, "common/base/include/offloadio/ErrorCodes.def")
    text = open(path, encoding="utf-8").read()
    return re.findall(r"^OFFLOADIO_ERROR\((\w+),\s*(\d+),\s*(\w+),", text,
                      re.M)


def literal_reads(root, names):
    """{name: files} of the names in \p names that a C/C++ source has as a
    whole string literal."""
    found = {}
    for path in walk(root, C_DIRS, lambda p: p.endswith(C_SUFFIXES)):
        text = open(path, encoding="utf-8", errors="replace").read()
        for name in names:
            if '"%s"' % name in text:
                found.setdefault(name, set()).add(os.path.relpath(path, root))
    return found


def main():
    args = sys.argv[1:]
    settings_file = None
    if len(args) == 3 and args[0] == "--engine-settings":
        settings_file = args[1]
        args = args[2:]
    if len(args) != 1:
        print(__doc__)
        return 2
    root = args[0]
    doc_path = os.path.join(root, "docs", "errors-and-env.md")
    doc = open(doc_path, encoding="utf-8").read()
    engine_documented = documented_vars(section(doc, ENGINE_SECTION))
    if settings_file:
        problems = compare_engine(engine_documented,
                                  reported_settings(settings_file),
                                  "the plugin", "report")
        if not engine_documented:
            problems.append("docs/errors-and-env.md has no section '%s'"
                            % ENGINE_SECTION)
        for p in problems:
            print("error: " + p)
        print("%d engine settings documented; %d problems"
              % (len(engine_documented), len(problems)))
        return 1 if problems else 0
    listed = documented_vars(section(doc, ENV_SECTION))
    read = read_vars(root)
    for name, files in literal_reads(root, listed - set(read)).items():
        read[name] = files
    problems = []
    for name in sorted(set(read) - listed):
        problems.append("%s is read by %s but not listed in docs/errors-and-env.md"
                        % (name, ", ".join(sorted(read[name]))))
    for name in sorted(listed - set(read)):
        problems.append("docs/errors-and-env.md lists %s, which no source reads"
                        % name)
    if not engine_documented:
        problems.append("docs/errors-and-env.md has no section '%s'"
                        % ENGINE_SECTION)
    problems += compare_engine(engine_documented, engine_vars(root),
                               SETTINGS_DEF, "declare")
    problems += settings_problems(root, doc)
    problems += declared_value_problems(root, doc)
    for code, value, errno in error_codes(root):
        row = re.search(r"^\| `%s` \| %s \|.*" % (code, value), doc, re.M)
        if not row:
            problems.append("error code %s (%s) of ErrorCodes.def is not in the "
                            "error code table of docs/errors-and-env.md"
                            % (code, value))
            continue
        # The last cell gives the errno: `ENAME`, or 0 for success.
        last = row.group(0).rstrip().rstrip("|").split("|")[-1]
        want = "0" if errno == "0" else "`%s`" % errno
        if (want == "0" and last.strip() != "0") or want not in last:
            problems.append("the error code table of docs/errors-and-env.md "
                            "gives %s the errno '%s'; ErrorCodes.def maps it "
                            "to %s" % (code, last.strip(), errno))
    for p in problems:
        print("error: " + p)
    print("%d variables read, %d listed, %d error codes; %d problems"
          % (len(read), len(listed), len(error_codes(root)), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
