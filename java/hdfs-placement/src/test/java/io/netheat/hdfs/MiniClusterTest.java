package io.netheat.hdfs;

import static io.netheat.hdfs.TestSupport.nowSeconds;
import static io.netheat.hdfs.TestSupport.waitFor;
import static io.netheat.hdfs.TestSupport.writeAtomically;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.DFSTestUtil;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.HdfsConstants.DatanodeReportType;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicy;
import org.junit.jupiter.api.Test;

/**
 * The policy inside a real NameNode, files written through the real HDFS client: a
 * MiniDFSCluster of 6 DataNodes in 3 racks (2 each), rack 0 hot. Every DataNode is on
 * 127.0.0.1, so the NameNode takes a random DataNode as the writer's local node: each block
 * has one local replica (HDFS's rule) and two replicas on one other rack, which Sinbad
 * chooses. That pair must never be on the hot rack: the load gap between the hot rack (2 x
 * 0.9 x 10 Gbps) and a cold one (2 x 0.1 x 10 Gbps) is 16 Gbps, while each 1 MiB block adds
 * 8.4 Mbit/s of hysteresis, so 40 blocks cannot close it. HDFS's default would put the pair
 * there for half of the blocks written from a cold rack.
 */
class MiniClusterTest {
  static final long BLOCK = 1L << 20;
  static final int FILES = 40;

  @Test
  void sinbadKeepsNewBlocksOffTheHotRack() throws Exception {
    Path base = Path.of(System.getProperty("test.build.data", "target/test-data"));
    Files.createDirectories(base);
    Path dir = Files.createTempDirectory(base, "minicluster");
    Path loads = dir.resolve("loads.csv");
    Configuration conf = new HdfsConfiguration();
    conf.set(DFSConfigKeys.DFS_BLOCK_REPLICATOR_CLASSNAME_KEY,
        NetheatBlockPlacementPolicy.class.getName());
    conf.set(PlacementKeys.MODE, "sinbad");
    conf.set(PlacementKeys.LOADS_FILE, loads.toString());
    conf.set(PlacementKeys.REFRESH_MS, "100");
    conf.set(PlacementKeys.STALE_MS, "600000");
    conf.setLong(PlacementKeys.SINBAD_MIN_BLOCK_BYTES, BLOCK);
    conf.setLong(DFSConfigKeys.DFS_BLOCK_SIZE_KEY, BLOCK);
    // Busy-DataNode rejection depends on heartbeat timing; off, so the test is deterministic.
    conf.setBoolean(DFSConfigKeys.DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_KEY, false);
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(dir.toFile(), "dfs").getPath());
    String[] racks = {"/rack0", "/rack0", "/rack1", "/rack1", "/rack2", "/rack2"};
    String[] hosts = {"r0h0", "r0h1", "r1h0", "r1h1", "r2h0", "r2h1"};
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf).numDataNodes(6).racks(racks)
        .hosts(hosts).build();
    try {
      cluster.waitActive();
      BlockPlacementPolicy bpp =
          cluster.getNamesystem().getBlockManager().getBlockPlacementPolicy();
      NetheatBlockPlacementPolicy p = assertInstanceOf(NetheatBlockPlacementPolicy.class, bpp);

      // Loads keyed by ip:port, the one name that tells DataNodes on one machine apart.
      DatanodeInfo[] dns = cluster.getFileSystem().getDataNodeStats(DatanodeReportType.LIVE);
      assertEquals(6, dns.length);
      StringBuilder b = new StringBuilder("host,utilization,timestamp\n");
      for (DatanodeInfo d : dns) {
        double u = d.getNetworkLocation().equals("/rack0") ? 0.9 : 0.1;
        b.append(d.getXferAddr()).append(',').append(u).append(',').append(nowSeconds())
            .append('\n');
      }
      writeAtomically(loads, b.toString());
      waitFor(() -> p.estimator().scoreableCount() == 6 && !p.staleNow(), 20_000,
          "the policy to read the loads");

      FileSystem fs = cluster.getFileSystem();
      int hotPairs = 0;
      int hotLocal = 0;
      for (int i = 0; i < FILES; i++) {
        org.apache.hadoop.fs.Path f = new org.apache.hadoop.fs.Path("/netheat/f" + i);
        DFSTestUtil.createFile(fs, f, BLOCK, (short) 3, i);
        DFSTestUtil.waitReplication(fs, f, (short) 3);
        FileStatus st = fs.getFileStatus(f);
        BlockLocation[] locs = fs.getFileBlockLocations(st, 0, st.getLen());
        assertEquals(1, locs.length);
        Map<String, Integer> perRack = new HashMap<>();
        for (String tp : locs[0].getTopologyPaths()) {
          String rack = tp.substring(0, tp.lastIndexOf('/'));
          perRack.merge(rack, 1, Integer::sum);
        }
        assertEquals(3, locs[0].getTopologyPaths().length);
        assertEquals(2, perRack.size(), "replicas on two racks: " + perRack);
        for (Map.Entry<String, Integer> e : perRack.entrySet()) {
          if (e.getKey().equals("/rack0")) {
            if (e.getValue() == 2) {
              hotPairs++;
            } else {
              hotLocal++;
            }
          }
        }
      }
      System.out.printf("minicluster: %d files, remote pair on the hot rack %d times, local"
          + " replica there %d times%n", FILES, hotPairs, hotLocal);
      assertEquals(0, hotPairs, "remote replica pairs on the hot rack");
      assertEquals(0, p.fallbackCount());
      assertTrue(p.estimator().reports() >= 1);
      p.shutdown();
    } finally {
      cluster.shutdown();
    }
  }
}
