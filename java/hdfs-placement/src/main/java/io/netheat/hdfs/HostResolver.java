package io.netheat.hdfs;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.net.Node;

/**
 * Maps the host names of the load and class files to the NameNode's DataNodes: a DataNode
 * answers to its host name, IP address, {@code ip:port} and {@code host:port} (data transfer
 * port) and storage UUID. A name that fits several DataNodes (several DataNodes on one
 * machine) is ambiguous.
 */
final class HostResolver {
  private final Map<String, List<DatanodeDescriptor>> byKey = new HashMap<>();
  private final List<DatanodeDescriptor> nodes = new ArrayList<>();

  HostResolver(List<Node> leaves) {
    for (Node n : leaves) {
      if (!(n instanceof DatanodeDescriptor)) {
        continue;
      }
      DatanodeDescriptor d = (DatanodeDescriptor) n;
      nodes.add(d);
      Set<String> keys = new LinkedHashSet<>();
      add(keys, d.getHostName());
      add(keys, d.getIpAddr());
      add(keys, d.getDatanodeUuid());
      if (d.getIpAddr() != null) {
        keys.add(d.getIpAddr() + ":" + d.getXferPort());
      }
      if (d.getHostName() != null) {
        keys.add(d.getHostName() + ":" + d.getXferPort());
      }
      for (String k : keys) {
        byKey.computeIfAbsent(k, x -> new ArrayList<>(1)).add(d);
      }
    }
  }

  private static void add(Set<String> keys, String k) {
    if (k != null && !k.isEmpty()) {
      keys.add(k);
    }
  }

  /** The DataNodes a name fits (empty: unknown; more than one: ambiguous). */
  List<DatanodeDescriptor> resolve(String host) {
    List<DatanodeDescriptor> l = byKey.get(host);
    return l == null ? List.of() : l;
  }

  /** Every DataNode of the topology. */
  List<DatanodeDescriptor> nodes() {
    return nodes;
  }

  /** The identity netheat keys its state by. */
  static String id(DatanodeDescriptor d) {
    String u = d.getDatanodeUuid();
    return u != null ? u : d.getXferAddr();
  }
}
