package io.netheat.hdfs;

import static io.netheat.hdfs.TestSupport.checkFaultDomains;
import static io.netheat.hdfs.TestSupport.nowSeconds;
import static io.netheat.hdfs.TestSupport.rackOf;
import static io.netheat.hdfs.TestSupport.waitFor;
import static io.netheat.hdfs.TestSupport.writeAtomically;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.protocol.BlockStoragePolicy;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicy;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockStoragePolicySuite;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo;
import org.apache.hadoop.hdfs.server.blockmanagement.NetheatTestAccess;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.apache.hadoop.net.NetheatRandomSeed;
import org.apache.hadoop.net.NetworkTopology;
import org.apache.hadoop.net.Node;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * chooseTarget called directly, in the style of HDFS's TestAvailableSpaceBlockPlacementPolicy:
 * an in-process NameNode whose NetworkTopology holds fake DataNodes (DFSTestUtil), no
 * MiniDFSCluster. 4 racks x 5 DataNodes named r{rack}h{slot}, replication 3, 128 MiB blocks.
 * The NameNode runs netheat's policy (so the plug-in path is exercised); each test builds its
 * own policy instance on the same topology with the settings it needs.
 */
class ChooseTargetTest {
  static final int RACKS = 4;
  static final int PER_RACK = 5;
  static final long BLOCK = 128L << 20;
  static final long TB = 1L << 40;
  static final double HOST_BPS = 1e9;
  static final String SRC = "/netheat/test";
  static final BlockStoragePolicy HOT =
      BlockStoragePolicySuite.createDefaultSuite().getDefaultPolicy();

  static Path dir;
  static Configuration conf;
  static NameNode namenode;
  static NetworkTopology cluster;
  static DatanodeDescriptor[] nodes;
  final List<NetheatBlockPlacementPolicy> started = new ArrayList<>();

  @BeforeAll
  static void startNameNode() throws Exception {
    Path base = Path.of(System.getProperty("test.build.data", "target/test-data"));
    Files.createDirectories(base);
    dir = Files.createTempDirectory(base, "choose-target");
    String[] racks = new String[RACKS * PER_RACK];
    String[] hosts = new String[RACKS * PER_RACK];
    for (int r = 0; r < RACKS; r++) {
      for (int i = 0; i < PER_RACK; i++) {
        racks[r * PER_RACK + i] = "/rack" + r;
        hosts[r * PER_RACK + i] = "r" + r + "h" + i;
      }
    }
    conf = new HdfsConfiguration();
    conf.set(DFSConfigKeys.DFS_BLOCK_REPLICATOR_CLASSNAME_KEY,
        NetheatBlockPlacementPolicy.class.getName());
    conf.set(PlacementKeys.MODE, "sinbad");
    conf.set(PlacementKeys.LOADS_FILE, dir.resolve("namenode-loads.csv").toString());
    TestSupport.FakeCluster fc = TestSupport.startNameNode(conf, dir.toFile(), racks, hosts);
    namenode = fc.namenode();
    cluster = fc.topology();
    nodes = fc.nodes();
  }

  @AfterAll
  static void stopNameNode() {
    if (namenode != null) {
      ((NetheatBlockPlacementPolicy) namenode.getNamesystem().getBlockManager()
          .getBlockPlacementPolicy()).shutdown();
      namenode.stop();
    }
  }

  @AfterEach
  void stopPolicies() {
    for (NetheatBlockPlacementPolicy p : started) {
      p.shutdown();
    }
  }

  static DatanodeDescriptor node(int rack, int slot) {
    return nodes[rack * PER_RACK + slot];
  }

  /** A policy on the NameNode's topology: the base settings plus {@code extra}. */
  NetheatBlockPlacementPolicy policy(Map<String, String> extra) {
    Configuration c = new Configuration(conf);
    c.unset(PlacementKeys.LOADS_FILE);
    c.unset(PlacementKeys.LOADS_URL);
    // The refresh thread reads once at start; the tests drive reports with refreshNow().
    c.set(PlacementKeys.REFRESH_MS, "3600000");
    c.set(PlacementKeys.STALE_MS, "3600000");
    c.set(PlacementKeys.SINBAD_INTERVAL_MS, "1000");
    c.set(PlacementKeys.SINBAD_HOST_LINK_BPS, Double.toString(HOST_BPS));
    c.set(PlacementKeys.SINBAD_OVERSUBSCRIPTION, "1");
    for (Map.Entry<String, String> e : extra.entrySet()) {
      c.set(e.getKey(), e.getValue());
    }
    NetheatBlockPlacementPolicy p = new NetheatBlockPlacementPolicy();
    NetheatTestAccess.initialize(p, c, namenode);
    started.add(p);
    return p;
  }

  NetheatBlockPlacementPolicy sinbad(Path loads) {
    return policy(Map.of(PlacementKeys.MODE, "sinbad", PlacementKeys.LOADS_FILE,
        loads.toString()));
  }

  /** One report: every host of rack r at {@code util[r]}, all stamped {@code ts}. */
  static void writeLoads(Path f, double[] util, double ts, String tag) throws Exception {
    StringBuilder b = new StringBuilder("# ").append(tag).append("\nhost,utilization,timestamp\n");
    for (int r = 0; r < RACKS; r++) {
      for (int i = 0; i < PER_RACK; i++) {
        b.append("r").append(r).append("h").append(i).append(',').append(util[r]).append(',')
            .append(String.format("%.3f", ts)).append('\n');
      }
    }
    writeAtomically(f, b.toString());
  }

  static DatanodeStorageInfo[] choose(BlockPlacementPolicy p, Node writer, long block) {
    return p.chooseTarget(SRC, 3, writer, new ArrayList<>(), false, null, block, HOT, null);
  }

  @Test
  void policyIsPluggedInThroughTheReplicatorKey() {
    BlockPlacementPolicy p = namenode.getNamesystem().getBlockManager().getBlockPlacementPolicy();
    assertInstanceOf(NetheatBlockPlacementPolicy.class, p);
    assertEquals(NetheatBlockPlacementPolicy.Mode.SINBAD,
        ((NetheatBlockPlacementPolicy) p).mode());
  }

  /**
   * The hot rack's share of new replicas under Sinbad, against a bound derived by hand.
   *
   * <p>Setup: rack 0 hot (every host reports utilization 0.9), racks 1-3 cold (0.10, 0.12,
   * 0.14); host links 1 Gbps, rack downlinks 5 x 1 Gbps (oversubscription 1); 128 MiB blocks;
   * Delta = 1 s; writers are DataNodes, call k written by rack k mod 4 (slot (k / 4) mod 5), so
   * exactly 2,500 of the 10,000 writers sit on the hot rack; a report (the same utilizations)
   * arrives before every 8th call, i.e. 8 blocks per report interval.
   *
   * <p>Derivation. HDFS puts replica 1 on the writer, replicas 2 and 3 on one other rack; the
   * policy chooses that rack (replica 2: least-loaded rack downlink off the writer's rack) and
   * the hosts in it. Rack loads after n reports (EWMA from 0, alpha 0.2): L (1 - 0.8^n) with L
   * = 4.5, 0.5, 0.6, 0.7 Gbps; expected capacities 5 - L (1 - 0.8^n). Each block placed on a
   * rack adds b = min(Cap - v, 8 x 128 MiB / 1 s) = 1.0737 Gbps to that rack until the next
   * report. A cold rack j stays strictly better than the hot rack until it has taken m blocks
   * with m b >= (4.5 - L_j)(1 - 0.8^n); the smallest gap, rack 3's 3.8 (1 - 0.8^n) Gbps,
   * exceeds 3 b = 3.221 Gbps once 0.8^n < 0.152, i.e. from the 9th report on: then every cold
   * rack absorbs 4 blocks before the hot rack can win. A writer on a cold rack has two cold
   * candidates, so the hot rack can win only after 8 blocks of the same interval went to those
   * two racks: impossible with 8 blocks per interval. A writer on the hot rack never places
   * remote replicas there. So from call 64 on, the hot rack receives only the 2,500 local
   * replicas of its own writers; in the first 8 intervals (64 calls, 48 by cold-rack writers)
   * it can receive at most 2 replicas per call. Bound: share <= (2500 + 2 x 48) / 30000 =
   * 0.0865 (and >= 2500 / 30000 = 0.0833, the local replicas). HDFS's default gives 1/4.
   *
   * <p>Hysteresis check from the same derivation: from the 9th report on, the greedy order
   * inside every interval is fixed (writer racks 0,1,2,3,0,1,2,3 choose racks 1,2,3,1,2,3,1,2),
   * so racks 1, 2, 3 get 3/8, 3/8, 2/8 of the blocks (up to 64 blocks of warm-up). Without
   * hysteresis rack 1, the least loaded, would take every block not written from it: 3/4.
   */
  @Test
  void sinbadKeepsTheHotRackShareBelowTheDerivedBound() throws Exception {
    Path loads = dir.resolve("hot.csv");
    double[] util = {0.90, 0.10, 0.12, 0.14};
    writeLoads(loads, util, nowSeconds(), "report 0");
    NetheatBlockPlacementPolicy p = sinbad(loads);
    // Every block of an interval is placed at its report's instant (the derivation's setting):
    // delta = Delta, whatever the time the calls take on this machine.
    p.estimator().clock(() -> 0L);
    final int calls = 10_000;
    int hotReplicas = 0;
    int replicas = 0;
    int[] remoteBlocks = new int[RACKS];
    for (int k = 0; k < calls; k++) {
      if (k % 8 == 0) {
        writeLoads(loads, util, nowSeconds(), "report " + (k / 8 + 1));
        p.refreshNow();
      }
      DatanodeDescriptor w = node(k % RACKS, (k / RACKS) % PER_RACK);
      DatanodeStorageInfo[] t = choose(p, w, BLOCK);
      checkFaultDomains(t, w);
      int remoteRack = -1;
      for (DatanodeStorageInfo s : t) {
        int r = rackOf(s.getDatanodeDescriptor());
        replicas++;
        if (r == 0) {
          hotReplicas++;
        }
        if (s.getDatanodeDescriptor() != w) {
          assertTrue(remoteRack == -1 || remoteRack == r, "both remote replicas on one rack");
          remoteRack = r;
        }
      }
      remoteBlocks[remoteRack]++;
    }
    // The first report may have been applied by the refresh thread's start-up read; either
    // way each report counts once, so at least 1,250 reports were applied.
    assertTrue(p.estimator().reports() >= calls / 8, "reports applied");
    double share = (double) hotReplicas / replicas;
    double bound = (2500 + 2 * 48) / 30000.0;
    System.out.printf("sinbad: hot-rack share %.4f (bound %.4f, local floor %.4f); remote blocks"
        + " per rack %s%n", share, bound, 2500 / 30000.0, java.util.Arrays.toString(remoteBlocks));
    assertTrue(share <= bound, "hot-rack share " + share + " > derived bound " + bound);
    assertTrue(share >= 2500 / 30000.0, "the hot rack's own writers keep their local replica");
    double warm = 64.0 / calls;
    assertTrue(remoteBlocks[1] / (double) calls <= 3.0 / 8 + warm, "rack 1 " + remoteBlocks[1]);
    assertTrue(remoteBlocks[2] / (double) calls <= 3.0 / 8 + warm, "rack 2 " + remoteBlocks[2]);
    assertTrue(remoteBlocks[3] / (double) calls >= 2.0 / 8 - warm, "rack 3 " + remoteBlocks[3]);
    assertEquals(0, p.fallbackCount());

    // HDFS's default on the same calls, for contrast: the hot share is 1/4 in expectation;
    // remote blocks of the 7,500 cold-rack writers hit it as Binomial(7500, 1/3), sd 40.8
    // blocks = 0.0027 of the share, so the window +-0.02 (7.3 sd) fails falsely with
    // probability < 1e-12.
    BlockPlacementPolicy def = NetheatTestAccess.newDefaultPolicy(conf, namenode);
    int defHot = 0;
    for (int k = 0; k < calls; k++) {
      DatanodeDescriptor w = node(k % RACKS, (k / RACKS) % PER_RACK);
      for (DatanodeStorageInfo s : choose(def, w, BLOCK)) {
        defHot += rackOf(s.getDatanodeDescriptor()) == 0 ? 1 : 0;
      }
    }
    double defShare = defHot / (3.0 * calls);
    System.out.printf("default: hot-rack share %.4f%n", defShare);
    assertTrue(Math.abs(defShare - 0.25) < 0.02, "default share " + defShare);
  }

  /**
   * With loads older than the stale limit the policy must be HDFS's default, bit for bit. Both
   * draw from NetworkTopology's random source, seeded identically, on the same topology and
   * call sequence, so the chosen sequences must be equal. The test is deterministic: its
   * false-failure probability is 0.
   */
  @Test
  void staleLoadsPlaceExactlyLikeHdfsDefault() throws Exception {
    Path loads = dir.resolve("stale.csv");
    double[] util = {0.90, 0.10, 0.12, 0.14};
    // Two hours old with a one-hour limit.
    writeLoads(loads, util, nowSeconds() - 7200, "old");
    NetheatBlockPlacementPolicy p = sinbad(loads);
    p.refreshNow();
    assertTrue(p.staleNow());
    BlockPlacementPolicy def = NetheatTestAccess.newDefaultPolicy(conf, namenode);
    List<String> a = runSeeded(p, 42, 3000);
    List<String> b = runSeeded(def, 42, 3000);
    assertEquals(b, a);
    Set<String> seen = new HashSet<>();
    for (String s : a) {
      for (String h : s.split(" ")) {
        seen.add(h);
      }
    }
    assertEquals(RACKS * PER_RACK, seen.size(), "the comparison covers every DataNode");
    assertEquals(1, p.staleLogCount(), "stale logged once");

    // Fresh loads: steered again (logged once); stale again: default again (logged once more).
    writeLoads(loads, util, nowSeconds(), "fresh");
    p.refreshNow();
    assertFalse(p.staleNow());
    assertFalse(p.staleNow());
    assertEquals(1, p.freshLogCount(), "recovery logged once");
    assertNotEquals(b, runSeeded(p, 42, 3000), "fresh loads steer");
    writeLoads(loads, util, nowSeconds() - 7200, "old again");
    p.refreshNow();
    assertTrue(p.staleNow());
    assertTrue(p.staleNow());
    assertEquals(2, p.staleLogCount());
    assertEquals(b, runSeeded(p, 42, 3000));
  }

  /** Writers: four DataNodes in turn, then an outside client (null). */
  private static List<String> runSeeded(BlockPlacementPolicy p, long seed, int calls) {
    NetheatRandomSeed.set(cluster, seed);
    List<String> out = new ArrayList<>(calls);
    for (int k = 0; k < calls; k++) {
      Node w = k % 5 == 4 ? null : node(k % RACKS, (k / RACKS) % PER_RACK);
      DatanodeStorageInfo[] t = choose(p, w, BLOCK);
      checkFaultDomains(t, w);
      StringBuilder s = new StringBuilder();
      for (DatanodeStorageInfo x : t) {
        s.append(s.length() == 0 ? "" : " ").append(x.getDatanodeDescriptor().getHostName());
      }
      out.add(s.toString());
    }
    return out;
  }

  @Test
  void smallBlocksAreLeftToTheDefault() throws Exception {
    Path loads = dir.resolve("small.csv");
    writeLoads(loads, new double[] {0.9, 0.1, 0.1, 0.1}, nowSeconds(), "r");
    NetheatBlockPlacementPolicy p = sinbad(loads);
    p.refreshNow();
    assertFalse(p.staleNow());
    BlockPlacementPolicy def = NetheatTestAccess.newDefaultPolicy(conf, namenode);
    // 1 MB < 10 MB threshold: identical to the default, and no hysteresis bump.
    double before = p.estimator().rackLoad("/rack1");
    NetheatRandomSeed.set(cluster, 9);
    List<String> a = new ArrayList<>();
    for (int k = 0; k < 500; k++) {
      a.add(names(choose(p, node(0, k % PER_RACK), 1_000_000L)));
    }
    NetheatRandomSeed.set(cluster, 9);
    List<String> b = new ArrayList<>();
    for (int k = 0; k < 500; k++) {
      b.add(names(choose(def, node(0, k % PER_RACK), 1_000_000L)));
    }
    assertEquals(b, a);
    assertEquals(before, p.estimator().rackLoad("/rack1"));
  }

  private static String names(DatanodeStorageInfo[] t) {
    StringBuilder s = new StringBuilder();
    for (DatanodeStorageInfo x : t) {
      s.append(x.getDatanodeDescriptor().getHostName()).append(' ');
    }
    return s.toString();
  }

  /**
   * CCP: High before Medium before Low. Rack 1 High, rack 2 Medium, racks 0 and 3 Low. While
   * rack 1 has room, every block a writer off rack 1 places remotely goes there; a writer on
   * rack 1 must leave it and takes Medium. No remote replica ever lands on a Low rack here.
   * Then rack 1 is filled (no room): Medium takes its place; then rack 2 too: Low racks are
   * used and writes still succeed.
   */
  @Test
  void ccpNeverPicksALowRackWhileAHighRackHasRoom() throws Exception {
    Path classes = dir.resolve("classes.csv");
    writeAtomically(classes, "# netheat uplink classes\nrack,class\n/rack0,Low\n/rack1,High\n"
        + "/rack2,Medium\n/rack3,low\n");
    NetheatBlockPlacementPolicy p = policy(Map.of(PlacementKeys.MODE, "ccp",
        PlacementKeys.TOPOLOGY_FILE, classes.toString()));
    p.refreshNow();
    assertEquals(RACKS * PER_RACK, p.classes().scoreableCount());
    int lowRemote = 0;
    for (int k = 0; k < 10_000; k++) {
      Node w = k % 5 == 4 ? null : node(k % RACKS, (k / RACKS) % PER_RACK);
      DatanodeStorageInfo[] t = choose(p, w, BLOCK);
      checkFaultDomains(t, w);
      Set<Integer> racks = new HashSet<>();
      for (DatanodeStorageInfo s : t) {
        DatanodeDescriptor d = s.getDatanodeDescriptor();
        racks.add(rackOf(d));
        if (d != w && (rackOf(d) == 0 || rackOf(d) == 3)) {
          lowRemote++;
        }
      }
      boolean writerOnHigh = w != null && rackOf(w) == 1;
      assertTrue(racks.contains(writerOnHigh ? 2 : 1), "best class taken: " + racks);
    }
    assertEquals(0, lowRemote, "remote replicas on Low racks while High/Medium had room");

    try {
      for (int i = 0; i < PER_RACK; i++) {
        NetheatTestAccess.setUsage(node(1, i), TB, TB, 0); // High rack full
      }
      for (int k = 0; k < 400; k++) {
        DatanodeDescriptor w = node(k % 2 == 0 ? 0 : 3, k % PER_RACK); // Low-rack writers
        DatanodeStorageInfo[] t = choose(p, w, BLOCK);
        checkFaultDomains(t, w);
        for (DatanodeStorageInfo s : t) {
          DatanodeDescriptor d = s.getDatanodeDescriptor();
          assertNotEquals(1, rackOf(d), "full rack used");
          if (d != w) {
            assertEquals(2, rackOf(d), "Medium before Low");
          }
        }
      }
      for (int i = 0; i < PER_RACK; i++) {
        NetheatTestAccess.setUsage(node(2, i), TB, TB, 0); // Medium full too
      }
      for (int k = 0; k < 400; k++) {
        DatanodeDescriptor w = node(k % 2 == 0 ? 0 : 3, k % PER_RACK);
        DatanodeStorageInfo[] t = choose(p, w, BLOCK);
        checkFaultDomains(t, w);
        for (DatanodeStorageInfo s : t) {
          int r = rackOf(s.getDatanodeDescriptor());
          assertTrue(r == 0 || r == 3, "only Low racks have room");
        }
      }
    } finally {
      for (DatanodeDescriptor d : nodes) {
        NetheatTestAccess.setUsage(d, TB, 0, TB);
      }
    }
    assertEquals(0, p.fallbackCount());
  }

  /**
   * A class file that disagrees with the NameNode (host r1h0 put in /rack2; rack /rack3 given
   * two classes; an unknown host; a bad class name): each problem logged once over repeated
   * reads, the hosts concerned unknown, the others ranked.
   */
  @Test
  void ccpClassFileThatDisagreesWithTheNameNode() throws Exception {
    Path classes = dir.resolve("classes-bad.csv");
    String text = "/rack0,Low\n/rack1,High\n/rack2,Medium\nr1h0,/rack2,Medium\n"
        + "r3h0,/rack3,High\nr3h1,/rack3,Low\nnosuchhost,/rack1,High\n/rack9,Sideways\n";
    writeAtomically(classes, text);
    NetheatBlockPlacementPolicy p = policy(Map.of(PlacementKeys.MODE, "ccp",
        PlacementKeys.TOPOLOGY_FILE, classes.toString()));
    for (int i = 0; i < 3; i++) {
      writeAtomically(classes, text + "# read " + i + "\n");
      p.refreshNow();
    }
    assertNull(p.classes().classOf(node(1, 0)), "disagreeing host is unknown");
    assertEquals(UplinkClasses.UplinkClass.HIGH, p.classes().classOf(node(1, 1)));
    assertNull(p.classes().classOf(node(3, 0)), "rack with two classes is unknown");
    assertNull(p.classes().classOf(node(3, 4)));
    assertEquals(1, p.logOnce().count("class-disagree:r1h0"));
    assertEquals(1, p.logOnce().count("class-conflict:/rack3"));
    assertEquals(1, p.logOnce().count("class-unknown-host:nosuchhost"));
    assertEquals(1, p.logOnce().count("class-name:/rack9"));
    for (int k = 0; k < 200; k++) {
      DatanodeDescriptor w = node(k % RACKS, k % PER_RACK);
      checkFaultDomains(choose(p, w, BLOCK), w);
    }
    assertEquals(0, p.fallbackCount());
  }

  /**
   * Bad loads: an unknown host, NaN, a negative value, garbage, a host listed twice, a value
   * above 1. Each logged once over three reports; the hosts concerned are unknown and keep the
   * default's chance: r1h0 (NaN) is still chosen. With writers on rack 0, each call draws
   * r1h0 as the remote replica with probability 1/15 through the default's random pick, so it
   * stays unchosen in 300 calls with probability (14/15)^300 < 1e-8.
   */
  @Test
  void badLoadsAreLoggedOnceAndTheirHostsLeftToTheDefault() throws Exception {
    Path loads = dir.resolve("bad.csv");
    NetheatBlockPlacementPolicy p = sinbad(loads);
    for (int rep = 0; rep < 3; rep++) {
      double ts = nowSeconds();
      // The tag keeps two reports written within one millisecond distinct (same digest = old).
      StringBuilder b = new StringBuilder("# report " + rep + "\nhost,utilization,timestamp\n");
      for (int r = 0; r < RACKS; r++) {
        for (int i = 0; i < PER_RACK; i++) {
          String h = "r" + r + "h" + i;
          String u = r == 0 ? "0.9" : "0.1";
          if (h.equals("r1h0")) {
            u = "NaN";
          } else if (h.equals("r1h1")) {
            u = "-0.5";
          } else if (h.equals("r1h2")) {
            u = "lots";
          } else if (h.equals("r3h0")) {
            u = "1.7";
          }
          b.append(h).append(',').append(u).append(',').append(ts).append('\n');
        }
      }
      b.append("r2h0,0.2,").append(ts).append('\n');
      b.append("nosuchhost,0.5,").append(ts).append('\n');
      writeAtomically(loads, b.toString());
      p.refreshNow();
    }
    assertTrue(p.estimator().reports() >= 3);
    for (String key : new String[] {"load-value:r1h0", "load-value:r1h1", "load-value:r1h2",
        "load-dup:r2h0", "load-clamp:r3h0", "load-unknown-host:nosuchhost"}) {
      assertEquals(1, p.logOnce().count(key), key + " logged once: " + p.logOnce().keys());
    }
    assertFalse(p.estimator().isScoreable(node(1, 0)));
    assertFalse(p.estimator().isScoreable(node(1, 1)));
    assertFalse(p.estimator().isScoreable(node(1, 2)));
    assertFalse(p.estimator().isScoreable(node(2, 0)));
    assertTrue(p.estimator().isScoreable(node(3, 0)), "clamped value is usable");
    assertTrue(p.estimator().isScoreable(node(1, 3)));
    int unknownChosen = 0;
    for (int k = 0; k < 300; k++) {
      DatanodeDescriptor w = node(0, k % PER_RACK);
      DatanodeStorageInfo[] t = choose(p, w, BLOCK);
      checkFaultDomains(t, w);
      for (DatanodeStorageInfo s : t) {
        unknownChosen += s.getDatanodeDescriptor() == node(1, 0) ? 1 : 0;
      }
    }
    assertTrue(unknownChosen > 0, "an unknown host keeps the default's chance");
    assertEquals(0, p.fallbackCount());
  }

  /**
   * Any exception inside the policy falls back to the default's choice: in the steering step
   * (the default's own pick is kept) and escaping into HDFS's code (the call is re-run
   * unsteered with the caller's arguments restored). Each failure kind is logged once.
   */
  @Test
  void internalErrorsFallBackToTheDefaultChoice() throws Exception {
    Path loads = dir.resolve("fault.csv");
    writeLoads(loads, new double[] {0.9, 0.1, 0.1, 0.1}, nowSeconds(), "r");
    NetheatBlockPlacementPolicy p = sinbad(loads);
    p.refreshNow();
    p.setFaultInjector(stage -> {
      if (stage.equals("steer")) {
        throw new IllegalStateException("injected");
      }
    });
    for (int k = 0; k < 100; k++) {
      DatanodeDescriptor w = node(k % RACKS, k % PER_RACK);
      checkFaultDomains(choose(p, w, BLOCK), w);
    }
    long afterSteer = p.fallbackCount();
    assertTrue(afterSteer >= 100);
    assertEquals(1, p.logOnce().count("fallback:java.lang.IllegalStateException"));

    p.setFaultInjector(stage -> {
      if (stage.equals("pick")) {
        throw new UnsupportedOperationException("injected");
      }
    });
    DatanodeDescriptor banned = node(2, 2);
    for (int k = 0; k < 100; k++) {
      DatanodeDescriptor w = node(k % RACKS, k % PER_RACK);
      if (w == banned) {
        w = node(2, 3);
      }
      Set<Node> excluded = new HashSet<>(Set.of(banned));
      DatanodeStorageInfo[] t =
          p.chooseTarget(SRC, 3, w, new ArrayList<>(), false, excluded, BLOCK, HOT, null);
      checkFaultDomains(t, w);
      for (DatanodeStorageInfo s : t) {
        assertNotEquals(banned, s.getDatanodeDescriptor(), "excluded node honoured on retry");
      }
    }
    assertEquals(afterSteer + 100, p.fallbackCount());
    assertEquals(1, p.logOnce().count("fallback:java.lang.UnsupportedOperationException"));
  }

  /**
   * Loads from an HTTP URL (the future {@code netheat serve}), read by the background thread
   * every 100 ms: steering starts without any call from the test, goes stale (logged once)
   * while the server fails, and resumes (logged once) when it answers again.
   */
  @Test
  void urlLoadsAreRefreshedInTheBackgroundAndGoStale() throws Exception {
    AtomicReference<String> body = new AtomicReference<>("");
    AtomicInteger status = new AtomicInteger(200);
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(),
        0), 0);
    server.createContext("/loads", ex -> {
      byte[] b = body.get().getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(status.get(), status.get() == 200 ? b.length : -1);
      if (status.get() == 200) {
        try (OutputStream o = ex.getResponseBody()) {
          o.write(b);
        }
      }
      ex.close();
    });
    server.start();
    Thread feeder = null;
    try {
      Runnable refreshBody = () -> {
        StringBuilder b = new StringBuilder();
        double ts = nowSeconds();
        for (DatanodeDescriptor d : nodes) {
          b.append(d.getHostName()).append(',').append(rackOf(d) == 0 ? 0.9 : 0.1).append(',')
              .append(ts).append('\n');
        }
        body.set(b.toString());
      };
      refreshBody.run();
      String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/loads";
      NetheatBlockPlacementPolicy p = policy(Map.of(PlacementKeys.MODE, "sinbad",
          PlacementKeys.LOADS_URL, url, PlacementKeys.REFRESH_MS, "100",
          PlacementKeys.STALE_MS, "2000"));
      waitFor(() -> p.estimator().scoreableCount() == RACKS * PER_RACK && !p.staleNow(), 10_000,
          "first loads from the URL");
      DatanodeDescriptor w = node(1, 0);
      DatanodeStorageInfo[] t = choose(p, w, BLOCK);
      checkFaultDomains(t, w);
      assertNotEquals(0, rackOf(t[1].getDatanodeDescriptor()), "hot rack avoided");

      status.set(500);
      waitFor(p::staleNow, 10_000, "stale loads");
      Thread.sleep(300); // several more failed fetches
      assertTrue(p.staleNow());
      assertEquals(1, p.logOnce().count("loads-io"), "fetch failure logged once");
      int staleLogs = p.staleLogCount();
      int freshLogs = p.freshLogCount();

      refreshBody.run();
      status.set(200);
      // The producer keeps reporting, as netheat serve would.
      feeder = new Thread(() -> {
        while (!Thread.currentThread().isInterrupted()) {
          refreshBody.run();
          try {
            Thread.sleep(100);
          } catch (InterruptedException e) {
            return;
          }
        }
      });
      feeder.start();
      waitFor(() -> !p.staleNow(), 10_000, "fresh loads again");
      Thread.sleep(300);
      assertFalse(p.staleNow());
      assertEquals(staleLogs, p.staleLogCount(), "stale logged once");
      assertEquals(freshLogs + 1, p.freshLogCount(), "recovery logged once");
      assertNotNull(p.estimator());
    } finally {
      if (feeder != null) {
        feeder.interrupt();
        feeder.join();
      }
      server.stop(0);
    }
  }
}
