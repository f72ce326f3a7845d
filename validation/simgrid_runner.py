#!/usr/bin/env python3
"""Cross-check netheat's max-min flow engine against SimGrid 3.32 (pure max-min).

Public API
----------
``run_simgrid(racks, hosts_per_rack, host_bps, uplink_bps, flows)``
    Simulate ``flows`` = [(start_s, src, dst, bytes), ...] on a two-tier
    datacenter with SimGrid and return ``(finish_times, wall_seconds)``.

``bounded_pareto_flows(n, racks, hosts_per_rack, seed)``
    Deterministic synthetic workload (bounded Pareto sizes, random src != dst).

``reference_maxmin(racks, hosts_per_rack, host_bps, uplink_bps, flows)``
    Small, independent pure-Python max-min (progressive filling) event
    simulator, used only by the self-check to validate the SimGrid set-up.

SimGrid can create its engine only once per process and the Debian module is
built for /usr/bin/python3, so ``run_simgrid`` always runs SimGrid in a fresh
subprocess: ``/usr/bin/python3 simgrid_runner.py --worker IN.json OUT.json``.
The caller may be any Python >= 3.11 (e.g. the project venv) and need not be
able to import ``simgrid`` itself.

Topology (R racks x H hosts, host h is in rack h // H), all links directed and
full duplex (SimGrid SPLITDUPLEX links, latency 0):

* ``h<i>-nic``  UP = host i -> its ToR, DOWN = ToR -> host i   (host_bps)
* ``tor<r>``    UP = ToR r -> core,    DOWN = core -> ToR r    (uplink_bps)

Routes: same rack  [nic(src) UP, nic(dst) DOWN];
        different  [nic(src) UP, tor(rack src) UP, tor(rack dst) DOWN, nic(dst) DOWN].
They are built with one SimGrid *Star* zone per rack (hosts + a ToR router used
as the zone gateway) inside a root Star zone (the non-blocking core), so the
platform is O(R*H) instead of O((R*H)^2) explicit routes.  The worker checks,
after the timed run, that every flow's SimGrid route is exactly the list above.

Run ``python3 validation/simgrid_runner.py`` for the self-check and
``python3 validation/simgrid_runner.py --bench`` for the 10,000-flow timing run.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
import warnings

__all__ = ["LAST_RUN", "SIMGRID_PYTHON", "bounded_pareto_flows", "reference_maxmin", "run_simgrid"]

#: Interpreter that can ``import simgrid`` (Debian python3-simgrid 3.32).
SIMGRID_PYTHON = os.environ.get("NETHEAT_SIMGRID_PYTHON", "/usr/bin/python3")

#: Options that turn SimGrid's CM02 model into plain max-min fair sharing.
#: (3.32 names; 3.33+ renamed the two precision options to precision/work-amount
#: and precision/timing.)  ``surf/precision`` is added per run, see _surf_precision().
BASE_CONFIG = [
    "network/model:CM02",  # max-min sharing, bandwidth/latency factors 1.0, weight-S 0
    "network/crosstraffic:0",  # no 5% reverse (ACK) traffic on the back route
    "network/TCP-gamma:0",  # no TCP window bound (it only applies when latency > 0 anyway)
    "network/weight-S:0",  # no RTT-based penalty: every flow has weight 1
    "maxmin/precision:1e-12",  # default 1e-5 (relative saturation test of a link in the solver)
]

#: Details of the last successful run_simgrid() call (build_s, run_s, sim_end_s,
#: simgrid_version, config); wall_s = build_s + run_s.
LAST_RUN: dict = {}

#: Extra logging options: silence the "Configuration change" INFO lines.
LOG_CONFIG = ["--log=xbt_cfg.thresh:warning"]


# --------------------------------------------------------------------------- #
# Caller side (any Python >= 3.11)
# --------------------------------------------------------------------------- #
def _validate(racks, hosts_per_rack, host_bps, uplink_bps, flows):
    n_hosts = racks * hosts_per_rack
    if racks < 1 or hosts_per_rack < 1:
        raise ValueError("racks and hosts_per_rack must be >= 1")
    if not (host_bps > 0 and uplink_bps > 0):
        raise ValueError("bandwidths must be > 0")
    rows = []
    rounded = 0
    for i, (start, src, dst, size) in enumerate(flows):
        src, dst = int(src), int(dst)
        if not (0 <= src < n_hosts and 0 <= dst < n_hosts):
            raise ValueError(f"flow {i}: host index out of range ({src} -> {dst}, {n_hosts} hosts)")
        if src == dst:
            raise ValueError(f"flow {i}: src == dst ({src})")
        if not (start >= 0 and math.isfinite(start)):
            raise ValueError(f"flow {i}: bad start time {start!r}")
        nbytes = round(size)
        if nbytes < 1:
            raise ValueError(f"flow {i}: size must be >= 1 byte (got {size!r})")
        if nbytes != size:
            rounded += 1
        rows.append([float(start), src, dst, nbytes])
    if rounded:
        warnings.warn(
            f"{rounded} flow sizes rounded to whole bytes (SimGrid payloads are integers)",
            stacklevel=3,
        )
    return rows


def run_simgrid(
    racks: int,
    hosts_per_rack: int,
    host_bps: float,
    uplink_bps: float,
    flows: list[tuple[float, int, int, float]],
    *,
    mode: str = "sendto",
    optim: str = "Lazy",
    surf_precision: float | None = None,
    timeout: float | None = None,
) -> tuple[list[float], float]:
    """Simulate flows (start_s, src, dst, bytes) with SimGrid;
    return (finish times in flow order, wall seconds).

    Bandwidths are in bits/s (converted to bytes/s for SimGrid).  Sizes are
    rounded to whole bytes (SimGrid payloads are uint64; a warning is issued if
    any size is not integral).  ``src == dst`` raises ``ValueError``.

    Wall seconds = time spent inside the SimGrid worker building the platform
    and running the simulation (interpreter start-up, JSON I/O and the
    post-run route check are excluded).

    Keyword-only extras (defaults are what the README's numbers use):
      mode   "sendto": one controller actor starts every flow at its start time
             with ``Comm.sendto_async(src_host, dst_host, bytes)`` and reads
             each comm's ``finish_time`` (scales to 10^4+ flows);
             "mailbox": one sender actor (sleep_until(start); put) and one
             receiver actor (get; record clock) per flow on a per-flow mailbox.
             Each actor is an OS thread in SimGrid's Python binding, so keep it
             to a few hundred flows.  Both modes give identical results.
      optim  SimGrid "network/optim": "Lazy" (default, event heap) or "Full".
      surf_precision  SimGrid "surf/precision" in seconds; default: automatic,
             see ``_surf_precision``.
      timeout  seconds before the worker is killed (``subprocess.TimeoutExpired``).
    """
    if mode not in ("sendto", "mailbox"):
        raise ValueError("mode must be 'sendto' or 'mailbox'")
    if optim not in ("Lazy", "Full"):
        raise ValueError("optim must be 'Lazy' or 'Full'")
    rows = _validate(racks, hosts_per_rack, host_bps, uplink_bps, flows)
    if not rows:
        return [], 0.0
    host_Bps = host_bps / 8.0
    uplink_Bps = uplink_bps / 8.0
    if surf_precision is None:
        surf_precision = _surf_precision(rows, min(host_Bps, uplink_Bps))
    config = [*BASE_CONFIG, f"surf/precision:{surf_precision!r}", f"network/optim:{optim}"]
    job = {
        "racks": int(racks),
        "hosts_per_rack": int(hosts_per_rack),
        "host_Bps": host_Bps,
        "uplink_Bps": uplink_Bps,
        "flows": rows,
        "config": config,
        "mode": mode,
    }
    with tempfile.TemporaryDirectory(prefix="netheat-simgrid-") as tmp:
        in_path = os.path.join(tmp, "in.json")
        out_path = os.path.join(tmp, "out.json")
        with open(in_path, "w") as f:
            json.dump(job, f)
        proc = subprocess.run(
            [SIMGRID_PYTHON, os.path.abspath(__file__), "--worker", in_path, out_path],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0 or not os.path.exists(out_path):
            raise RuntimeError(
                f"SimGrid worker failed (exit {proc.returncode}):\n"
                f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            )
        with open(out_path) as f:
            res = json.load(f)
    if res.get("error"):
        raise RuntimeError("SimGrid worker: " + res["error"])
    LAST_RUN.clear()
    LAST_RUN.update({k: v for k, v in res.items() if k != "finish"})
    return res["finish"], res["wall_s"]


def _surf_precision(rows, min_Bps: float) -> float:
    """Pick SimGrid's "surf/precision" (seconds) for a run.

    SimGrid finishes an action when its predicted end date is within
    surf/precision of the clock, so this is an absolute error bound on finish
    times: it should be tiny (<< 1e-9 x the shortest finish time).  But it must
    stay well above the rounding of the clock itself (1 ulp at the largest
    simulated date), otherwise an event can be missed by one ulp and the run
    stalls.  We bound the end of the simulation by serialising all bytes on
    the slowest link after the last start and take 64 ulps of that bound,
    floored at 1e-15 s.  For the usual runs (end < ~8 s) this gives ~1e-14 s.
    """
    t_end = max(r[0] for r in rows) + sum(r[3] for r in rows) / min_Bps
    return max(1e-15, 64.0 * math.ulp(max(t_end, 1.0)))


def bounded_pareto_flows(
    n: int,
    racks: int,
    hosts_per_rack: int,
    seed: int,
    *,
    shape: float = 1.1,
    lo_bytes: float = 10e3,
    hi_bytes: float = 1e9,
    start_s: float = 0.0,
) -> list[tuple[float, int, int, float]]:
    """Return ``n`` flows ``(start_s, src, dst, bytes)``, reproducible from ``seed``.

    * Sizes: bounded Pareto with the given ``shape`` (default 1.1) on
      [lo_bytes, hi_bytes] (default 10 KB = 1e4 .. 1 GB = 1e9 bytes, decimal),
      drawn by inverting the CDF  F(x) = (1 - (L/x)^a) / (1 - (L/H)^a),
      i.e. x = L * (1 - u * (1 - (L/H)^a))^(-1/a), then rounded to whole bytes.
    * src uniform over all R*H hosts; dst uniform over the other R*H - 1 hosts.
    * Every flow starts at ``start_s`` (default 0).

    Uses only ``random.Random(seed)`` (Mersenne Twister, stable across CPython
    versions); per flow it draws u, then src, then dst.
    """
    n_hosts = racks * hosts_per_rack
    if n_hosts < 2:
        raise ValueError("need at least 2 hosts")
    rng = random.Random(seed)
    a, lo, hi = float(shape), float(lo_bytes), float(hi_bytes)
    tail = 1.0 - (lo / hi) ** a
    flows = []
    for _ in range(n):
        u = rng.random()
        size = lo * (1.0 - u * tail) ** (-1.0 / a)
        size = float(min(max(round(size), math.ceil(lo)), math.floor(hi)))
        src = rng.randrange(n_hosts)
        dst = rng.randrange(n_hosts - 1)
        if dst >= src:
            dst += 1
        flows.append((float(start_s), src, dst, size))
    return flows


# --------------------------------------------------------------------------- #
# Independent reference (pure Python) used by the self-check
# --------------------------------------------------------------------------- #
def _route(src, dst, hosts_per_rack):
    rs, rd = src // hosts_per_rack, dst // hosts_per_rack
    if rs == rd:
        return [("hup", src), ("hdown", dst)]
    return [("hup", src), ("tup", rs), ("tdown", rd), ("hdown", dst)]


def reference_maxmin(racks, hosts_per_rack, host_bps, uplink_bps, flows):
    """Exact-in-principle max-min event simulation (floats), for small tests only.

    At every arrival/completion, rates are recomputed by progressive filling
    over the directed links; time advances to the next arrival or completion.
    """
    cap = {}
    for h in range(racks * hosts_per_rack):
        cap[("hup", h)] = cap[("hdown", h)] = host_bps / 8.0
    for r in range(racks):
        cap[("tup", r)] = cap[("tdown", r)] = uplink_bps / 8.0
    routes = [_route(s, d, hosts_per_rack) for (_, s, d, _) in flows]
    remaining = [float(b) for (_, _, _, b) in flows]
    finish = [None] * len(flows)
    arrivals = sorted(range(len(flows)), key=lambda i: flows[i][0])
    nxt, active, now = 0, set(), 0.0
    while nxt < len(arrivals) or active:
        while nxt < len(arrivals) and flows[arrivals[nxt]][0] <= now:
            active.add(arrivals[nxt])
            nxt += 1
        rate = {}
        if active:
            left = {ln: cap[ln] for i in active for ln in routes[i]}
            count = {}
            for i in active:
                for ln in routes[i]:
                    count[ln] = count.get(ln, 0) + 1
            unfixed = set(active)
            while unfixed:
                share, link = min((left[ln] / c, ln) for ln, c in count.items() if c > 0)
                for i in [i for i in unfixed if link in routes[i]]:
                    rate[i] = share
                    unfixed.discard(i)
                    for ln in routes[i]:
                        left[ln] -= share
                        count[ln] -= 1
        dt = min((remaining[i] / rate[i] for i in active), default=math.inf)
        if nxt < len(arrivals):
            dt = min(dt, flows[arrivals[nxt]][0] - now)
        now += dt
        for i in list(active):
            remaining[i] -= rate[i] * dt
            if remaining[i] <= 1e-9 * flows[i][3]:
                finish[i] = now
                active.discard(i)
    return finish


# --------------------------------------------------------------------------- #
# Worker side (runs under /usr/bin/python3 with the Debian simgrid module)
# --------------------------------------------------------------------------- #
def _worker(in_path: str, out_path: str) -> None:
    import simgrid  # only importable by the Debian interpreter
    from simgrid import Actor, Comm, Engine, LinkInRoute, Mailbox, NetZone, this_actor

    with open(in_path) as f:
        job = json.load(f)
    R, H = job["racks"], job["hosts_per_rack"]
    flows = job["flows"]
    n = len(flows)

    e = Engine([sys.argv[0]] + [f"--cfg={c}" for c in job["config"]] + LOG_CONFIG)

    t0 = time.perf_counter()
    # ---- platform: root Star zone (core) containing one Star zone per rack ----
    core = NetZone.create_star_zone("core")  # first zone created = root zone
    hosts = []
    for r in range(R):
        rack = NetZone.create_star_zone(f"rack{r}")
        rack.set_parent(core)
        tor = rack.create_router(f"tor{r}-sw")
        for i in range(r * H, (r + 1) * H):
            host = rack.create_host(f"h{i}", 1e9).seal()
            nic = rack.create_split_duplex_link(f"h{i}-nic", job["host_Bps"]).set_latency(0).seal()
            # host -> centre uses nic_UP; symmetrical=True gives centre -> host = nic_DOWN
            rack.add_route(
                host.netpoint, None, None, None, [LinkInRoute(nic, LinkInRoute.Direction.UP)], True
            )
            hosts.append(host)
        rack.seal()
        up = core.create_split_duplex_link(f"tor{r}", job["uplink_Bps"]).set_latency(0).seal()
        # rack -> core uses tor_UP (gateway = ToR router); core -> rack = tor_DOWN
        core.add_route(rack.netpoint, None, tor, None, [LinkInRoute(up, LinkInRoute.Direction.UP)], True)
    core.seal()

    finish = [None] * n
    order = sorted(range(n), key=lambda k: flows[k][0])

    if job["mode"] == "sendto":
        comms = [None] * n

        def controller():
            for k in order:
                start, src, dst, nbytes = flows[k]
                if start > Engine.clock:
                    this_actor.sleep_until(start)
                comms[k] = Comm.sendto_async(hosts[src], hosts[dst], nbytes)
            Comm.wait_all(comms)
            for k in range(n):
                finish[k] = comms[k].finish_time

        Actor.create("controller", hosts[0], controller)
    else:

        def sender(k):
            start, _src, _dst, nbytes = flows[k]
            if start > Engine.clock:
                this_actor.sleep_until(start)
            Mailbox.by_name(f"flow{k}").put(k, nbytes)

        def receiver(k):
            Mailbox.by_name(f"flow{k}").get()
            finish[k] = Engine.clock

        for k in order:
            _, src, dst, _ = flows[k]
            Actor.create(f"recv{k}", hosts[dst], receiver, k)
            Actor.create(f"send{k}", hosts[src], sender, k)

    t_build = time.perf_counter() - t0
    e.run()
    wall = time.perf_counter() - t0

    # ---- untimed check: every flow used exactly the intended directed links ----
    error = None
    for k in range(n):
        _, src, dst, _ = flows[k]
        links, _lat = hosts[src].route_to(hosts[dst])
        got = [link.name for link in links]
        rs, rd = src // H, dst // H
        want = [f"h{src}-nic_UP", f"h{dst}-nic_DOWN"]
        if rs != rd:
            want[1:1] = [f"tor{rs}_UP", f"tor{rd}_DOWN"]
        if got != want:
            error = f"flow {k}: route {got} != expected {want}"
            break
    if error is None and any(t is None or t < 0 for t in finish):
        error = "some flows did not finish"

    out = {
        "finish": finish,
        "wall_s": wall,
        "build_s": t_build,
        "run_s": wall - t_build,
        "sim_end_s": Engine.clock,
        "simgrid_version": str(simgrid.simgrid_version),
        "config": job["config"],
        "error": error,
    }
    with open(out_path, "w") as f:
        json.dump(out, f)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # skip SimGrid/pybind teardown (thread contexts, callbacks)


# --------------------------------------------------------------------------- #
# Self-check and benchmark
# --------------------------------------------------------------------------- #
def _max_rel(got, want):
    return max(abs(g - w) / abs(w) for g, w in zip(got, want, strict=True))


def _check(name, got, want, tol=1e-6):
    err = _max_rel(got, want)
    shown = [round(g, 12) for g in got] if len(got) <= 6 else f"<{len(got)} flows, last {max(got):.9g} s>"
    print(f"{name}: finish = {shown}  max rel err = {err:.3e}")
    assert err <= tol, f"{name}: expected {want}, got {got}"
    return err


def self_check() -> None:
    G = 1e9
    for mode in ("sendto", "mailbox"):
        print(f"--- mode={mode}")
        # 1) three flows sharing rack 0's 10 Gbps ToR uplink (max-min: 3, 5, 6 s)
        flows = [(0.0, 0, 4, 1.25e9), (0.0, 1, 5, 2.5e9), (0.0, 2, 6, 3.75e9)]
        got, wall = run_simgrid(2, 4, 10 * G, 10 * G, flows, mode=mode)
        _check("shared uplink", got, [3.0, 5.0, 6.0])

        # 2) late arrival + full-duplex + intra-rack (all 10 Gbps = 1.25e9 B/s):
        #   A h0->h4 2.5e9 B @0: alone 1 s (1.25e9 left); shares tor0 up with B
        #     from t=1 at 6.25e8 B/s; B (6.25e8 B @1) ends t=2; A then has
        #     6.25e8 left alone -> 2.5 s.
        #   C h2->h3 (same rack) 1.25e9 B @0.5 touches no ToR link -> 1.5 s.
        #   D h4->h0 1.25e9 B @0 uses the reverse directions of A's links; with
        #     split-duplex links it does not slow A -> 1.0 s.
        flows = [
            (0.0, 0, 4, 2.5e9),
            (1.0, 1, 5, 6.25e8),
            (0.5, 2, 3, 1.25e9),
            (0.0, 4, 0, 1.25e9),
        ]
        got, wall = run_simgrid(2, 4, 10 * G, 10 * G, flows, mode=mode)
        _check("late arrival", got, [2.5, 2.0, 1.5, 1.0])

        # 3) two bottlenecks: host 10 Gbps (1.25e9 B/s), uplink 16 Gbps (2e9 B/s)
        #   F1 h0->h4 6.25e8 B, F2 h0->h5 1.25e9 B, F3 h1->h6 1.5e9 B, all @0.
        #   nic(h0) up: 1.25e9/2 = 6.25e8 < tor0 up 2e9/3 -> F1 = F2 = 6.25e8;
        #   F3 gets the rest of tor0 up: 7.5e8.  F1 ends t=1.  Then tor0 up is
        #   the bottleneck for F2, F3: 1e9 each; F2 (6.25e8 left) ends 1.625;
        #   F3 has 7.5e8 - 6.25e8 = 1.25e8 left at 1.25e9 B/s -> 1.725.
        flows = [(0.0, 0, 4, 6.25e8), (0.0, 0, 5, 1.25e9), (0.0, 1, 6, 1.5e9)]
        got, wall = run_simgrid(2, 4, 10 * G, 16 * G, flows, mode=mode)
        _check("two bottlenecks", got, [1.0, 1.625, 1.725])

    # 4) random workload vs the independent pure-Python reference, both optims/modes:
    #    4 racks x 4 hosts, 10G hosts, 10G uplinks (4:1), 200 flows starting in [0, 2 ms]
    rng = random.Random(7)
    flows = [
        (round(rng.uniform(0, 0.002), 6), s, d, b)
        for (_, s, d, b) in bounded_pareto_flows(200, 4, 4, seed=3, hi_bytes=1e8)
    ]
    want = reference_maxmin(4, 4, 10 * G, 10 * G, flows)
    for mode, optim in (("sendto", "Lazy"), ("sendto", "Full"), ("mailbox", "Lazy")):
        got, wall = run_simgrid(4, 4, 10 * G, 10 * G, flows, mode=mode, optim=optim)
        _check(f"random 200 flows vs reference ({mode}/{optim}, wall {wall:.3f}s)", got, want, 1e-9)
    # 5) two independent intra-rack flows ending 0.8 ns apart (10000 vs 10001 bytes at
    #    10 Gbps: 8.0e-6 s and 8.0008e-6 s).  With SimGrid's default surf/precision
    #    (1e-9 s) the second one is finished together with the first (rel err 1e-4).
    flows = [(0.0, 0, 1, 10000.0), (0.0, 2, 3, 10001.0)]
    got, wall = run_simgrid(1, 4, 10 * G, 10 * G, flows)
    _check("near-simultaneous ends", got, [8e-6, 8.0008e-6], 1e-9)
    print("self-check OK")


def bench(n=10_000, racks=64, hosts_per_rack=16, timeout=330.0) -> None:
    flows = bounded_pareto_flows(n, racks, hosts_per_rack, seed=1)
    print(
        f"{n} flows, {racks}x{hosts_per_rack} hosts, 10G hosts, 40G ToR uplinks, "
        f"{sum(f[3] for f in flows) / 1e9:.3f} GB total"
    )
    t = time.perf_counter()
    try:
        fin, wall = run_simgrid(racks, hosts_per_rack, 10e9, 40e9, flows, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"timed out: killed after {time.perf_counter() - t:.1f} s")
        return
    print(
        f"SimGrid wall (build+run) = {wall:.2f} s (build {LAST_RUN['build_s']:.2f} s, "
        f"run {LAST_RUN['run_s']:.2f} s); subprocess total = {time.perf_counter() - t:.2f} s; "
        f"last finish = {max(fin):.6f} s"
    )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 2 and sys.argv[1] == "--bench":
        bench(*(int(a) for a in sys.argv[2:]))
    else:
        self_check()
