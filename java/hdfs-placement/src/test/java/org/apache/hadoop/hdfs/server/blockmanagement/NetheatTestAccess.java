package org.apache.hadoop.hdfs.server.blockmanagement;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.namenode.NameNode;

/** Test access to package-private HDFS members (as Hadoop's own tests have in this package). */
public final class NetheatTestAccess {
  private NetheatTestAccess() {}

  /** Sets a fake DataNode's storage usage through a heartbeat (TestAvailableSpaceBlockPlacementPolicy's way). */
  public static void setUsage(DatanodeDescriptor dn, long capacity, long dfsUsed, long remaining) {
    dn.getStorageInfos()[0].setUtilizationForTesting(capacity, dfsUsed, remaining, 0L);
    dn.updateHeartbeat(BlockManagerTestUtil.getStorageReportsForDatanode(dn), 0L, 0L, 0, 0,
        null);
  }

  /** Initializes a policy on a running NameNode's topology and statistics. */
  public static void initialize(BlockPlacementPolicy p, Configuration conf, NameNode nn) {
    DatanodeManager dm = nn.getNamesystem().getBlockManager().getDatanodeManager();
    p.initialize(conf, dm.getFSClusterStats(), dm.getNetworkTopology(), dm.getHost2DatanodeMap());
  }

  /** HDFS's own default policy, unchanged, on a running NameNode's topology. */
  public static BlockPlacementPolicy newDefaultPolicy(Configuration conf, NameNode nn) {
    BlockPlacementPolicy p = new BlockPlacementPolicyDefault();
    initialize(p, conf, nn);
    return p;
  }
}
