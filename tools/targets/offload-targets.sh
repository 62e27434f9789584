# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The offload targets (offload-targets.def, read here as written) for the
# shell scripts; source this file:
#   offload_target_plugin TRIPLE    prints the plugin's short name (x86_64,
#                                   cuda, amdgpu); fails for an unknown one
#   offload_target_triples          prints every triple, the host's first
#   offload_host_triple             prints the host's triple
#   offload_host_plugin             prints the host plugin's short name
offload_targets_def=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/offload-targets.def

# "triple plugin feature" lines.
offload_targets_table() {
  sed -n 's/^OFFLOADIO_OFFLOAD_TARGET("\([^"]*\)", *"\([^"]*\)", *"\([^"]*\)").*/\1 \2 \3/p' \
    "$offload_targets_def"
}

offload_target_plugin() {
  local plugin
  plugin=$(offload_targets_table | awk -v t="$1" '$1 == t { print $2 }')
  [[ -n $plugin ]] || return 1
  echo "$plugin"
}

offload_target_triples() {
  offload_targets_table | awk '{ print $1 }'
}

offload_host_triple() {
  offload_targets_table | awk 'NR == 1 { print $1 }'
}

offload_host_plugin() {
  offload_targets_table | awk 'NR == 1 { print $2 }'
}
