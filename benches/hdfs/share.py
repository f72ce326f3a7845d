#!/usr/bin/env python3
"""A write's share of a hot link on bench-hdfs's network, without HDFS (root).

The bench's namespaces and `tbf` links (run.py's `netns_up`), nothing else running: DataNode
1's receive link carries `--bg-flows` paced flows from the background sender
(`bgtraffic.py`, `--bg-load` of the link together), and a bulk TCP transfer of one block
goes from DataNode 0 to DataNode 1, `--trials` times in a row. Printed: each transfer's time
and rate, idle (no background) and hot, and what fluid max-min predicts (the block alone
at the link rate; behind the background, the link's fair share among the flows, the paced
ones capped at their rate). This is the quantity the prediction's `bg-weight` stands for
(benches/hdfs/README.md, "Prediction"); it is a diagnostic, not an input of predict.py.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as bench  # noqa: E402  (benches/hdfs/run.py: the network and its settings)

PORT = 5301  # the bulk transfers' port (the background uses run.BG_PORT)

SINK = """
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", {port})); s.listen(8)
while True:
    c, _ = s.accept(); n = 0
    while True:
        b = c.recv(1 << 16)
        if not b: break
        n += len(b)
    c.sendall(b"ok"); c.close()
"""

SEND = """
import socket, sys, time
data = b"\\0" * {nbytes}
for _ in range({trials}):
    t0 = time.time()
    c = socket.create_connection(("{ip}", {port}), timeout=120)
    c.sendall(data); c.shutdown(socket.SHUT_WR); c.recv(2); c.close()
    print(f"{{time.time() - t0:.4f}}", flush=True)
"""


def transfers(args, label):
    out = subprocess.run(
        [
            "ip", "netns", "exec", bench.P + "dn0", sys.executable, "-c",
            SEND.format(nbytes=args.block_mb << 20, trials=args.trials, ip=bench.dn_ip(1), port=PORT),
        ],
        capture_output=True, text=True, check=True, timeout=600,
    ).stdout  # fmt: skip
    ts = [float(x) for x in out.split()]
    bits = (args.block_mb << 20) * 8
    rates = [bits / t / 1e6 for t in ts]
    print(
        f"{label:5s}: {len(ts)} transfers of {args.block_mb} MiB, time {statistics.mean(ts):.3f} s "
        f"(sd {statistics.stdev(ts) if len(ts) > 1 else 0:.3f}), rate {statistics.mean(rates):.2f} Mbit/s "
        f"({min(rates):.2f}-{max(rates):.2f})"
    )
    return statistics.mean(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5)
    own, rest = ap.parse_known_args()
    args = bench.arg_parser().parse_args(rest)
    args.trials = own.trials
    if os.geteuid() != 0:
        sys.exit("share.py needs root (network namespaces, tc)")
    os.makedirs(os.path.join(bench.WORK, "log"), exist_ok=True)
    log = os.path.join(bench.WORK, "log")
    try:
        bench.netns_up(args)
        bench.start(
            [sys.executable, "-c", SINK.format(port=PORT)],
            os.path.join(log, "share-sink.log"),
            bench.P + "dn1",
        )
        bench.start(
            [sys.executable, os.path.join(HERE, "bgtraffic.py"), "recv", str(bench.BG_PORT)],
            os.path.join(log, "share-recv.log"),
            bench.P + "dn1",
        )
        time.sleep(1)
        idle = transfers(args, "idle")
        rate = args.bg_load * args.rate_mbit * 1e6
        cfg = {"phases": [[0, [bench.dn_ip(1)]]], "rate_bps": rate, "flows": args.bg_flows,
               "port": bench.BG_PORT, "end_s": 3600}  # fmt: skip
        bench.start(
            [sys.executable, os.path.join(HERE, "bgtraffic.py"), "send", json.dumps(cfg)],
            os.path.join(log, "share-bg.log"),
            bench.P + "bg",
        )
        time.sleep(5)  # the paced flows reach their rate
        hot = transfers(args, "hot")
    finally:
        bench.cleanup()
    link = args.rate_mbit * 1e6
    cap = rate / args.bg_flows
    # Fluid max-min: the write and the flows share the link; a paced flow takes at most cap.
    share = link / (args.bg_flows + 1) if cap >= link / (args.bg_flows + 1) else link - args.bg_flows * cap
    bits = (args.block_mb << 20) * 8
    got = bits / hot
    print(
        f"fluid max-min: idle {bits / link:.3f} s, hot {bits / share:.3f} s ({share / 1e6:.2f} Mbit/s); "
        f"measured hot {got / 1e6:.2f} Mbit/s = {got / share:.2f}x the fluid share. In weighted max-min "
        f"with the write at weight 1, each paced flow at weight w gives the write link / (1 + F w): "
        f"w = {(link / got - 1) / args.bg_flows:.3f} (idle transfer {bits / idle / 1e6:.2f} Mbit/s)"
    )


if __name__ == "__main__":
    main()
