#!/usr/bin/env python3
"""`make bench-hdfs`: netheat's HDFS placement policy (default | sinbad | ccp) inside a real
HDFS cluster on network namespaces of this one machine (root). See benches/hdfs/README.md.

One NameNode and N DataNodes, each a JVM in its own network namespace; every namespace
has a veth to a Linux bridge inside a switch namespace (the root namespace is not touched;
all addresses are 10.77.0.0/24 inside namespaces this script creates). Each DataNode's
link is rate-limited in both directions with tbf. Background TCP flows from a `bg`
namespace load a few DataNodes' receive links, changing every PHASE seconds; a reporter
turns the veth byte counters into Sinbad's load file every second. Writers inside some
DataNodes' namespaces write files of whole blocks, 1 + G blocks with G geometric of mean
--mean-file-blocks - 1 (1.47 blocks on average: the Sinbad paper's file lengths from the
Facebook trace, SIGCOMM'13 section 4.3); a block's write time runs from its start (create(),
or the end of the file's previous block) to its last byte acknowledged by the pipeline
(hflush(), or close() for a file's last block).

Runs are interleaved (round r: the three modes, rotated) and round r uses the same
background schedule and writer seeds for every mode.
"""

import argparse
import contextlib
import csv
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.request  # noqa: F401  (probe runs in a namespace, see nn_live)
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "benches", "hdfs")
OUT = os.path.join(ROOT, "bench-out", "hdfs")
WORK = os.path.join(OUT, "work")
JAR = os.path.join(ROOT, "java", "hdfs-placement", "target", "netheat-hdfs-placement-0.1.0.jar")
P = "nhb-"  # prefix of every namespace / interface this script creates
SW = P + "sw"
NET = "10.77.0."
NN_IP = NET + "2"
BG_IP = NET + "3"
BG_PORT = 5201
MODES = ["default", "sinbad", "ccp"]

procs = []  # every process we start (own session: killed by process group)
namespaces = []  # every namespace we create


def sh(*cmd, check=True):
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def start(cmd, log, ns=None):
    if ns:
        cmd = ["ip", "netns", "exec", ns, *cmd]
    f = open(log, "w")  # noqa: SIM115 - handed to the daemon process; closed when it stops
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
    procs.append(p)
    return p


def stop(p, wait=10):
    if p.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(wait)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    if p in procs:
        procs.remove(p)


def cleanup():
    for p in list(procs):
        stop(p, 5)
    for ns in reversed(namespaces):
        sh("ip", "netns", "del", ns, check=False)
    namespaces.clear()


def dn_ip(i):
    return NET + str(10 + i)


def netns_up(args):
    for ns in sh("ip", "netns", "list").stdout.split():
        if ns.startswith(P):
            sh("ip", "netns", "del", ns, check=False)  # left over by a killed run of ours
    sh("ip", "netns", "add", SW)
    namespaces.append(SW)
    sh("ip", "-n", SW, "link", "set", "lo", "up")
    sh("ip", "-n", SW, "link", "add", "name", "br0", "type", "bridge")
    sh("ip", "-n", SW, "link", "set", "br0", "up")
    nodes = [("nn", NN_IP, None), ("bg", BG_IP, None)] + [
        (f"dn{i}", dn_ip(i), args.rate_mbit) for i in range(args.datanodes)
    ]
    for name, ip, rate in nodes:
        ns = P + name
        sh("ip", "netns", "add", ns)
        namespaces.append(ns)
        port = P + name  # switch-side end
        sh("ip", "-n", SW, "link", "add", "name", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
        sh("ip", "-n", SW, "link", "set", port, "master", "br0")
        sh("ip", "-n", SW, "link", "set", port, "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ns, "addr", "add", ip + "/24", "dev", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
        if rate:
            tbf = ["root", "tbf", "rate", f"{rate}mbit", "burst", "64kb", "latency", "50ms"]
            sh("tc", "-n", SW, "qdisc", "add", "dev", port, *tbf)  # DataNode receive
            sh("tc", "-n", ns, "qdisc", "add", "dev", "eth0", *tbf)  # DataNode send


def xml(path, props):
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?>\n<configuration>\n')
        for k, v in props.items():
            f.write(f"  <property><name>{k}</name><value>{v}</value></property>\n")
        f.write("</configuration>\n")


LOG4J = """log4j.rootLogger=WARN,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.io.netheat=INFO
log4j.logger.org.apache.hadoop.hdfs.server.namenode.NameNode=INFO
log4j.logger.org.apache.hadoop.hdfs.server.datanode.DataNode=INFO
"""


def racks_of(args):
    return [f"/rack{i * args.racks // args.datanodes}" for i in range(args.datanodes)]


def confs(args):
    racks = racks_of(args)
    with open(os.path.join(WORK, "topology.table"), "w") as f:
        for i in range(args.datanodes):
            f.write(f"{dn_ip(i)} {racks[i]}\n")
    with open(os.path.join(WORK, "classes.csv"), "w") as f:
        f.write("rack,class\n")
        for r, c in zip(range(args.racks), ["High", "High", "Medium", "Low"] * args.racks, strict=False):
            f.write(f"/rack{r},{c}\n")
    core = {
        "fs.defaultFS": f"hdfs://{NN_IP}:8020",
        "net.topology.node.switch.mapping.impl": "org.apache.hadoop.net.TableMapping",
        "net.topology.table.file.name": os.path.join(WORK, "topology.table"),
        "hadoop.security.token.service.use_ip": "true",
    }
    common = {
        "dfs.replication": "3",
        "dfs.blocksize": str(args.block_mb << 20),
        "dfs.permissions.enabled": "false",
        "dfs.heartbeat.interval": "1",
        "dfs.namenode.rpc-address": f"{NN_IP}:8020",
        "dfs.namenode.http-address": f"{NN_IP}:9870",
        "dfs.namenode.name.dir": os.path.join(WORK, "nn"),
        "dfs.namenode.datanode.registration.ip-hostname-check": "false",
        "dfs.namenode.safemode.threshold-pct": "0",
        "dfs.namenode.safemode.extension": "0",
        "dfs.namenode.fs-limits.min-block-size": "1048576",
    }
    for mode in MODES:
        d = os.path.join(WORK, "conf-nn-" + mode)
        os.makedirs(d, exist_ok=True)
        xml(os.path.join(d, "core-site.xml"), core)
        xml(
            os.path.join(d, "hdfs-site.xml"),
            {
                **common,
                "dfs.block.replicator.classname": "io.netheat.hdfs.NetheatBlockPlacementPolicy",
                "netheat.placement.mode": mode,
                "netheat.placement.loads.file": os.path.join(WORK, "loads.csv"),
                "netheat.placement.topology.file": os.path.join(WORK, "classes.csv"),
                "netheat.placement.sinbad.host-link-bps": str(args.rate_mbit * 1e6),
                # the paper's THRESHOLD scaled with the blocks (netheat's 10 MB default is for
                # full-size blocks): every block of this bench is steered
                "netheat.placement.sinbad.min-block-bytes": str((args.block_mb << 20) // 2),
            },
        )
        Path(d, "log4j.properties").write_text(LOG4J)
    for i in range(args.datanodes):
        d = os.path.join(WORK, f"conf-dn{i}")
        os.makedirs(d, exist_ok=True)
        xml(os.path.join(d, "core-site.xml"), core)
        xml(
            os.path.join(d, "hdfs-site.xml"),
            {
                **common,
                "dfs.datanode.data.dir": os.path.join(WORK, f"dn{i}"),
                "dfs.datanode.hostname": dn_ip(i),
            },
        )
        Path(d, "log4j.properties").write_text(LOG4J)
    for app in ("hdfs", "datanode", "static"):  # HttpServer2 wants them on the classpath;
        os.makedirs(os.path.join(WORK, "web", "webapps", app), exist_ok=True)  # the UI is unused
    d = os.path.join(WORK, "conf-client")
    os.makedirs(d, exist_ok=True)
    xml(os.path.join(d, "core-site.xml"), core)
    xml(os.path.join(d, "hdfs-site.xml"), common)
    Path(d, "log4j.properties").write_text(LOG4J.replace("INFO", "WARN"))


def java(conf, heap, cls, *a):
    return [
        "java",
        f"-Xmx{heap}",
        "-XX:+UseSerialGC",
        "-Djava.net.preferIPv4Stack=true",
        f"-Dhadoop.log.dir={WORK}/log",
        "-cp",
        f"{conf}:{WORK}/web:{JAR}:{CP}",
        cls,
        *a,
    ]


def nn_live():
    """Live DataNodes as the NameNode reports them (JMX over HTTP, from the bg namespace)."""
    code = (
        f"import json,urllib.request as u;print(json.load(u.urlopen('http://{NN_IP}:9870/jmx?qry="
        "Hadoop:service=NameNode,name=FSNamesystemState',timeout=2))['beans'][0]"
        "['NumLiveDataNodes'])"
    )
    r = subprocess.run(
        ["ip", "netns", "exec", P + "bg", sys.executable, "-c", code], capture_output=True, text=True
    )
    try:
        return int(r.stdout.strip())
    except ValueError:
        return -1


def wait_live(n, timeout):
    t = time.time()
    while time.time() - t < timeout:
        if nn_live() == n:
            return
        time.sleep(1)
    raise RuntimeError(f"{n} live DataNodes not reached in {timeout}s")


def schedule(args, rnd):
    phases, t = [], 0.0
    while t < args.warmup + args.duration + 30:
        k = rnd.randint(args.hot_min, args.hot_max)
        phases.append([t, sorted(rnd.sample(range(args.datanodes), k))])
        t += args.phase
    return phases


def one_run(args, rnd_round, mode, rnd_seed, tag):
    logd = os.path.join(WORK, "log")
    nn = start(
        java(os.path.join(WORK, "conf-nn-" + mode), "1g", "org.apache.hadoop.hdfs.server.namenode.NameNode"),
        os.path.join(logd, f"nn-{tag}.log"),
        P + "nn",
    )
    try:
        wait_live(args.datanodes, 90)
        rnd = random.Random(rnd_seed)
        phases = schedule(args, rnd)
        total = args.warmup + args.duration + 20
        cfg = {
            "phases": [[t, [dn_ip(i) for i in h]] for t, h in phases],
            "rate_bps": args.bg_load * args.rate_mbit * 1e6,
            "flows": args.bg_flows,
            "port": BG_PORT,
            "end_s": total,
        }
        bg = start(
            [sys.executable, os.path.join(HERE, "bgtraffic.py"), "send", json.dumps(cfg)],
            os.path.join(logd, f"bg-{tag}.log"),
            P + "bg",
        )
        time.sleep(args.warmup)  # the background is on and Sinbad's EWMA has converged
        writers = []
        for w in range(args.writers):
            i = w * args.datanodes // args.writers
            cmd = java(
                os.path.join(WORK, "conf-client"),
                "512m",
                "BlockWriter",
                f"hdfs://{NN_IP}:8020",
                f"w{i}",
                str(args.block_mb << 20),
                str(args.duration),
                str(args.think),
                str(rnd_seed * 100 + w),
                str(args.mean_file_blocks),
            )
            cmd[cmd.index("-cp") + 1] += ":" + os.path.join(OUT, "classes")
            log = os.path.join(logd, f"writer-{tag}-w{i}.csv")
            writers.append((start(cmd, log, P + f"dn{i}"), log))
        deadline = time.time() + args.duration + 120
        for p, _ in writers:
            p.wait(max(1, deadline - time.time()))
        rows = []
        for p, log in writers:
            stop(p)
            locs = {}
            mine = []
            for line in Path(log).read_text().splitlines(keepends=True):
                f = line.strip().split(",")
                if len(f) == 6 and f[0].startswith("w"):
                    mine.append(
                        {
                            "writer": f[0],
                            "file": int(f[1]),
                            "block": int(f[2]),
                            "start_s": float(f[3]),
                            "write_s": float(f[4]),
                            "replicas": f[5],
                        }
                    )
                elif len(f) == 5 and f[0] == "loc":
                    locs[(int(f[2]), int(f[3]))] = f[4]
            for x in mine:
                x["replicas"] = locs.get((x["file"], x["block"]), x["replicas"])
                # a writer's first block pays its JVM's warm-up: kept in blocks.csv, not timed
                x["timed"] = x["file"] > 0
            rows += mine
        stop(bg)
        hots = [h for t, h in phases if t < args.warmup + args.duration]
        return rows, hots
    finally:
        rm = java(
            os.path.join(WORK, "conf-client"),
            "256m",
            "org.apache.hadoop.fs.FsShell",
            "-rm",
            "-r",
            "-f",
            "-skipTrash",
            "/bench",
        )
        subprocess.run(["ip", "netns", "exec", P + "bg", *rm], capture_output=True, timeout=60)
        stop(nn)


def p95(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]


def cv(rows, args):
    per = {dn_ip(i): 0 for i in range(args.datanodes)}
    for r in rows:
        for ip in r["replicas"].split(";"):
            if ip in per:
                per[ip] += args.block_mb
    v = list(per.values())
    m = statistics.mean(v)
    return statistics.pstdev(v) / m if m else 0.0


def arg_parser():
    """The bench's settings (benches/hdfs/predict.py reads the same defaults)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datanodes", type=int, default=8)
    ap.add_argument(
        "--racks",
        type=int,
        default=8,
        help="HDFS racks (fault domains), DataNodes in contiguous blocks; the default, one DataNode "
        "per rack, is the Sinbad paper's EC2 form (sections 6.1 and 7: machines as their own fault "
        "domains, edge links balanced); 4: racks of 2 (ours)",
    )
    ap.add_argument("--rate-mbit", type=int, default=50, help="each DataNode's link, each way")
    ap.add_argument("--block-mb", type=int, default=8, help="block size (8 MiB stands in for 256 MB)")
    ap.add_argument(
        "--mean-file-blocks",
        type=float,
        default=1.47,
        help="mean blocks per file, 1 + geometric (Sinbad SIGCOMM'13 section 4.3: 1.47; 1: one-block files)",
    )
    ap.add_argument("--rounds", type=int, default=3, help="runs per mode (interleaved)")
    ap.add_argument("--duration", type=float, default=60, help="seconds of writes per run")
    ap.add_argument("--warmup", type=float, default=8, help="background on before writes")
    ap.add_argument("--writers", type=int, default=4, help="writers, on DataNodes 0, N/w, ...")
    ap.add_argument("--think", type=float, default=1.0, help="mean think time between files, s")
    ap.add_argument("--phase", type=float, default=30, help="background hot set lifetime, s")
    ap.add_argument("--hot-min", type=int, default=2)
    ap.add_argument("--hot-max", type=int, default=3)
    ap.add_argument("--bg-load", type=float, default=0.85, help="background load of a hot link")
    ap.add_argument("--bg-flows", type=int, default=4, help="TCP flows per hot link")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument(
        "--seed-base",
        type=int,
        default=1000,
        help="round r's background schedule and writer draws use seed SEED_BASE + r "
        "(the calibration runs of benches/hdfs/README.md use other seeds than the measurement)",
    )
    ap.add_argument("--out", default=OUT, help="directory of summary.csv and blocks.csv")
    return ap


def main():
    args = arg_parser().parse_args()
    if os.geteuid() != 0:
        sys.exit("bench-hdfs needs root (network namespaces, tc)")
    if not os.path.exists(JAR):
        sys.exit(f"{JAR} missing: mvn -q -B -f java/hdfs-placement/pom.xml package -DskipTests")
    modes = args.modes.split(",")
    t_start = time.time()
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(os.path.join(WORK, "log"))
    global CP
    cpf = os.path.join(OUT, "classpath.txt")
    subprocess.run(
        [
            "mvn",
            "-q",
            "-B",
            "-f",
            os.path.join(HERE, "pom.xml"),
            # Pinned: a fresh machine's ~/.m2 has no dependency plugin to resolve a prefix with.
            "org.apache.maven.plugins:maven-dependency-plugin:3.11.0:build-classpath",
            "-Dmdep.outputFile=" + cpf,
        ],
        check=True,
    )
    CP = Path(cpf).read_text().strip()
    os.makedirs(os.path.join(OUT, "classes"), exist_ok=True)
    subprocess.run(
        [
            "javac",
            "-nowarn",
            "-cp",
            CP,
            "-d",
            os.path.join(OUT, "classes"),
            os.path.join(HERE, "BlockWriter.java"),
        ],
        check=True,
    )
    confs(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    results = []
    try:
        netns_up(args)
        logd = os.path.join(WORK, "log")
        subprocess.run(
            java(
                os.path.join(WORK, "conf-nn-default"),
                "512m",
                "org.apache.hadoop.hdfs.server.namenode.NameNode",
                "-format",
                "-force",
                "-nonInteractive",
            ),
            check=True,
            capture_output=True,
        )
        for i in range(args.datanodes):
            start(
                java(
                    os.path.join(WORK, f"conf-dn{i}"),
                    "384m",
                    "org.apache.hadoop.hdfs.server.datanode.DataNode",
                ),
                os.path.join(logd, f"dn{i}.log"),
                P + f"dn{i}",
            )
            start(
                [sys.executable, os.path.join(HERE, "bgtraffic.py"), "recv", str(BG_PORT)],
                os.path.join(logd, f"recv{i}.log"),
                P + f"dn{i}",
            )
        start(
            [
                sys.executable,
                os.path.join(HERE, "reporter.py"),
                SW,
                os.path.join(WORK, "loads.csv"),
                str(args.rate_mbit * 1e6),
            ]
            + [f"{P}dn{i}={dn_ip(i)}" for i in range(args.datanodes)],
            os.path.join(logd, "reporter.log"),
        )
        for r in range(args.rounds):
            order = modes[r % len(modes) :] + modes[: r % len(modes)]
            for mode in order:
                t = time.time()
                rows, hots = one_run(args, r, mode, args.seed_base + r, f"r{r}-{mode}")
                ws = [x["write_s"] for x in rows if x["timed"]]
                res = {
                    "round": r,
                    "mode": mode,
                    "blocks": len(ws),
                    "avg_s": statistics.mean(ws) if ws else float("nan"),
                    "p95_s": p95(ws) if ws else float("nan"),
                    "cv": cv(rows, args),
                    "rows": rows,
                }
                results.append(res)
                print(
                    f"round {r} {mode:8s}: {len(ws):4d} blocks, avg {res['avg_s']:.2f} s, "
                    f"p95 {res['p95_s']:.2f} s, storage Cv {res['cv']:.3f}, hot sets {hots} "
                    f"({time.time() - t:.0f} s)",
                    flush=True,
                )
    finally:
        cleanup()
    report(args, modes, results, time.time() - t_start)


def report(args, modes, results, took):
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "blocks.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "mode", "writer", "file", "block", "start_s", "write_s", "timed", "replicas"])
        for res in results:
            for x in res["rows"]:
                w.writerow(
                    [
                        res["round"],
                        res["mode"],
                        x["writer"],
                        x["file"],
                        x["block"],
                        x["start_s"],
                        x["write_s"],
                        int(x["timed"]),
                        x["replicas"],
                    ]
                )
    summary = []
    for mode in modes:
        rs = [r for r in results if r["mode"] == mode]
        ws = [x["write_s"] for r in rs for x in r["rows"] if x["timed"]]
        if not ws:
            continue
        summary.append(
            {
                "mode": mode,
                "runs": len(rs),
                "blocks": len(ws),
                "avg_s": statistics.mean(ws),
                "p95_s": p95(ws),
                "run_avgs": [round(r["avg_s"], 3) for r in rs],
                "cv": statistics.mean(r["cv"] for r in rs),
            }
        )
    base = next((s for s in summary if s["mode"] == "default"), None)
    print(
        f"\nHDFS block writes: {args.datanodes} DataNodes in {args.racks} racks, links "
        f"{args.rate_mbit} Mbit/s each way (tbf), {args.block_mb} MiB blocks ({args.mean_file_blocks} "
        f"blocks per file on average, replication 3), {args.writers} writers on DataNodes, background "
        f"{args.hot_min}-{args.hot_max} hot DataNodes at {args.bg_load:.0%} receive load, "
        f"changing every {args.phase:.0f} s; {args.duration:.0f} s of writes per run"
    )
    hdr = (
        f"{'mode':8s} {'runs':>4s} {'blocks':>6s} {'avg s':>7s} {'p95 s':>7s} "
        f"{'speedup avg':>11s} {'speedup p95':>11s} {'storage Cv':>10s}  per-run avg s"
    )
    print(hdr)
    print("-" * len(hdr))
    with open(os.path.join(args.out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "mode",
                "runs",
                "blocks",
                "avg_write_s",
                "p95_write_s",
                "speedup_avg_vs_default",
                "speedup_p95_vs_default",
                "storage_cv",
                "run_avgs_s",
                "datanodes",
                "racks",
                "link_mbit",
                "block_mib",
                "mean_file_blocks",
                "writers",
                "bg_load",
                "bg_hot",
                "duration_s",
            ]
        )
        for s in summary:
            sa = base["avg_s"] / s["avg_s"] if base else float("nan")
            sp = base["p95_s"] / s["p95_s"] if base else float("nan")
            print(
                f"{s['mode']:8s} {s['runs']:4d} {s['blocks']:6d} {s['avg_s']:7.2f} "
                f"{s['p95_s']:7.2f} {sa:10.2f}x {sp:10.2f}x {s['cv']:10.3f}  {s['run_avgs']}"
            )
            w.writerow(
                [
                    s["mode"],
                    s["runs"],
                    s["blocks"],
                    f"{s['avg_s']:.4f}",
                    f"{s['p95_s']:.4f}",
                    f"{sa:.3f}",
                    f"{sp:.3f}",
                    f"{s['cv']:.4f}",
                    " ".join(map(str, s["run_avgs"])),
                    args.datanodes,
                    args.racks,
                    args.rate_mbit,
                    args.block_mb,
                    args.mean_file_blocks,
                    args.writers,
                    args.bg_load,
                    f"{args.hot_min}-{args.hot_max}",
                    args.duration,
                ]
            )
    print(f"\nwritten: {args.out}/summary.csv, {args.out}/blocks.csv (took {took:.0f} s)")


CP = ""

if __name__ == "__main__":
    main()
