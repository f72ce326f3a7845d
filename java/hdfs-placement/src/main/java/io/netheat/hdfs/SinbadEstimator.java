package io.netheat.hdfs;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;

/**
 * Sinbad's link-load estimates (Chowdhury, Kandula, Stoica, SIGCOMM 2013, section 6.2), the
 * same rules as netheat's simulator ({@code LinkEstimator} in
 * crates/netheat-storage/src/sinbad.rs):
 *
 * <ul>
 *   <li>per DataNode receive link, an EWMA {@code v = alpha * measured + (1 - alpha) * v}
 *       over the reported utilizations, starting from 0;
 *   <li>a DataNode that was reported before but is missing from a report counts as fully
 *       loaded (the paper's conservative rule for missing updates);
 *   <li>a rack's downlink load is the sum over its DataNodes (the paper sums the hosts of the
 *       subtree below an internal link); DataNodes without a usable estimate count as the mean
 *       of the rack's others;
 *   <li>hysteresis: each placement adds {@code min(Cap - v, Size(B) / delta)} to the links it
 *       uses until the next report, so a burst of placements between two reports does not
 *       pile onto one link; {@code delta} is the time left until the next report is due (paper
 *       section 6.2) on the reporting cadence, {@code Delta - ((now - last report) mod Delta)}
 *       within {@code (0, Delta]}: a full {@code Delta} right after a report and before the
 *       first one; a late report (or a load file written once) is expected at the next multiple
 *       of {@code Delta}, so increments stay bounded; as {@code Sinbad::time_to_next_report} in
 *       crates/netheat-storage/src/sinbad.rs. The bumps last until the report they wait for: a
 *       new report clears them, and so does the end of the interval when that report is late
 *       (the simulator's reports are never late, so there the two rules coincide);
 *   <li>expected capacity {@code min(Cap - v, DiskWriteCap)}; the greedy choice takes the rack
 *       with the largest, then the DataNode with the largest inside it (paper section 6.3 and
 *       Pseudocode 2; {@code select} in crates/netheat-storage/src/placement.rs), random
 *       among equals.
 * </ul>
 *
 * All methods are synchronized: the refresh thread writes, {@code chooseTarget} reads and
 * bumps. Nothing here does I/O.
 */
final class SinbadEstimator {
  private final double alpha;
  private final double hostBps;
  private final double oversubscription;
  private final double diskBps;
  private final double deltaS;
  private LongSupplier clockNanos;
  /** When the last report was applied ({@link #clockNanos}), or null before the first. */
  private Long lastReportNanos;
  /** Reporting interval since the last report (0: the one it opened) in which the bumps were made. */
  private long bumpInterval;

  private final Map<String, Double> base = new HashMap<>();
  private final Set<String> known = new HashSet<>();
  private final Map<String, Double> hostBump = new HashMap<>();
  private final Map<String, Double> rackBump = new HashMap<>();
  private final Map<String, Double> rackBase = new HashMap<>();
  private final Map<String, Double> rackCap = new HashMap<>();
  private List<DatanodeDescriptor> scoreable = List.of();
  private Set<String> scoreableIds = Set.of();
  private long reports;

  SinbadEstimator(double alpha, double hostBps, double oversubscription, double diskBps,
      double deltaS) {
    this(alpha, hostBps, oversubscription, diskBps, deltaS, System::nanoTime);
  }

  /** As above, with the clock that times reports and placements (monotonic nanoseconds). */
  SinbadEstimator(double alpha, double hostBps, double oversubscription, double diskBps,
      double deltaS, LongSupplier clockNanos) {
    this.clockNanos = clockNanos;
    this.alpha = alpha;
    this.hostBps = hostBps;
    this.oversubscription = oversubscription;
    this.diskBps = diskBps;
    this.deltaS = deltaS;
  }

  /**
   * Applies a new report. {@code util}: DataNode id to utilization (fraction of the host
   * link); {@code unknown}: ids the report names unusably; {@code nodes}: the NameNode's
   * DataNodes now. Clears the hysteresis bumps and re-derives the racks.
   */
  synchronized void apply(Map<String, Double> util, Set<String> unknown,
      List<DatanodeDescriptor> nodes) {
    Set<String> inTopology = new HashSet<>();
    for (DatanodeDescriptor d : nodes) {
      inTopology.add(HostResolver.id(d));
    }
    Set<String> before = new HashSet<>(known);
    for (Map.Entry<String, Double> e : util.entrySet()) {
      double measured = e.getValue() * hostBps;
      double old = base.getOrDefault(e.getKey(), 0.0);
      base.put(e.getKey(), alpha * measured + (1.0 - alpha) * old);
      known.add(e.getKey());
    }
    for (String id : unknown) {
      known.remove(id);
    }
    for (String id : before) {
      if (util.containsKey(id) || unknown.contains(id)) {
        continue;
      }
      if (inTopology.contains(id)) {
        base.put(id, hostBps); // missing update: fully loaded
      } else {
        known.remove(id);
        base.remove(id);
      }
    }
    hostBump.clear();
    rackBump.clear();
    bumpInterval = 0;
    reports++;
    lastReportNanos = clockNanos.getAsLong();
    rebuild(nodes);
  }

  /** Replaces the clock (tests: a fixed or stepped time). */
  synchronized void clock(LongSupplier nanos) {
    this.clockNanos = nanos;
  }

  /** Reporting intervals elapsed since the last report (0 before it is due or before any). */
  private long interval() {
    if (lastReportNanos == null) {
      return 0;
    }
    double since = (clockNanos.getAsLong() - lastReportNanos) / 1e9;
    return since <= 0 ? 0 : (long) Math.floor(since / deltaS);
  }

  /** Drops the bumps of an interval whose report is late (the report they waited for is due). */
  private void expireBumps() {
    long now = interval();
    if (now > bumpInterval) {
      hostBump.clear();
      rackBump.clear();
      bumpInterval = now;
    }
  }

  /**
   * Section 6.2's {@code delta} now: the time left until the next report is due on the reporting
   * cadence, seconds, within {@code (0, Delta]}; {@code Delta} before the first report, for a
   * call timed before the last report, and exactly on the cadence.
   */
  synchronized double timeToNextReport() {
    if (lastReportNanos == null) {
      return deltaS;
    }
    double since = (clockNanos.getAsLong() - lastReportNanos) / 1e9;
    if (since <= 0) {
      return deltaS;
    }
    double left = deltaS - since % deltaS;
    return left > 0 ? left : deltaS;
  }

  /**
   * DataNodes that registered after the current report was applied: their first EWMA step
   * from that report (ids already estimated are left alone); then re-derives the racks.
   */
  synchronized void addLate(Map<String, Double> util, List<DatanodeDescriptor> nodes) {
    for (Map.Entry<String, Double> e : util.entrySet()) {
      if (!base.containsKey(e.getKey())) {
        base.put(e.getKey(), alpha * e.getValue() * hostBps);
        known.add(e.getKey());
      }
    }
    rebuild(nodes);
  }

  /** Re-derives racks and the scoreable DataNodes from the NameNode's current topology. */
  synchronized void rebuild(List<DatanodeDescriptor> nodes) {
    Map<String, List<DatanodeDescriptor>> byRack = new HashMap<>();
    for (DatanodeDescriptor d : nodes) {
      byRack.computeIfAbsent(d.getNetworkLocation(), r -> new ArrayList<>()).add(d);
    }
    rackBase.clear();
    rackCap.clear();
    List<DatanodeDescriptor> sc = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (Map.Entry<String, List<DatanodeDescriptor>> e : byRack.entrySet()) {
      int n = e.getValue().size();
      int k = 0;
      double sum = 0;
      for (DatanodeDescriptor d : e.getValue()) {
        String id = HostResolver.id(d);
        if (known.contains(id)) {
          k++;
          sum += base.getOrDefault(id, 0.0);
        }
      }
      if (k == 0) {
        continue;
      }
      rackBase.put(e.getKey(), sum * n / k);
      rackCap.put(e.getKey(), n * hostBps / oversubscription);
      for (DatanodeDescriptor d : e.getValue()) {
        String id = HostResolver.id(d);
        if (known.contains(id)) {
          sc.add(d);
          ids.add(id);
        }
      }
    }
    scoreable = sc;
    scoreableIds = ids;
  }

  synchronized boolean isScoreable(DatanodeDescriptor d) {
    return scoreableIds.contains(HostResolver.id(d));
  }

  synchronized int scoreableCount() {
    return scoreable.size();
  }

  private double expected(double cap, double load) {
    double e = Math.max(0.0, cap - load);
    return diskBps > 0 ? Math.min(e, diskBps) : e;
  }

  synchronized double rackLoad(String rack) {
    expireBumps();
    Double b = rackBase.get(rack);
    return b == null ? Double.NaN : b + rackBump.getOrDefault(rack, 0.0);
  }

  synchronized double hostLoad(DatanodeDescriptor d) {
    expireBumps();
    String id = HostResolver.id(d);
    if (!known.contains(id)) {
      return Double.NaN;
    }
    return base.getOrDefault(id, 0.0) + hostBump.getOrDefault(id, 0.0);
  }

  /** Expected capacity of a rack's downlink, bits/s (NaN when unknown). */
  synchronized double rackExpected(String rack) {
    Double cap = rackCap.get(rack);
    return cap == null ? Double.NaN : expected(cap, rackLoad(rack));
  }

  /**
   * The eligible scoreable DataNode of the largest (rack, host) expected capacity, uniformly
   * random among exact ties; null when none is eligible.
   */
  synchronized DatanodeDescriptor best(Predicate<DatanodeDescriptor> eligible, Random rnd) {
    DatanodeDescriptor best = null;
    double bestRack = -1;
    double bestHost = -1;
    int ties = 0;
    Map<String, Double> rackExp = new HashMap<>();
    for (DatanodeDescriptor d : scoreable) {
      if (!eligible.test(d)) {
        continue;
      }
      String rack = d.getNetworkLocation();
      Double re = rackExp.get(rack);
      if (re == null) {
        re = rackExpected(rack);
        rackExp.put(rack, re);
      }
      double he = expected(hostBps, hostLoad(d));
      int c = best == null ? 1 : compare(re, he, bestRack, bestHost);
      if (c > 0) {
        best = d;
        bestRack = re;
        bestHost = he;
        ties = 1;
      } else if (c == 0) {
        ties++;
        if (rnd.nextInt(ties) == 0) {
          best = d;
        }
      }
    }
    return best;
  }

  private static int compare(double r1, double h1, double r2, double h2) {
    int c = Double.compare(r1, r2);
    return c != 0 ? c : Double.compare(h1, h2);
  }

  /**
   * Hysteresis after a placement of {@code bytes} onto {@code d}: its receive link, and its
   * rack's downlink when {@code rackToo} (the block crosses into the rack).
   */
  synchronized void bump(DatanodeDescriptor d, boolean rackToo, long bytes) {
    expireBumps();
    double inc = bytes * 8.0 / timeToNextReport();
    if (rackToo) {
      String rack = d.getNetworkLocation();
      Double cap = rackCap.get(rack);
      if (cap != null) {
        double cur = rackLoad(rack);
        rackBump.merge(rack, Math.max(0.0, Math.min(cap - cur, inc)), Double::sum);
      }
    }
    String id = HostResolver.id(d);
    if (known.contains(id)) {
      double cur = base.getOrDefault(id, 0.0) + hostBump.getOrDefault(id, 0.0);
      hostBump.merge(id, Math.max(0.0, Math.min(hostBps - cur, inc)), Double::sum);
    }
  }

  synchronized long reports() {
    return reports;
  }
}
