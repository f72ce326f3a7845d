package io.netheat.hdfs;

import java.io.IOException;
import java.util.Collection;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.AddBlockFlag;
import org.apache.hadoop.hdfs.protocol.BlockStoragePolicy;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo;
import org.apache.hadoop.hdfs.server.blockmanagement.NetheatPlacementShim;
import org.apache.hadoop.net.Node;
import org.apache.hadoop.net.NodeBase;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * netheat's HDFS block placement policy: Sinbad (Chowdhury, Kandula, Stoica, "Leveraging
 * Endpoint Flexibility in Data-Intensive Clusters", SIGCOMM 2013) or CCP (Bazzaz et al.,
 * "Preventing Network Bottlenecks", NSDI 2025, section 5.2) inside the NameNode.
 *
 * <p>Plugged in with {@code dfs.block.replicator.classname=io.netheat.hdfs.NetheatBlockPlacementPolicy};
 * the mode is {@code netheat.placement.mode} ({@link PlacementKeys}, docs/hdfs.md).
 *
 * <p>How it stays HDFS's policy: it extends {@code BlockPlacementPolicyDefault} (through
 * {@link NetheatPlacementShim}, which only forwards {@code initialize}) and changes only
 * which DataNode the default's random pick returns ({@code chooseDataNode}). The default still
 * decides the order (writer-local first replica, second off the writer's rack, third on the
 * second's rack), the scope of each pick, excluded and favored nodes, storage types, and
 * rejects a pick that is stale, busy, decommissioning, full or on a rack with enough replicas
 * ({@code isGoodDatanode}); a rejected pick is excluded and the next best is tried. This is
 * the paper's own structure: Sinbad filters candidates by the CFS's constraints first
 * (Pseudocode 2, line 15, section 6.4) and then takes the least-loaded; netheat's simulator
 * does the same ({@code select} in crates/netheat-storage/src/placement.rs).
 *
 * <ul>
 *   <li>{@code sinbad}: the pick is the candidate behind the least-loaded rack downlink, then
 *       the least-loaded host link in it (expected capacity {@code min(Cap - v, DiskWriteCap)},
 *       paper section 6.3), with EWMA estimates and hysteresis ({@link SinbadEstimator}).
 *       Blocks whose size is below the threshold go to the default (Pseudocode 1). After each
 *       placement the links used are bumped until the next report.
 *   <li>{@code ccp}: the pick is uniform among candidates of the best uplink class, High before
 *       Medium before Low ({@link UplinkClasses}).
 *   <li>{@code default}: HDFS's default policy, unchanged.
 * </ul>
 *
 * Only new blocks are steered (no replica chosen yet): re-replication and pipeline recovery
 * stay the default's, as the papers place new writes. A DataNode without a usable load or
 * class is "unknown": the default's random pick is kept when it falls on one, so unknown
 * DataNodes are chosen exactly as often as under the default policy.
 *
 * <p>Fallbacks: loads older than {@code netheat.placement.stale.ms} (or none yet) make the
 * policy the default one, bit for bit (logged once, and once when loads are fresh again).
 * Any exception inside the policy's own code returns the default's choice; the NameNode never
 * fails a write because of it. Reading the loads happens in one background daemon thread,
 * never inside {@code chooseTarget}.
 */
public class NetheatBlockPlacementPolicy extends NetheatPlacementShim {
  static final Logger LOG = LoggerFactory.getLogger(NetheatBlockPlacementPolicy.class);

  /** The policy's modes. */
  public enum Mode {
    DEFAULT, SINBAD, CCP
  }

  /** The mode steering the current thread's chooseTarget, or null (default behaviour). */
  private static final ThreadLocal<Mode> CURRENT = new ThreadLocal<>();

  private Mode mode = Mode.DEFAULT;
  private long refreshMs = PlacementKeys.REFRESH_MS_DEFAULT;
  private long staleMs = PlacementKeys.STALE_MS_DEFAULT;
  private long minBlockBytes = PlacementKeys.SINBAD_MIN_BLOCK_BYTES_DEFAULT;
  private SinbadEstimator estimator;
  private final UplinkClasses classes = new UplinkClasses();
  private ReportSource loads;
  private ReportSource classFile;

  private final LogOnce once = new LogOnce(LOG);
  private final Object tickLock = new Object();
  private ScheduledExecutorService refresher;

  // Refresh-thread state (under tickLock).
  private String lastDigest;
  private LoadReport lastReport;
  private Set<String> lastTopologyIds = Set.of();
  private UplinkClasses.Parsed parsedClasses;

  /** Newest applied report time, ms since the epoch; MIN_VALUE before the first. */
  private volatile long reportTimeMs = Long.MIN_VALUE;
  /** -1 not yet known, 0 fresh, 1 stale. */
  private final AtomicInteger staleState = new AtomicInteger(-1);
  private final AtomicLong fallbacks = new AtomicLong();
  private final AtomicInteger staleLogs = new AtomicInteger();
  private final AtomicInteger freshLogs = new AtomicInteger();
  /** Tests: called with a stage name ("steer", "pick") on steered placements; may throw. */
  private volatile Consumer<String> faultInjector;

  public NetheatBlockPlacementPolicy() {}

  @Override
  protected void configureNetheat(Configuration conf) {
    try {
      configure(conf);
      LOG.info("netheat placement: mode {}{}", mode.name().toLowerCase(Locale.ROOT),
          mode == Mode.SINBAD ? " (loads from " + loads.name() + ", refresh " + refreshMs
              + " ms, stale after " + staleMs + " ms, blocks >= " + minBlockBytes + " bytes)"
              : mode == Mode.CCP ? " (classes from " + classFile.name() + ")" : "");
      if (mode != Mode.DEFAULT) {
        refresher = Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "netheat-placement-refresh");
          t.setDaemon(true);
          return t;
        });
        refresher.scheduleWithFixedDelay(this::tickSafely, 0, refreshMs, TimeUnit.MILLISECONDS);
      }
    } catch (RuntimeException | IOException | LinkageError e) {
      LOG.error("netheat placement: configuration unusable ({}); using HDFS's default policy",
          e.toString(), e);
      mode = Mode.DEFAULT;
      shutdown();
    }
  }

  private void configure(Configuration conf) throws IOException {
    String m = conf.getTrimmed(PlacementKeys.MODE, PlacementKeys.MODE_DEFAULT)
        .toLowerCase(Locale.ROOT);
    switch (m) {
      case "sinbad":
        mode = Mode.SINBAD;
        break;
      case "ccp":
        mode = Mode.CCP;
        break;
      case "default":
        mode = Mode.DEFAULT;
        break;
      default:
        LOG.error("netheat placement: {} = '{}' is not sinbad, ccp or default; using default",
            PlacementKeys.MODE, m);
        mode = Mode.DEFAULT;
    }
    refreshMs = positiveLong(conf, PlacementKeys.REFRESH_MS, PlacementKeys.REFRESH_MS_DEFAULT);
    staleMs = positiveLong(conf, PlacementKeys.STALE_MS, PlacementKeys.STALE_MS_DEFAULT);
    if (mode == Mode.SINBAD) {
      double alpha = number(conf, PlacementKeys.SINBAD_ALPHA, PlacementKeys.SINBAD_ALPHA_DEFAULT,
          a -> a > 0 && a <= 1, "in (0, 1]");
      minBlockBytes = (long) number(conf, PlacementKeys.SINBAD_MIN_BLOCK_BYTES,
          PlacementKeys.SINBAD_MIN_BLOCK_BYTES_DEFAULT, b -> b >= 0, ">= 0");
      double intervalMs = number(conf, PlacementKeys.SINBAD_INTERVAL_MS, refreshMs, x -> x > 0,
          "> 0");
      double hostBps = number(conf, PlacementKeys.SINBAD_HOST_LINK_BPS,
          PlacementKeys.SINBAD_HOST_LINK_BPS_DEFAULT, x -> x > 0, "> 0");
      double oversub = number(conf, PlacementKeys.SINBAD_OVERSUBSCRIPTION,
          PlacementKeys.SINBAD_OVERSUBSCRIPTION_DEFAULT, x -> x > 0, "> 0");
      double disk = number(conf, PlacementKeys.SINBAD_DISK_WRITE_BPS,
          PlacementKeys.SINBAD_DISK_WRITE_BPS_DEFAULT, x -> x >= 0, ">= 0");
      estimator = new SinbadEstimator(alpha, hostBps, oversub, disk, intervalMs / 1000.0);
      String file = conf.getTrimmed(PlacementKeys.LOADS_FILE, "");
      String url = conf.getTrimmed(PlacementKeys.LOADS_URL, "");
      int timeout = (int) Math.min(Integer.MAX_VALUE, positiveLong(conf,
          PlacementKeys.LOADS_URL_TIMEOUT_MS, PlacementKeys.LOADS_URL_TIMEOUT_MS_DEFAULT));
      if (!file.isEmpty() && !url.isEmpty()) {
        LOG.warn("netheat placement: both {} and {} are set; reading the file",
            PlacementKeys.LOADS_FILE, PlacementKeys.LOADS_URL);
      }
      if (!file.isEmpty()) {
        loads = ReportSource.file(file);
      } else if (!url.isEmpty()) {
        loads = ReportSource.url(url, timeout);
      } else {
        LOG.error("netheat placement: sinbad needs {} or {}; using HDFS's default policy",
            PlacementKeys.LOADS_FILE, PlacementKeys.LOADS_URL);
        mode = Mode.DEFAULT;
      }
    } else if (mode == Mode.CCP) {
      String file = conf.getTrimmed(PlacementKeys.TOPOLOGY_FILE, "");
      if (file.isEmpty()) {
        LOG.error("netheat placement: ccp needs {}; using HDFS's default policy",
            PlacementKeys.TOPOLOGY_FILE);
        mode = Mode.DEFAULT;
      } else {
        classFile = ReportSource.file(file);
      }
    }
  }

  private static long positiveLong(Configuration conf, String key, long def) {
    return (long) number(conf, key, def, x -> x > 0, "> 0");
  }

  private static double number(Configuration conf, String key, double def,
      Predicate<Double> ok, String range) {
    String s = conf.getTrimmed(key);
    if (s == null || s.isEmpty()) {
      return def;
    }
    try {
      double v = Double.parseDouble(s);
      if (!Double.isNaN(v) && !Double.isInfinite(v) && ok.test(v)) {
        return v;
      }
    } catch (NumberFormatException e) {
      // fall through
    }
    LOG.error("netheat placement: {} = '{}' is not a number {}; using {}", key, s, range, def);
    return def;
  }

  // ---------------------------------------------------------------- refresh thread

  private void tickSafely() {
    try {
      refreshNow();
    } catch (RuntimeException | LinkageError e) {
      // A scheduled task that throws is never run again: keep it alive.
      once.warn("refresh-failure:" + e.getClass().getName(),
          "netheat placement: refresh failed ({}); will retry", e.toString(), e);
    }
  }

  /** One refresh: read sources, re-resolve against the topology. Tests call it directly. */
  void refreshNow() {
    synchronized (tickLock) {
      long now = System.currentTimeMillis();
      HostResolver r = new HostResolver(clusterMap.getLeaves(NodeBase.ROOT));
      if (mode == Mode.SINBAD) {
        refreshLoads(r, now);
      } else if (mode == Mode.CCP) {
        refreshClasses(r);
      }
      isStale(now);
    }
  }

  private void refreshLoads(HostResolver r, long now) {
    ReportSource.Fetched f = null;
    try {
      f = loads.fetch();
      once.forget("loads-io");
    } catch (IOException | RuntimeException e) {
      once.warn("loads-io", "netheat placement: cannot read loads from {}: {}; keeping the last"
          + " report until it goes stale", loads.name(), e.toString());
    }
    Set<String> topologyIds = new HashSet<>();
    for (DatanodeDescriptor d : r.nodes()) {
      topologyIds.add(HostResolver.id(d));
    }
    boolean applied = false;
    if (f != null) {
      LoadReport rep = LoadReport.parse(f.text, f.timeMs, loads.name());
      boolean isNew = !f.digest.equals(lastDigest)
          || (!rep.hasTimestamps && (loads.isUrl() || f.touched));
      if (isNew) {
        for (Map.Entry<String, String> e : rep.problems.entrySet()) {
          once.warn(e.getKey(), "netheat placement: {}", e.getValue());
        }
        Map<String, Double> util = new HashMap<>();
        Set<String> unknown = new HashSet<>();
        resolve(rep, r, now, util, unknown, true);
        estimator.apply(util, unknown, r.nodes());
        lastDigest = f.digest;
        lastReport = rep;
        reportTimeMs = rep.reportTimeMs;
        applied = true;
      }
    }
    if (!applied && lastReport != null && !topologyIds.equals(lastTopologyIds)) {
      // DataNodes registered since the report was applied: give them their first estimate.
      Map<String, Double> util = new HashMap<>();
      Set<String> unknown = new HashSet<>();
      resolve(lastReport, r, now, util, unknown, false);
      util.keySet().removeAll(lastTopologyIds);
      estimator.addLate(util, r.nodes());
    } else if (!applied) {
      estimator.rebuild(r.nodes());
    }
    lastTopologyIds = topologyIds;
  }

  /** Maps a report's host names to DataNode ids; logs what it cannot use (once). */
  private void resolve(LoadReport rep, HostResolver r, long now, Map<String, Double> util,
      Set<String> unknown, boolean log) {
    Map<String, String> claimedBy = new HashMap<>();
    for (LoadReport.Row row : rep.rows.values()) {
      List<DatanodeDescriptor> ds = r.resolve(row.host);
      if (ds.isEmpty()) {
        if (log && !r.nodes().isEmpty()) {
          once.info("load-unknown-host:" + row.host, "netheat placement: {} names host {}, not"
              + " a DataNode of this NameNode (yet); ignored", loads.name(), row.host);
        }
        continue;
      }
      if (ds.size() > 1) {
        if (log) {
          once.warn("load-ambiguous:" + row.host, "netheat placement: {} names host {}, which"
              + " fits {} DataNodes; use ip:port; treated as unknown", loads.name(), row.host,
              ds.size());
        }
        for (DatanodeDescriptor d : ds) {
          unknown.add(HostResolver.id(d));
        }
        continue;
      }
      String id = HostResolver.id(ds.get(0));
      if (row.timeMs >= 0 && now - row.timeMs > staleMs) {
        // One line for a whole stale report (isStale); one per host when only some are old.
        if (log && now - rep.reportTimeMs <= staleMs) {
          once.warn("load-stale-row:" + row.host, "netheat placement: {}: the load of host {} is"
              + " {} ms old (limit {} ms); treated as unknown", loads.name(), row.host,
              now - row.timeMs, staleMs);
        }
        unknown.add(id);
        continue;
      }
      String other = claimedBy.put(id, row.host);
      if (other != null) {
        if (log) {
          once.warn("load-same-node:" + id, "netheat placement: {} names one DataNode as both"
              + " {} and {}; treated as unknown", loads.name(), other, row.host);
        }
        unknown.add(id);
        continue;
      }
      util.put(id, row.utilization);
    }
    for (String h : rep.badHosts) {
      for (DatanodeDescriptor d : r.resolve(h)) {
        unknown.add(HostResolver.id(d));
      }
    }
    util.keySet().removeAll(unknown);
  }

  private void refreshClasses(HostResolver r) {
    try {
      ReportSource.Fetched f = classFile.fetch();
      once.forget("classes-io");
      if (f != null) {
        parsedClasses = UplinkClasses.parse(f.text, classFile.name());
      }
    } catch (IOException | RuntimeException e) {
      if (once.warn("classes-io", "netheat placement: cannot read uplink classes from {}: {};"
          + " DataNodes without a class are placed by HDFS's default", classFile.name(),
          e.toString())) {
        parsedClasses = null;
      }
    }
    classes.rebuild(parsedClasses, r, once, classFile.name());
  }

  /** True when Sinbad's loads are missing or older than the limit; logs each change once. */
  private boolean isStale(long now) {
    if (mode != Mode.SINBAD) {
      return false;
    }
    long t = reportTimeMs;
    boolean stale = t == Long.MIN_VALUE || now - t > staleMs;
    int s = stale ? 1 : 0;
    int prev = staleState.getAndSet(s);
    if (prev != s) {
      if (stale) {
        staleLogs.incrementAndGet();
        LOG.warn("netheat placement: loads from {} are {} (limit {} ms): placing exactly like"
            + " HDFS's default policy until fresh loads arrive", loads.name(),
            t == Long.MIN_VALUE ? "missing" : "stale (" + (now - t) + " ms old)", staleMs);
      } else {
        freshLogs.incrementAndGet();
        LOG.info("netheat placement: loads from {} are fresh ({} ms old): Sinbad placement"
            + " resumes", loads.name(), now - t);
      }
    }
    return stale;
  }

  // ---------------------------------------------------------------- placement

  /** The mode that steers a placement, or null for the default behaviour. */
  private Mode steeringFor(List<DatanodeStorageInfo> chosen, long blocksize) {
    if (mode == Mode.DEFAULT || (chosen != null && !chosen.isEmpty())) {
      return null;
    }
    if (mode == Mode.SINBAD) {
      if (blocksize < minBlockBytes || isStale(System.currentTimeMillis())
          || estimator.scoreableCount() == 0) {
        return null;
      }
      return Mode.SINBAD;
    }
    return classes.scoreableCount() == 0 ? null : Mode.CCP;
  }

  @Override
  public DatanodeStorageInfo[] chooseTarget(String srcPath, int numOfReplicas, Node writer,
      List<DatanodeStorageInfo> chosen, boolean returnChosenNodes, Set<Node> excludedNodes,
      long blocksize, BlockStoragePolicy storagePolicy, EnumSet<AddBlockFlag> flags) {
    return guarded(writer, chosen, excludedNodes, null, blocksize,
        () -> super.chooseTarget(srcPath, numOfReplicas, writer, chosen, returnChosenNodes,
            excludedNodes, blocksize, storagePolicy, flags));
  }

  @Override
  public DatanodeStorageInfo[] chooseTarget(String srcPath, int numOfReplicas, Node writer,
      List<DatanodeStorageInfo> chosen, boolean returnChosenNodes, Set<Node> excludedNodes,
      long blocksize, BlockStoragePolicy storagePolicy, EnumSet<AddBlockFlag> flags,
      EnumMap<StorageType, Integer> storageTypes) {
    return guarded(writer, chosen, excludedNodes, storageTypes, blocksize,
        () -> super.chooseTarget(srcPath, numOfReplicas, writer, chosen, returnChosenNodes,
            excludedNodes, blocksize, storagePolicy, flags, storageTypes));
  }

  /**
   * Runs the default's chooseTarget with this thread steered; on any failure of ours, restores
   * the caller's mutable arguments and runs it again unsteered.
   */
  private DatanodeStorageInfo[] guarded(Node writer, List<DatanodeStorageInfo> chosen,
      Set<Node> excludedNodes, EnumMap<StorageType, Integer> storageTypes, long blocksize,
      Supplier<DatanodeStorageInfo[]> call) {
    Mode steer;
    try {
      steer = steeringFor(chosen, blocksize);
    } catch (RuntimeException | LinkageError e) {
      fallback(e);
      steer = null;
    }
    if (steer == null) {
      return call.get();
    }
    Set<Node> excludedCopy = excludedNodes == null ? null : new HashSet<>(excludedNodes);
    EnumMap<StorageType, Integer> typesCopy = storageTypes == null ? null : storageTypes.clone();
    Mode outer = CURRENT.get();
    DatanodeStorageInfo[] out;
    CURRENT.set(steer);
    try {
      out = call.get();
    } catch (RuntimeException | LinkageError e) {
      CURRENT.set(outer);
      fallback(e);
      if (excludedNodes != null) {
        excludedNodes.clear();
        excludedNodes.addAll(excludedCopy);
      }
      if (storageTypes != null) {
        storageTypes.clear();
        storageTypes.putAll(typesCopy);
      }
      return call.get();
    } finally {
      CURRENT.set(outer);
    }
    if (steer == Mode.SINBAD) {
      try {
        afterSinbadPlacement(out, chosen, writer, blocksize);
      } catch (RuntimeException | LinkageError e) {
        fallback(e);
      }
    }
    return out;
  }

  /**
   * Hysteresis: the block crosses into each chosen DataNode (not the writer itself) and into
   * the rack of each (not the writer's rack), once per rack; as {@code Sinbad::place} in
   * crates/netheat-storage/src/sinbad.rs.
   */
  private void afterSinbadPlacement(DatanodeStorageInfo[] out, List<DatanodeStorageInfo> chosen,
      Node writer, long blocksize) {
    DatanodeDescriptor w = writer instanceof DatanodeDescriptor ? (DatanodeDescriptor) writer
        : null;
    String writerRack = w == null ? null : w.getNetworkLocation();
    Set<DatanodeDescriptor> before = new HashSet<>();
    if (chosen != null) {
      for (DatanodeStorageInfo s : chosen) {
        before.add(s.getDatanodeDescriptor());
      }
    }
    Set<String> racksDone = new HashSet<>();
    for (DatanodeStorageInfo s : out) {
      DatanodeDescriptor d = s.getDatanodeDescriptor();
      if (before.contains(d) || d.equals(w)) {
        continue;
      }
      String rack = d.getNetworkLocation();
      boolean rackToo = !rack.equals(writerRack) && racksDone.add(rack);
      estimator.bump(d, rackToo, blocksize);
    }
  }

  private void fallback(Throwable e) {
    fallbacks.incrementAndGet();
    once.warn("fallback:" + e.getClass().getName(), "netheat placement: internal error ({});"
        + " this and later such placements use HDFS's default choice", e.toString(), e);
  }

  @Override
  protected DatanodeDescriptor chooseDataNode(String scope, Collection<Node> excludedNodes,
      StorageType type) {
    DatanodeDescriptor d = super.chooseDataNode(scope, excludedNodes, type);
    inject("pick");
    return steer(d, scope, excludedNodes, type);
  }

  @Override
  protected DatanodeDescriptor chooseDataNode(String scope, Collection<Node> excludedNodes) {
    DatanodeDescriptor d = super.chooseDataNode(scope, excludedNodes);
    inject("pick");
    return steer(d, scope, excludedNodes, null);
  }

  /**
   * Replaces the default's random pick {@code d} by the steered one. {@code d} is kept when
   * nothing steers this thread, when it is unknown to the policy, or on any error.
   */
  private DatanodeDescriptor steer(DatanodeDescriptor d, String scope,
      Collection<Node> excludedNodes, StorageType type) {
    Mode m = CURRENT.get();
    if (m == null || d == null) {
      return d;
    }
    try {
      inject("steer");
      boolean known = m == Mode.SINBAD ? estimator.isScoreable(d) : classes.classOf(d) != null;
      if (!known) {
        return d;
      }
      Predicate<DatanodeDescriptor> eligible = n -> inScope(n, scope)
          && (excludedNodes == null || !excludedNodes.contains(n))
          && (type == null || n.hasStorageType(type));
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      DatanodeDescriptor best = m == Mode.SINBAD ? estimator.best(eligible, rnd)
          : classes.best(eligible, rnd);
      if (best == null || (best != d && !clusterMap.contains(best))) {
        return d;
      }
      return best;
    } catch (RuntimeException | LinkageError e) {
      fallback(e);
      return d;
    }
  }

  /** Tests only: runs the fault injector on steered placements (a no-op otherwise). */
  private void inject(String stage) {
    Consumer<String> fi = faultInjector;
    if (fi != null && CURRENT.get() != null) {
      fi.accept(stage);
    }
  }

  /** Whether a node lies in a chooseRandom scope ("" root, "/rack", or "~/rack" = outside). */
  static boolean inScope(Node n, String scope) {
    boolean outside = scope.startsWith("~");
    String s = outside ? scope.substring(1) : scope;
    while (s.endsWith("/")) {
      s = s.substring(0, s.length() - 1);
    }
    boolean under = s.isEmpty() || NodeBase.getPath(n).startsWith(s + "/");
    return outside != under;
  }

  // ---------------------------------------------------------------- for tests and operators

  /** The configured mode (after validation). */
  public Mode mode() {
    return mode;
  }

  /** Stops the refresh thread (the NameNode has no hook for it; it is a daemon thread). */
  public void shutdown() {
    if (refresher != null) {
      refresher.shutdownNow();
    }
  }

  long fallbackCount() {
    return fallbacks.get();
  }

  LogOnce logOnce() {
    return once;
  }

  SinbadEstimator estimator() {
    return estimator;
  }

  UplinkClasses classes() {
    return classes;
  }

  void setFaultInjector(Consumer<String> f) {
    faultInjector = f;
  }

  int staleLogCount() {
    return staleLogs.get();
  }

  int freshLogCount() {
    return freshLogs.get();
  }

  boolean staleNow() {
    return isStale(System.currentTimeMillis());
  }
}
