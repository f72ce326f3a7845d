package io.netheat.hdfs;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;

/**
 * Logs each distinct problem once (by key), so a bad line re-read every second does not
 * flood the NameNode's log. Keys are kept for tests.
 */
final class LogOnce {
  /** Past this many distinct problems, new ones are counted but not logged (memory bound). */
  static final int MAX_KEYS = 10_000;

  private final Logger log;
  private final Set<String> seen = ConcurrentHashMap.newKeySet();
  private volatile boolean full;

  LogOnce(Logger log) {
    this.log = log;
  }

  /** Warns unless {@code key} was logged before; true when it logged. */
  boolean warn(String key, String format, Object... args) {
    if (!admit(key)) {
      return false;
    }
    log.warn(format, args);
    return true;
  }

  /** Logs at INFO unless {@code key} was logged before. */
  boolean info(String key, String format, Object... args) {
    if (!admit(key)) {
      return false;
    }
    log.info(format, args);
    return true;
  }

  private boolean admit(String key) {
    if (seen.size() >= MAX_KEYS && !seen.contains(key)) {
      if (!full) {
        full = true;
        log.warn("netheat placement: more than {} distinct input problems; no longer logging"
            + " new ones", MAX_KEYS);
      }
      return false;
    }
    return seen.add(key);
  }

  /** Forgets a key, so the problem is logged again if it comes back. */
  void forget(String key) {
    seen.remove(key);
  }

  /** Number of logged keys starting with {@code prefix}. */
  int count(String prefix) {
    int n = 0;
    for (String k : seen) {
      if (k.startsWith(prefix)) {
        n++;
      }
    }
    return n;
  }

  List<String> keys() {
    return new ArrayList<>(seen);
  }
}
