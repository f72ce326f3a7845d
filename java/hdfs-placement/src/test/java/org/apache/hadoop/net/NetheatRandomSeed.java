package org.apache.hadoop.net;

/** Seeds NetworkTopology's (static, shared) random source, which HDFS's chooseRandom draws from. */
public final class NetheatRandomSeed {
  private NetheatRandomSeed() {}

  public static void set(NetworkTopology t, long seed) {
    t.setRandomSeed(seed);
  }
}
