package io.netheat.hdfs;

import static io.netheat.hdfs.TestSupport.checkFaultDomains;
import static io.netheat.hdfs.TestSupport.nowSeconds;
import static io.netheat.hdfs.TestSupport.rackOf;
import static io.netheat.hdfs.TestSupport.writeAtomically;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.protocol.BlockStoragePolicy;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicy;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockStoragePolicySuite;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo;
import org.apache.hadoop.hdfs.server.blockmanagement.NetheatTestAccess;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every DataNode its own rack: the Sinbad paper's EC2 form (sections 6.1 and 7, machines as
 * their own fault domains, edge links balanced) and bench-hdfs's default cluster. 8 DataNodes
 * dn0..dn7 in racks /rack0../rack7, replication 3, 128 MiB blocks, chooseTarget called
 * directly on an in-process NameNode (as {@link ChooseTargetTest}).
 *
 * <p>HDFS's default puts replica 2 off the writer's rack and tries replica 3 on replica 2's
 * rack; with one DataNode per rack that rack has no other DataNode, so {@code chooseLocalRack}
 * falls back to the writer's rack (empty too) and then to a random DataNode of the whole
 * cluster. That last pick must be Sinbad's as well, not the default's random one.
 */
class OneDataNodePerRackTest {
  static final int N = 8;
  static final long BLOCK = 128L << 20;
  static final BlockStoragePolicy HOT =
      BlockStoragePolicySuite.createDefaultSuite().getDefaultPolicy();
  /** Reported utilizations: dn1 and dn2 hot, the others cold and all different. */
  static final double[] UTIL = {0.13, 0.90, 0.95, 0.10, 0.14, 0.11, 0.15, 0.12};

  static Path dir;
  static Configuration conf;
  static NameNode namenode;
  static DatanodeDescriptor[] nodes;

  @BeforeAll
  static void startNameNode() throws Exception {
    Path base = Path.of(System.getProperty("test.build.data", "target/test-data"));
    Files.createDirectories(base);
    dir = Files.createTempDirectory(base, "one-per-rack");
    String[] racks = new String[N];
    String[] hosts = new String[N];
    for (int i = 0; i < N; i++) {
      racks[i] = "/rack" + i;
      hosts[i] = "dn" + i;
    }
    conf = new HdfsConfiguration();
    TestSupport.FakeCluster fc = TestSupport.startNameNode(conf, dir.toFile(), racks, hosts);
    namenode = fc.namenode();
    nodes = fc.nodes();
  }

  @AfterAll
  static void stopNameNode() {
    if (namenode != null) {
      namenode.stop();
    }
  }

  static void writeLoads(Path f, String tag) throws Exception {
    StringBuilder b = new StringBuilder("# ").append(tag).append("\nhost,utilization,timestamp\n");
    for (int i = 0; i < N; i++) {
      b.append("dn").append(i).append(',').append(UTIL[i]).append(',')
          .append(String.format("%.3f", nowSeconds())).append('\n');
    }
    writeAtomically(f, b.toString());
  }

  static DatanodeStorageInfo[] choose(BlockPlacementPolicy p, DatanodeDescriptor writer) {
    return p.chooseTarget("/netheat/ec2", 3, writer, new ArrayList<>(), false, null, BLOCK, HOT,
        null);
  }

  /**
   * Derivation. A report arrives before every call, so every call sees the EWMA estimates
   * alone (hysteresis is reset by each report, section 6.2). After n identical reports a
   * DataNode's estimate is u (1 - 0.8^n): the order of the utilizations above, for every n
   * >= 1. So each call's replicas 2 and 3 are exactly the two least-loaded DataNodes other than
   * the writer: dn3 (0.10) and dn5 (0.11), or dn7 (0.12) in place of the writer itself. The
   * hot dn1 and dn2 then hold only their own writers' local replicas: 2 of every 8 calls, a
   * share of 2 / (8 x 3) = 1/12 of the replicas. Every block spans 3 racks. HDFS's default on
   * the same calls spreads the two remote replicas uniformly over the 7 others: the hot share
   * is 2/8 in expectation; its remote part, 20,000 picks each hot with probability about 2/7,
   * has sd about 64 picks = 0.0021 of the share: the window +-0.02 (over 9 sd) fails falsely
   * with odds below 1e-18.
   */
  @Test
  void sinbadTakesTheTwoLeastLoadedOthersIncludingTheFallbackPick() throws Exception {
    Path loads = dir.resolve("loads.csv");
    writeLoads(loads, "report 0");
    Configuration c = new Configuration(conf);
    c.set(PlacementKeys.MODE, "sinbad");
    c.set(PlacementKeys.LOADS_FILE, loads.toString());
    c.set(PlacementKeys.REFRESH_MS, "3600000");
    c.set(PlacementKeys.STALE_MS, "3600000");
    c.set(PlacementKeys.SINBAD_INTERVAL_MS, "1000");
    c.set(PlacementKeys.SINBAD_HOST_LINK_BPS, "1e9");
    c.set(PlacementKeys.SINBAD_OVERSUBSCRIPTION, "1");
    NetheatBlockPlacementPolicy p = new NetheatBlockPlacementPolicy();
    NetheatTestAccess.initialize(p, c, namenode);
    try {
      final int calls = 10_000;
      int hot = 0;
      for (int k = 0; k < calls; k++) {
        writeLoads(loads, "report " + (k + 1));
        p.refreshNow();
        DatanodeDescriptor w = nodes[k % N];
        DatanodeStorageInfo[] t = choose(p, w);
        checkFaultDomains(t, w);
        Set<Integer> racks = new HashSet<>();
        Set<Integer> remote = new HashSet<>();
        for (DatanodeStorageInfo s : t) {
          int r = rackOf(s.getDatanodeDescriptor());
          racks.add(r);
          if (s.getDatanodeDescriptor() != w) {
            remote.add(r);
          }
          hot += r == 1 || r == 2 ? 1 : 0;
        }
        assertEquals(3, racks.size(), "three racks");
        int wi = k % N;
        Set<Integer> want = wi == 3 ? Set.of(5, 7) : wi == 5 ? Set.of(3, 7) : Set.of(3, 5);
        assertEquals(want, remote, "call " + k + ", writer dn" + wi);
      }
      double share = hot / (3.0 * calls);
      System.out.printf("one DataNode per rack, sinbad: hot share %.4f (1/12 = %.4f)%n", share,
          1 / 12.0);
      assertEquals(1 / 12.0, share, 1e-9);
      assertEquals(0, p.fallbackCount());
    } finally {
      p.shutdown();
    }

    BlockPlacementPolicy def = NetheatTestAccess.newDefaultPolicy(conf, namenode);
    int defHot = 0;
    Set<Integer> seen = new HashSet<>();
    for (int k = 0; k < 10_000; k++) {
      DatanodeDescriptor w = nodes[k % N];
      DatanodeStorageInfo[] t = choose(def, w);
      checkFaultDomains(t, w);
      for (DatanodeStorageInfo s : t) {
        int r = rackOf(s.getDatanodeDescriptor());
        seen.add(r);
        defHot += r == 1 || r == 2 ? 1 : 0;
      }
    }
    double defShare = defHot / 30000.0;
    System.out.printf("one DataNode per rack, default: hot share %.4f (2/8)%n", defShare);
    assertEquals(0.25, defShare, 0.02);
    assertEquals(N, seen.size(), "the default reaches every DataNode");
  }
}
