# SPDX-License-Identifier: Apache-2.0
"""The offload targets (tools/targets/offload-targets.def) for the lit
configurations, read from the file as written."""

import os
import re

_ENTRY = re.compile(
    r'^OFFLOADIO_OFFLOAD_TARGET\("([^"]*)",\s*"([^"]*)",\s*"([^"]*)"\)', re.M)


def read_offload_targets(src_root):
    """An ordered dict: triple -> (plugin short name, lit feature), the
    host's first."""
    path = os.path.join(src_root, "tools", "targets", "offload-targets.def")
    with open(path) as f:
        text = f.read()
    return {t: (p, feat) for t, p, feat in _ENTRY.findall(text)}
