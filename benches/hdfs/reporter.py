#!/usr/bin/env python3
"""Sinbad's slaves for `make bench-hdfs`: every interval, read the byte counters of each
DataNode's link (the switch-side veth end, whose transmit bytes are what the DataNode
receives) and rewrite the load report netheat's HDFS policy reads (docs/hdfs.md,
"Load reports"): host,utilization,timestamp with host = the DataNode's IP.

usage: reporter.py SWITCH_NETNS OUT_FILE LINK_BPS IF=IP [IF=IP ...]
"""

import json
import os
import subprocess
import sys
import time


def counters(ns):
    out = subprocess.run(
        ["ip", "-n", ns, "-s", "-j", "link", "show"], check=True, capture_output=True, text=True
    ).stdout
    return {link["ifname"]: link["stats64"]["tx"]["bytes"] for link in json.loads(out)}


def main():
    ns, out, bps = sys.argv[1], sys.argv[2], float(sys.argv[3])
    links = dict(a.split("=", 1) for a in sys.argv[4:])
    interval = float(os.environ.get("REPORT_INTERVAL", "1.0"))
    prev, prev_t = counters(ns), time.time()
    while True:
        time.sleep(interval)
        cur, now = counters(ns), time.time()
        dt = now - prev_t
        lines = ["host,utilization,timestamp"]
        for ifname, ip in links.items():
            u = (cur[ifname] - prev[ifname]) * 8 / dt / bps
            lines.append(f"{ip},{max(0.0, u):.4f},{now:.3f}")
        tmp = out + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, out)
        prev, prev_t = cur, now


if __name__ == "__main__":
    main()
