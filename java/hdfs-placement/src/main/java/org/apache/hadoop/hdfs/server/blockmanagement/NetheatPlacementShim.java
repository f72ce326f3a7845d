package org.apache.hadoop.hdfs.server.blockmanagement;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.net.NetworkTopology;

/**
 * The one piece of netheat that must live in HDFS's package: {@code initialize} takes a
 * package-private {@code Host2NodesMap}, so only a class of this package can override it
 * (HDFS's own {@code AvailableSpaceBlockPlacementPolicy} sits here for the same reason). It
 * runs the default initialization and hands the configuration to
 * {@link io.netheat.hdfs.NetheatBlockPlacementPolicy}. Jars are not sealed, so a second jar
 * may add a class to the package.
 */
public abstract class NetheatPlacementShim extends BlockPlacementPolicyDefault {
  protected NetheatPlacementShim() {}

  @Override
  public void initialize(Configuration conf, FSClusterStats stats, NetworkTopology clusterMap,
      Host2NodesMap host2datanodeMap) {
    super.initialize(conf, stats, clusterMap, host2datanodeMap);
    configureNetheat(conf);
  }

  /** Called once, after HDFS's default policy is initialized. Must not throw. */
  protected abstract void configureNetheat(Configuration conf);
}
