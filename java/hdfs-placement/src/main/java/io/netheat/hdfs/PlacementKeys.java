package io.netheat.hdfs;

/**
 * Configuration keys of {@link NetheatBlockPlacementPolicy} (set in the NameNode's
 * {@code hdfs-site.xml}) and their defaults. docs/hdfs.md lists them with their meaning.
 */
public final class PlacementKeys {
  private PlacementKeys() {}

  /** {@code sinbad}, {@code ccp} or {@code default}. */
  public static final String MODE = "netheat.placement.mode";
  public static final String MODE_DEFAULT = "default";

  /** Load report as a local file (CSV {@code host,utilization[,timestamp]}). */
  public static final String LOADS_FILE = "netheat.placement.loads.file";
  /** Load report from an HTTP(S) URL answering the same CSV. */
  public static final String LOADS_URL = "netheat.placement.loads.url";
  /** Connect and read time-out of one HTTP fetch, ms. */
  public static final String LOADS_URL_TIMEOUT_MS = "netheat.placement.loads.url.timeout.ms";
  public static final long LOADS_URL_TIMEOUT_MS_DEFAULT = 2_000L;

  /**
   * Period of the background refresh (read the loads and the class file, re-resolve hosts
   * against the NameNode's topology), ms. The Sinbad master takes a report every
   * Delta = 1 s (Sinbad paper, section 6.2), hence the default.
   */
  public static final String REFRESH_MS = "netheat.placement.refresh.ms";
  public static final long REFRESH_MS_DEFAULT = 1_000L;

  /** Loads older than this make the policy behave exactly like HDFS's default, ms. */
  public static final String STALE_MS = "netheat.placement.stale.ms";
  public static final long STALE_MS_DEFAULT = 10_000L;

  /** EWMA weight of a new measurement (Sinbad paper, section 6.2: alpha = 0.2). */
  public static final String SINBAD_ALPHA = "netheat.placement.sinbad.alpha";
  public static final double SINBAD_ALPHA_DEFAULT = 0.2;

  /**
   * Blocks smaller than this (the file's block size, bytes) are left to the default policy:
   * the THRESHOLD of the paper's Pseudocode 1 (section 6.3). The paper gives no number;
   * 10 MB is netheat's simulator default ({@code PolicyConfig::default} in
   * crates/netheat-storage/src/placement.rs).
   */
  public static final String SINBAD_MIN_BLOCK_BYTES = "netheat.placement.sinbad.min-block-bytes";
  public static final long SINBAD_MIN_BLOCK_BYTES_DEFAULT = 10_000_000L;

  /**
   * Delta, the interval at which the load producer reports, ms (paper section 6.2). The
   * hysteresis increment is min(Cap - v, Size / delta) with delta the time left until the next
   * report is due, Delta minus the time since the last report was applied. Defaults to
   * {@link #REFRESH_MS}.
   */
  public static final String SINBAD_INTERVAL_MS = "netheat.placement.sinbad.interval.ms";

  /** Capacity of each DataNode's link (the utilizations are fractions of it), bits/s. */
  public static final String SINBAD_HOST_LINK_BPS = "netheat.placement.sinbad.host-link-bps";
  public static final double SINBAD_HOST_LINK_BPS_DEFAULT = 10e9;

  /**
   * Rack downlink capacity = DataNodes in the rack x host-link-bps / this (the same rule as
   * netheat's two-tier cluster, crates/netheat-storage/src/cluster.rs).
   */
  public static final String SINBAD_OVERSUBSCRIPTION = "netheat.placement.sinbad.oversubscription";
  public static final double SINBAD_OVERSUBSCRIPTION_DEFAULT = 1.0;

  /** DiskWriteCap of the paper's expected capacity min(Cap - v, DiskWriteCap); 0 = none. */
  public static final String SINBAD_DISK_WRITE_BPS = "netheat.placement.sinbad.disk-write-bps";
  public static final double SINBAD_DISK_WRITE_BPS_DEFAULT = 0.0;

  /** CCP: uplink classes, CSV {@code rack,class} or {@code host,rack,class}. */
  public static final String TOPOLOGY_FILE = "netheat.placement.topology.file";
}
