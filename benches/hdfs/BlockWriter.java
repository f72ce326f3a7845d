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
 * the first replica on that DataNode and the other two remote) and writes one-block files
 * (file size = block size) one after another, with an exponential think time between
 * them, until its deadline. One CSV line per file on stdout:
 * writer,file,start_s,write_s,replica_ip;replica_ip;replica_ip
 * and at the end one line per file with its final replicas: loc,writer,file,replicas
 * write_s is create() to close() returned, i.e. the whole pipeline of the block acked.
 *
 * args: namenode-uri writer-name block-bytes duration-s mean-think-s seed
 */
public class BlockWriter {
  public static void main(String[] a) throws Exception {
    URI nn = URI.create(a[0]);
    String name = a[1];
    long block = Long.parseLong(a[2]);
    double duration = Double.parseDouble(a[3]);
    double think = Double.parseDouble(a[4]);
    Random rnd = new Random(Long.parseLong(a[5]));
    Configuration conf = new Configuration();
    conf.setLong("dfs.blocksize", block);
    FileSystem fs = FileSystem.get(nn, conf);
    byte[] buf = new byte[1 << 20];
    rnd.nextBytes(buf);
    long t0 = System.nanoTime();
    int i = 0;
    while (true) {
      Thread.sleep((long) (-Math.log(1 - rnd.nextDouble()) * think * 1000));
      double start = (System.nanoTime() - t0) / 1e9;
      if (start > duration) break;
      Path p = new Path("/bench/" + name + "/f" + i);
      long s = System.nanoTime();
      try (FSDataOutputStream out = fs.create(p, true, 1 << 16, (short) 3, block)) {
        for (long w = 0; w < block; w += buf.length) {
          out.write(buf, 0, (int) Math.min(buf.length, block - w));
        }
      }
      double took = (System.nanoTime() - s) / 1e9;
      FileStatus st = fs.getFileStatus(p);
      BlockLocation[] locs = fs.getFileBlockLocations(st, 0, st.getLen());
      StringBuilder r = new StringBuilder();
      for (BlockLocation l : locs) {
        for (String n : l.getNames()) {
          if (r.length() > 0) r.append(';');
          r.append(n.substring(0, n.indexOf(':')));
        }
      }
      System.out.printf("%s,%d,%.3f,%.4f,%s%n", name, i, start, took, r);
      System.out.flush();
      i++;
    }
    // Final replica locations (a replica can report to the NameNode after close() returns).
    Thread.sleep(3000);
    for (int j = 0; j < i; j++) {
      Path p = new Path("/bench/" + name + "/f" + j);
      FileStatus st = fs.getFileStatus(p);
      StringBuilder r = new StringBuilder();
      for (BlockLocation l : fs.getFileBlockLocations(st, 0, st.getLen())) {
        for (String n : l.getNames()) {
          if (r.length() > 0) r.append(';');
          r.append(n.substring(0, n.indexOf(':')));
        }
      }
      System.out.printf("loc,%s,%d,%s%n", name, j, r);
    }
    fs.close();
  }
}
