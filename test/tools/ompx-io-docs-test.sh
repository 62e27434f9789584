#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ompx-io's man page and bash completion (tools/ompx-io/) against the tool
# itself: every command and option its --help prints is in both; the
# completion completes commands, options and option values; the man page
# renders without warnings where groff is installed.
#
#   ompx-io-docs-test.sh SOURCE_DIR OMPX_IO
set -euo pipefail
src=${1:?usage: ompx-io-docs-test.sh SOURCE_DIR OMPX_IO}
tool=${2:?usage: ompx-io-docs-test.sh SOURCE_DIR OMPX_IO}
man=$src/tools/ompx-io/ompx-io.1
completion=$src/tools/ompx-io/ompx-io.bash-completion
fail() {
  echo "ompx-io-docs-test: $*" >&2
  exit 1
}
options=$({ "$tool" --help; "$tool" bench --help; "$tool" info --help; "$tool" doctor --help; } 2>&1 |
  grep -o -- '--[a-z][a-z-]*' | sort -u)
[[ -n $options ]] || fail "no options in ompx-io's help"
# The man page writes a dash as \-.
for o in $options; do
  grep -qF -- "${o//-/\\-}" "$man" || fail "the man page lacks $o"
  [[ $o == --help || $o == --version ]] && continue
  grep -qF -- "$o" "$completion" || fail "the completion lacks $o"
done

complete_line() {
  # Completions of the words "$@" (the last one being completed).
  bash -c '
    source "$0"
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    _ompx_io
    printf "%s\n" "${COMPREPLY[@]}"' "$completion" "$@"
}
[[ $(complete_line ompx-io in) == info ]] || fail "'ompx-io in' does not complete to info"
[[ $(complete_line ompx-io do) == doctor ]] || fail "'ompx-io do' does not complete to doctor"
for command in $("$tool" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
  grep -q "^\.B $command\$" "$man" || fail "the man page lacks the command $command"
  grep -q "$command" "$completion" || fail "the completion lacks the command $command"
done
[[ $(complete_line ompx-io bench --pa) == --paths ]] || fail "'--pa' does not complete to --paths"
[[ $(complete_line ompx-io bench --paths st) == staged ]] || fail "'--paths st' does not complete to staged"
[[ $(complete_line ompx-io info --j) == --json ]] || fail "'info --j' does not complete to --json"

if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$man" 2>&1) || fail "groff failed: $warnings"
  [[ -z $warnings ]] || fail "groff warns: $warnings"
fi
echo "ompx-io-docs-test: ok"
