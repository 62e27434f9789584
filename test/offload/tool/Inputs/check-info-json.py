# SPDX-License-Identifier: Apache-2.0
"""Checks the output of 'ompx-io info --json' (a file) for the lit tests.

check-info-json.py FILE served|unserved [SCHEMA_DOC]
  served:   every device is served by an offload-io plugin, with paths, the
            pinned budget, the engine settings and every setting present
  unserved: no device is, the plugins are not offload-io's, and the budget
            is null
With SCHEMA_DOC (docs/ompx-io-json.md), every field of the output must be
one of the document's table and, when served, every field of the table but
those it marks "present when" must be in the output.
Prints "info-json: ok" or raises.
"""
import re
import json
import sys

path, mode = sys.argv[1], sys.argv[2]
with open(path) as f:
    info = json.load(f)  # fails on anything that is not valid JSON
assert info.get("schema_version") == 1, info.get("schema_version")


def fields(obj, prefix=""):
    """Every field path of obj, as the schema document writes them."""
    out = set()
    if isinstance(obj, dict):
        for key, value in obj.items():
            name = prefix + "." + key if prefix else key
            out.add(name)
            out |= fields(value, name)
    elif isinstance(obj, list):
        for item in obj:
            if isinstance(item, dict):
                out |= fields(item, prefix + "[]")
    return out


if len(sys.argv) > 3:
    with open(sys.argv[3]) as f:
        rows = [re.match(r"\| `([^`]+)` \|([^|]*)\|([^|]*)\|", line)
                for line in f]
    documented = {m.group(1) for m in rows if m}
    optional = {m.group(1) for m in rows if m and "present when" in m.group(3)}
    seen = fields(info)
    assert seen <= documented, "undocumented fields: %s" % sorted(seen - documented)
    if mode == "served":
        missing = documented - optional - seen
        assert not missing, "documented but absent: %s" % sorted(missing)

for key in ("version", "library_version", "num_devices", "initial_device",
            "plugins", "devices", "pinned_budget", "settings",
            "all_settings"):
    assert key in info, "missing key %s" % key
assert info["version"] == info["library_version"], info["version"]
assert len(info["devices"]) == info["num_devices"]
assert info["num_devices"] > 0, "no devices"
assert all(p["path"].startswith("/") for p in info["plugins"]), info["plugins"]
for i, d in enumerate(info["devices"]):
    assert d["device"] == i, d
    assert d["kernel_launch"] is True, d
if mode == "served":
    assert all(d["served"] for d in info["devices"]), info["devices"]
    assert any(p["offload_io"] for p in info["plugins"]), info["plugins"]
    for d in info["devices"]:
        assert d["plugin"] and d["local_device"] >= 0, d
        assert d["paths"] and all(isinstance(p, str) for p in d["paths"]), d
        assert isinstance(d["unavailable"], list), d
    budget = info["pinned_budget"]
    assert set(budget) == {"cap", "used", "peak", "refusals"}, budget
    names = [s["name"] for s in info["settings"]]
    assert "OMPX_IO_THREADS" in names, names
    for s in info["settings"]:
        assert s["source"] in ("default", "environment", "invalid"), s
    every = {(s["name"], s["layer"]) for s in info["all_settings"]}
    assert ("LIBOMPTARGET_AMDGPU_AIS_ANY_FILESYSTEM", "amdgpu") in every, every
    assert ("OMPX_IO_THREADS", "io-engine") in every, every
    for s in info["all_settings"]:
        assert s["origin"] in ("default", "environment", "invalid"), s
        assert s["doc"] and s["valid"], s
elif mode == "unserved":
    assert not any(d["served"] for d in info["devices"]), info["devices"]
    assert not any(p["offload_io"] for p in info["plugins"]), info["plugins"]
    assert info["pinned_budget"] is None, info["pinned_budget"]
    assert info["settings"] == [], info["settings"]
    assert info["all_settings"] == [], info["all_settings"]
else:
    raise SystemExit("unknown mode %s" % mode)
print("info-json: ok (%d devices)" % info["num_devices"])
