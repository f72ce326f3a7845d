#!/usr/bin/env python3
"""Background traffic of `make bench-hdfs`, standing in for Sinbad's shuffles.

recv PORT                      : accept TCP connections and discard what they send.
send SCHEDULE_JSON             : SCHEDULE_JSON = {"phases": [[start_s, [ip, ...]], ...],
                                 "rate_bps": R, "flows": F, "port": P, "end_s": T};
                                 during each phase, F long TCP flows to each listed ip,
                                 paced together at R bits/s per ip; at the next phase the
                                 flows are closed and the new hot set is loaded.
Bounded: the sender stops at end_s.
"""

import itertools
import json
import socket
import sys
import threading
import time


def recv(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(64)

    def drain(c):
        try:
            while c.recv(1 << 16):
                pass
        except OSError:
            pass
        c.close()

    while True:
        c, _ = s.accept()
        threading.Thread(target=drain, args=(c,), daemon=True).start()


def flow(ip, port, bps, stop, sent_by, key):
    try:
        s = socket.create_connection((ip, port), timeout=5)
    except OSError:
        return
    chunk = b"\0" * 16384
    t0, sent = time.time(), 0
    try:
        while not stop.is_set():
            ahead = sent * 8 / bps - (time.time() - t0)
            if ahead > 0:
                time.sleep(min(ahead, 0.05))
                continue
            s.sendall(chunk)
            sent += len(chunk)
            sent_by[key] = sent
    except OSError:
        pass
    s.close()


def send(cfg):
    t0 = time.time()
    phases = cfg["phases"] + [[cfg["end_s"], []]]
    for (start, ips), (nxt, _) in itertools.pairwise(phases):
        while time.time() - t0 < start:
            time.sleep(0.05)
        stop = threading.Event()
        sent_by = {}  # (ip, k) -> bytes the flow has handed to TCP
        ts = [
            threading.Thread(
                target=flow,
                args=(ip, cfg["port"], cfg["rate_bps"] / cfg["flows"], stop, sent_by, (ip, k)),
                daemon=True,
            )
            for ip in ips
            for k in range(cfg["flows"])
        ]
        for t in ts:
            t.start()
        began = time.time()
        print(f"{began - t0:.1f}s hot: {' '.join(ips)}", flush=True)
        while time.time() - t0 < nxt:
            time.sleep(0.05)
        stop.set()
        # What each hot receiver got handed over the phase (to TCP: the last socket
        # buffer's worth may still be in flight), against the pacing's rate.
        took = max(time.time() - began, 1e-9)
        for ip in ips:
            got = sum(v for (i, _), v in sent_by.items() if i == ip) * 8 / took
            print(f"  {ip}: {got / 1e6:.2f} Mbit/s of {cfg['rate_bps'] / 1e6:.2f} paced", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "recv":
        recv(int(sys.argv[2]))
    else:
        send(json.loads(sys.argv[2]))
