import java.net.URI;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Writer of `make bench-hdfs`: runs inside one DataNode's network namespace (so HDFS puts
 * the first replica on that DataNode and the other two remote) and writes files of whole
 * blocks one after another, with an exponential think time before each, until its
 * deadline. A file has one block, or, with a mean above 1, 1 + G blocks with G geometric of
 * mean `mean-file-blocks - 1` (the Sinbad paper's file lengths, SIGCOMM'13 section 4.3:
 * 1.47 blocks on average). One CSV line per block on stdout:
 * writer,file,block,start_s,write_s,replica_ip;replica_ip;replica_ip
 * and at the end one line per block with its final replicas: loc,writer,file,block,replicas
 * write_s runs from the block's start (create() for the first block, else the end of the
 * previous one) to its last byte acknowledged by the whole pipeline: hflush() returning,
 * or close() for the file's last block (a one-block file: create() to close()).
 *
 * Random draws, in order (benches/hdfs/predict.py replays them): nextBytes of the 1 MiB
 * buffer, then per file the think time's nextDouble and, when the mean is above 1, the
 * block count's nextDouble.
 *
 * args: namenode-uri writer-name block-bytes duration-s mean-think-s seed [mean-file-blocks]
 */
public class BlockWriter {
  public static void main(String[] a) throws Exception {
    URI nn = URI.create(a[0]);
    String name = a[1];
    long block = Long.parseLong(a[2]);
    double duration = Double.parseDouble(a[3]);
    double think = Double.parseDouble(a[4]);
    Random rnd = new Random(Long.parseLong(a[5]));
    double meanBlocks = a.length > 6 ? Double.parseDouble(a[6]) : 1.0;
    double q = (meanBlocks - 1) / meanBlocks; // P(G >= j) = q^j, mean q / (1 - q)
    Configuration conf = new Configuration();
    conf.setLong("dfs.blocksize", block);
    FileSystem fs = FileSystem.get(nn, conf);
    byte[] buf = new byte[1 << 20];
    rnd.nextBytes(buf);
    long t0 = System.nanoTime();
    java.util.List<Integer> blocksOf = new java.util.ArrayList<>();
    int i = 0;
    while (true) {
      Thread.sleep((long) (-Math.log(1 - rnd.nextDouble()) * think * 1000));
      int n = 1;
      if (q > 0) {
        n += (int) Math.floor(Math.log(1 - rnd.nextDouble()) / Math.log(q));
      }
      double start = (System.nanoTime() - t0) / 1e9;
      if (start > duration) break;
      Path p = new Path("/bench/" + name + "/f" + i);
      double[] begin = new double[n];
      double[] took = new double[n];
      long s = System.nanoTime();
      try (FSDataOutputStream out = fs.create(p, true, 1 << 16, (short) 3, block)) {
        for (int b = 0; b < n; b++) {
          begin[b] = (s - t0) / 1e9;
          for (long w = 0; w < block; w += buf.length) {
            out.write(buf, 0, (int) Math.min(buf.length, block - w));
          }
          if (b + 1 < n) {
            out.hflush();
            long e = System.nanoTime();
            took[b] = (e - s) / 1e9;
            s = e;
          }
        }
      }
      took[n - 1] = (System.nanoTime() - s) / 1e9;
      String[] reps = replicas(fs, p, n);
      for (int b = 0; b < n; b++) {
        System.out.printf("%s,%d,%d,%.3f,%.4f,%s%n", name, i, b, begin[b], took[b], reps[b]);
      }
      System.out.flush();
      blocksOf.add(n);
      i++;
    }
    // Final replica locations (a replica can report to the NameNode after close() returns).
    Thread.sleep(3000);
    for (int j = 0; j < i; j++) {
      String[] reps = replicas(fs, new Path("/bench/" + name + "/f" + j), blocksOf.get(j));
      for (int b = 0; b < reps.length; b++) {
        System.out.printf("loc,%s,%d,%d,%s%n", name, j, b, reps[b]);
      }
    }
    fs.close();
  }

  /** Each block's replica addresses, `;`-separated (empty for a block not reported yet). */
  static String[] replicas(FileSystem fs, Path p, int n) throws java.io.IOException {
    FileStatus st = fs.getFileStatus(p);
    BlockLocation[] locs = fs.getFileBlockLocations(st, 0, st.getLen());
    String[] out = new String[n];
    for (int b = 0; b < n; b++) {
      StringBuilder r = new StringBuilder();
      if (b < locs.length) {
        for (String name : locs[b].getNames()) {
          if (r.length() > 0) r.append(';');
          r.append(name.substring(0, name.indexOf(':')));
        }
      }
      out[b] = r.toString();
    }
    return out;
  }
}
