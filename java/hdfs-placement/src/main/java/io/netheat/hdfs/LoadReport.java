package io.netheat.hdfs;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One load report: per DataNode, the utilization of its receive link (the ToR-to-host
 * direction, the one a placement chooses; Sinbad paper section 6.3) as a fraction of the host
 * link capacity.
 *
 * <p>Format (UTF-8 text, one host a line; docs/hdfs.md):
 *
 * <pre>
 * # comment lines and blank lines are ignored
 * host,utilization,timestamp      (optional header)
 * r0h0,0.92,1764000000.5
 * r1h3,0.10
 * </pre>
 *
 * {@code host} is a DataNode's host name, IP address, {@code ip:port} / {@code host:port}
 * (data transfer port) or storage UUID; {@code utilization} is in [0, 1] (larger values are
 * clamped to 1); {@code timestamp} (optional) is the measurement time in seconds since the Unix
 * epoch. A line that is malformed, names a host twice, or has a NaN, infinite or negative value
 * makes its host unknown for this report (the policy leaves unknown hosts to HDFS's default).
 */
final class LoadReport {
  /** A usable row. */
  static final class Row {
    final String host;
    final double utilization;
    /** Measurement time, ms since the epoch, or -1 when the line has none. */
    final long timeMs;

    Row(String host, double utilization, long timeMs) {
      this.host = host;
      this.utilization = utilization;
      this.timeMs = timeMs;
    }
  }

  /** Usable rows by host key, in file order. */
  final Map<String, Row> rows;
  /** Hosts named on unusable lines (unknown for this report). */
  final Set<String> badHosts;
  /** Problems: log-once key -> message. */
  final Map<String, String> problems;
  /** True when some usable row carries a timestamp. */
  final boolean hasTimestamps;
  /** Newest row timestamp, or the base time (file mtime or fetch time) without timestamps. */
  final long reportTimeMs;

  private LoadReport(Map<String, Row> rows, Set<String> badHosts, Map<String, String> problems,
      boolean hasTimestamps, long reportTimeMs) {
    this.rows = Collections.unmodifiableMap(rows);
    this.badHosts = Collections.unmodifiableSet(badHosts);
    this.problems = Collections.unmodifiableMap(problems);
    this.hasTimestamps = hasTimestamps;
    this.reportTimeMs = reportTimeMs;
  }

  /**
   * Parses a report. {@code baseTimeMs} is the time of a report without timestamps (the file's
   * modification time, or when the URL answered). Never throws on bad content.
   */
  static LoadReport parse(String text, long baseTimeMs, String source) {
    Map<String, Row> rows = new LinkedHashMap<>();
    Set<String> bad = new LinkedHashSet<>();
    Map<String, String> problems = new LinkedHashMap<>();
    Map<String, Integer> seenAt = new HashMap<>();
    boolean first = true;
    int lineNo = 0;
    for (String raw : text.split("\n", -1)) {
      lineNo++;
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split(",", -1);
      for (int i = 0; i < f.length; i++) {
        f[i] = f[i].strip();
      }
      if (first) {
        first = false;
        if (f[0].equalsIgnoreCase("host")) {
          continue; // header
        }
      }
      String host = f[0];
      if (host.isEmpty()) {
        problems.put("load-line:" + source + ":" + lineNo,
            source + " line " + lineNo + ": no host name; line ignored");
        continue;
      }
      Integer before = seenAt.put(host, lineNo);
      if (before != null) {
        rows.remove(host);
        bad.add(host);
        problems.put("load-dup:" + host,
            source + " line " + lineNo + ": host " + host + " also on line " + before
                + "; host treated as unknown");
        continue;
      }
      if (f.length != 2 && f.length != 3) {
        bad.add(host);
        problems.put("load-fields:" + host, source + " line " + lineNo
            + ": expected host,utilization[,timestamp]; host " + host + " treated as unknown");
        continue;
      }
      double u;
      try {
        u = Double.parseDouble(f[1]);
      } catch (NumberFormatException e) {
        u = Double.NaN;
      }
      if (Double.isNaN(u) || Double.isInfinite(u) || u < 0) {
        bad.add(host);
        String why = Double.isNaN(u) ? "not a number" : (u < 0 ? "negative" : "infinite");
        problems.put("load-value:" + host, source + " line " + lineNo + ": utilization '" + f[1]
            + "' of host " + host + " is " + why + "; host treated as unknown");
        continue;
      }
      if (u > 1.0) {
        problems.put("load-clamp:" + host, source + " line " + lineNo + ": utilization " + u
            + " of host " + host + " is above 1; clamped to 1");
        u = 1.0;
      }
      long t = -1;
      if (f.length == 3 && !f[2].isEmpty()) {
        double s;
        try {
          s = Double.parseDouble(f[2]);
        } catch (NumberFormatException e) {
          s = Double.NaN;
        }
        if (Double.isNaN(s) || Double.isInfinite(s) || s < 0) {
          bad.add(host);
          problems.put("load-time:" + host, source + " line " + lineNo + ": timestamp '" + f[2]
              + "' of host " + host + " is not seconds since the epoch; host treated as unknown");
          continue;
        }
        t = (long) Math.floor(s * 1000.0);
      }
      rows.put(host, new Row(host, u, t));
    }
    boolean hasTs = false;
    long newest = Long.MIN_VALUE;
    for (Row r : rows.values()) {
      if (r.timeMs >= 0) {
        hasTs = true;
        newest = Math.max(newest, r.timeMs);
      }
    }
    return new LoadReport(rows, bad, problems, hasTs, hasTs ? newest : baseTimeMs);
  }

  /** Hosts of the report, usable or not. */
  List<String> allHosts() {
    List<String> out = new ArrayList<>(rows.keySet());
    out.addAll(badHosts);
    return out;
  }
}
