package io.netheat.hdfs;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;

/**
 * CCP's rack uplink classes (Bazzaz et al., NSDI 2025, section 4.3 for the classes and 5.2 for
 * the policy: High-Uplink ToRs before Medium before Low for new chunks), read from a file and
 * checked against the NameNode's topology. The ranking is {@code Ccp} in
 * crates/netheat-storage/src/placement.rs (class first, then uniform among the best).
 *
 * <p>File format (CSV, {@code #} comments; docs/hdfs.md):
 *
 * <pre>
 * /rack0,Low              rack,class: every DataNode of that rack
 * r2h0,/rack2,Medium      host,rack,class: also asserts the host's rack
 * </pre>
 *
 * A host line whose rack differs from the NameNode's, a rack given two classes, a bad class
 * name: logged once, the hosts concerned are unknown (HDFS's default for them).
 */
final class UplinkClasses {
  /** Uplink class, ordered as {@code UplinkClass} in crates/netheat-storage/src/cluster.rs. */
  enum UplinkClass {
    LOW, MEDIUM, HIGH;

    static UplinkClass parse(String s) {
      switch (s.strip().toLowerCase(Locale.ROOT)) {
        case "high":
          return HIGH;
        case "medium":
          return MEDIUM;
        case "low":
          return LOW;
        default:
          return null;
      }
    }
  }

  /** The parsed file, before it meets the topology. */
  static final class Parsed {
    final Map<String, UplinkClass> rackClass = new LinkedHashMap<>();
    final Set<String> conflictRacks = new HashSet<>();
    /** host -> (rack, class) of host lines. */
    final Map<String, String[]> hostLines = new LinkedHashMap<>();
    final Set<String> badHosts = new HashSet<>();
    final Map<String, String> problems = new LinkedHashMap<>();
  }

  static String normalizeRack(String r) {
    String s = r.strip();
    while (s.length() > 1 && s.endsWith("/")) {
      s = s.substring(0, s.length() - 1);
    }
    return s;
  }

  static Parsed parse(String text, String source) {
    Parsed p = new Parsed();
    int lineNo = 0;
    for (String raw : text.split("\n", -1)) {
      lineNo++;
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split(",", -1);
      if (f.length == 2 && f[0].strip().equalsIgnoreCase("rack")
          || f.length == 3 && f[0].strip().equalsIgnoreCase("host")) {
        continue; // header
      }
      String where = source + " line " + lineNo;
      if (f.length == 2) {
        String rack = normalizeRack(f[0]);
        UplinkClass c = UplinkClass.parse(f[1]);
        if (!rack.startsWith("/")) {
          p.problems.put("class-line:" + lineNo,
              where + ": a rack is a path such as /rack1 (or give host,rack,class); ignored");
          continue;
        }
        if (c == null) {
          p.conflictRacks.add(rack);
          p.problems.put("class-name:" + rack, where + ": class '" + f[1].strip()
              + "' is not High, Medium or Low; rack " + rack + " treated as unknown");
          continue;
        }
        addRack(p, rack, c, where);
      } else if (f.length == 3) {
        String host = f[0].strip();
        String rack = normalizeRack(f[1]);
        UplinkClass c = UplinkClass.parse(f[2]);
        if (host.isEmpty() || !rack.startsWith("/") || c == null) {
          if (!host.isEmpty()) {
            p.badHosts.add(host);
          }
          p.problems.put("class-line:" + lineNo, where
              + ": expected host,rack,class with a rack path and High/Medium/Low; "
              + (host.isEmpty() ? "ignored" : "host " + host + " treated as unknown"));
          continue;
        }
        if (p.hostLines.containsKey(host)) {
          p.hostLines.remove(host);
          p.badHosts.add(host);
          p.problems.put("class-dup:" + host,
              where + ": host " + host + " listed twice; treated as unknown");
          continue;
        }
        p.hostLines.put(host, new String[] {rack, c.name()});
      } else {
        p.problems.put("class-line:" + lineNo,
            where + ": expected rack,class or host,rack,class; ignored");
      }
    }
    // Host lines also give their rack a class; a rack with two classes is unknown.
    for (Map.Entry<String, String[]> e : p.hostLines.entrySet()) {
      addRack(p, e.getValue()[0], UplinkClass.valueOf(e.getValue()[1]),
          source + " (host " + e.getKey() + ")");
    }
    return p;
  }

  private static void addRack(Parsed p, String rack, UplinkClass c, String where) {
    UplinkClass old = p.rackClass.putIfAbsent(rack, c);
    if (old != null && old != c) {
      p.conflictRacks.add(rack);
      p.problems.put("class-conflict:" + rack, where + ": rack " + rack + " is given both "
          + old + " and " + c + "; its hosts treated as unknown");
    }
  }

  // Resolved against the topology; guarded by this.
  private Map<String, UplinkClass> classById = Map.of();
  private List<DatanodeDescriptor> scoreable = List.of();

  /**
   * Resolves a parsed file against the NameNode's DataNodes, logging disagreements once.
   * {@code p == null}: no usable file, every host unknown.
   */
  void rebuild(Parsed p, HostResolver resolver, LogOnce once, String source) {
    Map<String, UplinkClass> byId = new HashMap<>();
    List<DatanodeDescriptor> sc = new ArrayList<>();
    if (p != null) {
      for (Map.Entry<String, String> e : p.problems.entrySet()) {
        once.warn(e.getKey(), "netheat placement: {}", e.getValue());
      }
      Set<String> unknownIds = new HashSet<>();
      for (String h : p.badHosts) {
        for (DatanodeDescriptor d : resolver.resolve(h)) {
          unknownIds.add(HostResolver.id(d));
        }
      }
      for (Map.Entry<String, String[]> e : p.hostLines.entrySet()) {
        String host = e.getKey();
        String rack = e.getValue()[0];
        List<DatanodeDescriptor> ds = resolver.resolve(host);
        if (ds.isEmpty()) {
          once.info("class-unknown-host:" + host, "netheat placement: {} names host {}, not a"
              + " DataNode of this NameNode (yet); ignored", source, host);
        } else if (ds.size() > 1) {
          once.warn("class-ambiguous:" + host, "netheat placement: {} names host {}, which fits"
              + " {} DataNodes; use ip:port; treated as unknown", source, host, ds.size());
          for (DatanodeDescriptor d : ds) {
            unknownIds.add(HostResolver.id(d));
          }
        } else if (!normalizeRack(ds.get(0).getNetworkLocation()).equals(rack)) {
          once.warn("class-disagree:" + host, "netheat placement: {} puts host {} in rack {} but"
              + " the NameNode has it in {}; treated as unknown", source, host, rack,
              ds.get(0).getNetworkLocation());
          unknownIds.add(HostResolver.id(ds.get(0)));
        }
      }
      Set<String> racksSeen = new HashSet<>();
      for (DatanodeDescriptor d : resolver.nodes()) {
        String rack = normalizeRack(d.getNetworkLocation());
        racksSeen.add(rack);
        UplinkClass c = p.rackClass.get(rack);
        String id = HostResolver.id(d);
        if (c == null || p.conflictRacks.contains(rack) || unknownIds.contains(id)) {
          continue;
        }
        byId.put(id, c);
        sc.add(d);
      }
      if (!resolver.nodes().isEmpty()) {
        for (String rack : p.rackClass.keySet()) {
          if (!racksSeen.contains(rack)) {
            once.info("class-unknown-rack:" + rack, "netheat placement: {} gives rack {} a"
                + " class but the NameNode has no DataNode there (yet)", source, rack);
          }
        }
      }
    }
    synchronized (this) {
      classById = byId;
      scoreable = sc;
    }
  }

  synchronized UplinkClass classOf(DatanodeDescriptor d) {
    return classById.get(HostResolver.id(d));
  }

  synchronized int scoreableCount() {
    return scoreable.size();
  }

  /** The eligible DataNode of the best class, uniformly random among that class. */
  synchronized DatanodeDescriptor best(Predicate<DatanodeDescriptor> eligible, Random rnd) {
    DatanodeDescriptor best = null;
    int bestClass = -1;
    int ties = 0;
    for (DatanodeDescriptor d : scoreable) {
      if (!eligible.test(d)) {
        continue;
      }
      int c = classById.get(HostResolver.id(d)).ordinal();
      if (c > bestClass) {
        best = d;
        bestClass = c;
        ties = 1;
      } else if (c == bestClass) {
        ties++;
        if (rnd.nextInt(ties) == 0) {
          best = d;
        }
      }
    }
    return best;
  }
}
