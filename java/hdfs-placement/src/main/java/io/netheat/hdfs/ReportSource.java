package io.netheat.hdfs;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.net.URLConnection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Where a text report (loads or classes) comes from: a local file or an HTTP(S) URL. Only the
 * refresh thread calls {@link #fetch}; it blocks on I/O, {@code chooseTarget} never does.
 */
abstract class ReportSource {
  /** Reports larger than this are refused (a guard against a wrong URL). */
  static final int MAX_BYTES = 16 << 20;

  /** One fetched text. */
  static final class Fetched {
    final String text;
    /** File modification time or the time the URL answered, ms since the epoch. */
    final long timeMs;
    /** SHA-256 of the bytes. */
    final String digest;
    /** True for a file rewritten (new modification time or inode) since the previous fetch. */
    final boolean touched;

    Fetched(String text, long timeMs, String digest, boolean touched) {
      this.text = text;
      this.timeMs = timeMs;
      this.digest = digest;
      this.touched = touched;
    }
  }

  /** Human-readable name for log lines. */
  abstract String name();

  /** True for a URL: every answer is a new measurement unless it carries the same timestamps. */
  abstract boolean isUrl();

  /** Reads the report (blocking I/O; only the refresh thread calls it). */
  abstract Fetched fetch() throws IOException;

  static String digest(byte[] b) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static ReportSource file(String path) {
    return new FileSource(Path.of(path));
  }

  static ReportSource url(String url, int timeoutMs) throws IOException {
    return new UrlSource(new URL(url), timeoutMs);
  }

  private static final class FileSource extends ReportSource {
    private final Path path;
    private long lastMtime = Long.MIN_VALUE;
    private Object lastKey;

    FileSource(Path path) {
      this.path = path;
    }

    @Override
    String name() {
      return path.toString();
    }

    @Override
    boolean isUrl() {
      return false;
    }

    /** Reads the whole file every time (reports are small): the digest decides what is new. */
    @Override
    Fetched fetch() throws IOException {
      BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
      if (a.size() > MAX_BYTES) {
        throw new IOException("larger than " + MAX_BYTES + " bytes");
      }
      byte[] b = Files.readAllBytes(path);
      long mtime = a.lastModifiedTime().toMillis();
      Object key = a.fileKey();
      boolean touched = mtime != lastMtime || (key != null && !key.equals(lastKey));
      lastMtime = mtime;
      lastKey = key;
      return new Fetched(new String(b, StandardCharsets.UTF_8), mtime, digest(b), touched);
    }
  }

  private static final class UrlSource extends ReportSource {
    private final URL url;
    private final int timeoutMs;

    UrlSource(URL url, int timeoutMs) throws IOException {
      String p = url.getProtocol();
      if (!p.equals("http") && !p.equals("https")) {
        throw new IOException("only http and https URLs are read, not " + p);
      }
      this.url = url;
      this.timeoutMs = timeoutMs;
    }

    @Override
    String name() {
      return url.toString();
    }

    @Override
    boolean isUrl() {
      return true;
    }

    @Override
    Fetched fetch() throws IOException {
      URLConnection c = url.openConnection();
      c.setConnectTimeout(timeoutMs);
      c.setReadTimeout(timeoutMs);
      c.setUseCaches(false);
      c.setRequestProperty("Accept", "text/csv, text/plain");
      HttpURLConnection h = (HttpURLConnection) c;
      try {
        int code = h.getResponseCode();
        if (code != 200) {
          throw new IOException("HTTP " + code);
        }
        byte[] b;
        try (InputStream in = h.getInputStream()) {
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          byte[] buf = new byte[8192];
          int n;
          while ((n = in.read(buf)) >= 0) {
            out.write(buf, 0, n);
            if (out.size() > MAX_BYTES) {
              throw new IOException("answer larger than " + MAX_BYTES + " bytes");
            }
          }
          b = out.toByteArray();
        }
        return new Fetched(new String(b, StandardCharsets.UTF_8), System.currentTimeMillis(),
            digest(b), false);
      } finally {
        h.disconnect();
      }
    }
  }
}
