#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds consumer.c with one plain compile line through pkg-config:
#
#   PKG_CONFIG_PATH=<prefix>/lib/pkgconfig bash build-pkg-config.sh OUTPUT
#
# offload-io.pc requires offload-io-plugins.pc, whose flags make the
# program load our plugins in place of the stock ones.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build-pkg-config.sh OUTPUT}
# shellcheck disable=SC2046 # pkg-config's output is meant to be split
clang-16 -O2 -Wall -Wextra -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu \
  $(pkg-config --cflags offload-io) "$here/consumer.c" -o "$out" \
  $(pkg-config --libs offload-io)
