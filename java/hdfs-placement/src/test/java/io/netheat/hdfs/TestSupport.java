package io.netheat.hdfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashSet;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.DFSTestUtil;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo;
import org.apache.hadoop.hdfs.server.blockmanagement.NetheatTestAccess;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.apache.hadoop.net.NetworkTopology;
import org.apache.hadoop.net.Node;

/** Helpers shared by the tests. */
final class TestSupport {
  private TestSupport() {}

  /** Rack number of a node in racks named /rack0, /rack1, ... */
  static int rackOf(Node d) {
    String loc = d.getNetworkLocation();
    return Integer.parseInt(loc.substring(loc.lastIndexOf("rack") + 4));
  }

  /** Writes a file atomically (readers never see half a report). */
  static void writeAtomically(Path f, String text) throws IOException {
    Path tmp = f.resolveSibling(f.getFileName() + ".tmp");
    Files.writeString(tmp, text, StandardCharsets.UTF_8);
    Files.move(tmp, f, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  static double nowSeconds() {
    return System.currentTimeMillis() / 1000.0;
  }

  /**
   * HDFS's fault-domain rules for one new block of replication 3: three distinct DataNodes, not
   * all on one rack, the first (pipeline head) the writer when the writer is a DataNode.
   */
  static void checkFaultDomains(DatanodeStorageInfo[] t, Node writer) {
    assertEquals(3, t.length, "replicas");
    Set<DatanodeDescriptor> ds = new HashSet<>();
    Set<String> racks = new HashSet<>();
    for (DatanodeStorageInfo s : t) {
      ds.add(s.getDatanodeDescriptor());
      racks.add(s.getDatanodeDescriptor().getNetworkLocation());
    }
    assertEquals(3, ds.size(), "three distinct DataNodes");
    assertTrue(racks.size() >= 2, "replicas on at least two racks");
    if (writer instanceof DatanodeDescriptor) {
      assertSame(writer, t[0].getDatanodeDescriptor(), "first replica on the writer");
    }
  }

  /**
   * An in-process NameNode (formatted in {@code dir}, ephemeral ports on 127.0.0.1 and
   * localhost) whose topology holds fake DataNodes (DFSTestUtil) named {@code hosts} on
   * {@code racks}, each with 1 TB free; {@code conf} is completed with the NameNode's keys.
   * TestAvailableSpaceBlockPlacementPolicy's pattern: no MiniDFSCluster, no DataNode process.
   */
  static FakeCluster startNameNode(Configuration conf, File dir, String[] racks,
      String[] hosts) throws IOException {
    DatanodeDescriptor[] nodes = DFSTestUtil.toDatanodeDescriptor(
        DFSTestUtil.createDatanodeStorageInfos(racks.length, racks, hosts));
    FileSystem.setDefaultUri(conf, "hdfs://localhost:0");
    conf.set(DFSConfigKeys.DFS_NAMENODE_HTTP_ADDRESS_KEY, "127.0.0.1:0");
    conf.set(DFSConfigKeys.DFS_NAMENODE_NAME_DIR_KEY, new File(dir, "name").getPath());
    DFSTestUtil.formatNameNode(conf);
    NameNode namenode = new NameNode(conf);
    NetworkTopology cluster =
        namenode.getNamesystem().getBlockManager().getDatanodeManager().getNetworkTopology();
    long tb = 1L << 40;
    for (DatanodeDescriptor d : nodes) {
      cluster.add(d);
      NetheatTestAccess.setUsage(d, tb, 0, tb);
    }
    return new FakeCluster(namenode, cluster, nodes);
  }

  /** A NameNode, its topology and its fake DataNodes (in the order of the hosts given). */
  record FakeCluster(NameNode namenode, NetworkTopology topology, DatanodeDescriptor[] nodes) {}

  static void waitFor(BooleanSupplier cond, long timeoutMs, String what)
      throws InterruptedException {
    long end = System.currentTimeMillis() + timeoutMs;
    while (!cond.getAsBoolean()) {
      if (System.currentTimeMillis() > end) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }
}
