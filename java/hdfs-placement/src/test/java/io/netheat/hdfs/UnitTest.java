package io.netheat.hdfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.hadoop.hdfs.DFSTestUtil;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.junit.jupiter.api.Test;

/** Parsers, the estimator by hand, scopes: no NameNode. */
class UnitTest {
  static final double EPS = 1e-9;

  /**
   * The numbers of {@code ewma_and_hysteresis_by_hand} in crates/netheat-storage/src/sinbad.rs,
   * on host links of 1000 bit/s: EWMA 0.2, a missing update = fully loaded, bump
   * min(Cap - v, 50 B * 8 / 1 s).
   */
  @Test
  void ewmaAndHysteresisByHand() {
    DatanodeDescriptor a = DFSTestUtil.getDatanodeDescriptor("1.1.1.1", "/r0", "a");
    DatanodeDescriptor b = DFSTestUtil.getDatanodeDescriptor("2.2.2.2", "/r1", "b");
    List<DatanodeDescriptor> nodes = List.of(a, b);
    String ia = HostResolver.id(a);
    String ib = HostResolver.id(b);
    // A fixed clock: every bump at its report's instant, delta = Delta = 1 s.
    SinbadEstimator e = new SinbadEstimator(0.2, 1000, 1.0, 0, 1.0, () -> 0L);
    e.apply(Map.of(ia, 0.5, ib, 0.1), Set.of(), nodes);
    assertEquals(100, e.hostLoad(a), EPS); // 0.2 * 500
    assertEquals(20, e.hostLoad(b), EPS);
    e.apply(Map.of(ia, 0.5), Set.of(), nodes);
    assertEquals(180, e.hostLoad(a), EPS); // 0.2 * 500 + 0.8 * 100
    assertEquals(1000, e.hostLoad(b), EPS); // missing: fully loaded
    e.bump(a, true, 50);
    assertEquals(580, e.hostLoad(a), EPS); // + min(820, 400)
    assertEquals(580, e.rackLoad("/r0"), EPS);
    e.bump(a, true, 50);
    e.bump(a, true, 50);
    assertEquals(1000, e.hostLoad(a), EPS); // + 400, then min(20, 400)
    assertEquals(0, e.rackExpected("/r0"), EPS);
    e.apply(Map.of(ia, 0.0, ib, 0.0), Set.of(), nodes);
    assertEquals(144, e.hostLoad(a), EPS); // bumps dropped; 0.8 * 180
    assertEquals(800, e.hostLoad(b), EPS);
    assertEquals(856, e.rackExpected("/r0"), EPS);
    // Greedy: rack /r0 (856 spare) over /r1 (200).
    assertSame(a, e.best(d -> true, new Random(1)));
    assertSame(b, e.best(d -> d != a, new Random(1)));
    // Unknown (NaN in the report): not scoreable, estimate kept for later.
    e.apply(Map.of(ia, 0.0), Set.of(ib), nodes);
    assertFalse(e.isScoreable(b));
    assertTrue(e.isScoreable(a));
  }

  /**
   * Section 6.2's delta is the time left until the next report on the cadence, as in
   * {@code hysteresis_delta_is_the_time_to_the_next_report} in crates/netheat-storage/src/sinbad.rs:
   * Delta = 1 s; host links of 1000 bit/s; 25 B blocks (200 bits).
   */
  @Test
  void hysteresisDeltaIsTheTimeToTheNextReport() {
    DatanodeDescriptor a = DFSTestUtil.getDatanodeDescriptor("1.1.1.1", "/r0", "a");
    DatanodeDescriptor b = DFSTestUtil.getDatanodeDescriptor("2.2.2.2", "/r1", "b");
    DatanodeDescriptor c = DFSTestUtil.getDatanodeDescriptor("3.3.3.3", "/r2", "c");
    List<DatanodeDescriptor> nodes = List.of(a, b, c);
    long[] now = {300_000_000L};
    SinbadEstimator e = new SinbadEstimator(0.2, 1000, 1.0, 0, 1.0, () -> now[0]);
    assertEquals(1.0, e.timeToNextReport(), EPS); // no report yet: a full Delta
    now[0] = 10_000_000_000L;
    e.apply(Map.of(HostResolver.id(a), 0.0, HostResolver.id(b), 0.0, HostResolver.id(c), 0.0),
        Set.of(), nodes);
    assertEquals(1.0, e.timeToNextReport(), EPS);
    e.bump(a, false, 25);
    assertEquals(200, e.hostLoad(a), EPS); // 200 bits / 1 s
    now[0] = 10_750_000_000L;
    assertEquals(0.25, e.timeToNextReport(), EPS);
    e.bump(b, false, 25);
    assertEquals(800, e.hostLoad(b), EPS); // 200 bits / 0.25 s
    now[0] = 11_500_000_000L; // the report due at 11 s is late: the next one on the cadence, 12 s
    assertEquals(0.5, e.timeToNextReport(), EPS);
    assertEquals(0, e.hostLoad(b), EPS); // the bumps waited for the report due at 11 s: gone
    e.bump(c, false, 25);
    assertEquals(400, e.hostLoad(c), EPS); // 200 bits / 0.5 s
    e.bump(a, false, 25);
    assertEquals(400, e.hostLoad(a), EPS); // its bump of the first interval expired too
    now[0] = 12_000_000_000L; // exactly on the cadence: a full Delta
    assertEquals(1.0, e.timeToNextReport(), EPS);
    now[0] = 9_000_000_000L; // a call timed before the report it sees: a full Delta
    assertEquals(1.0, e.timeToNextReport(), EPS);
  }

  @Test
  void diskCapAndOversubscription() {
    DatanodeDescriptor a = DFSTestUtil.getDatanodeDescriptor("1.1.1.1", "/r0", "a");
    DatanodeDescriptor a2 = DFSTestUtil.getDatanodeDescriptor("1.1.1.2", "/r0", "a2");
    DatanodeDescriptor b = DFSTestUtil.getDatanodeDescriptor("2.2.2.2", "/r1", "b");
    List<DatanodeDescriptor> nodes = List.of(a, a2, b);
    SinbadEstimator e = new SinbadEstimator(1.0, 1000, 4.0, 300, 1.0);
    e.apply(Map.of(HostResolver.id(a), 0.1, HostResolver.id(b), 0.4), Set.of(), nodes);
    // Rack /r0: 2 hosts x 1000 / 4 = 500 cap; a2 unknown counts as the mean of a (100): 200.
    assertFalse(e.isScoreable(a2));
    assertEquals(200, e.rackLoad("/r0"), EPS);
    assertEquals(300, e.rackExpected("/r0"), EPS); // min(500 - 200, disk 300)
    assertEquals(0, e.rackExpected("/r1"), EPS); // 250 cap - 400 < 0
  }

  @Test
  void loadReportFormat() {
    String text = "# comment\n\nhost,utilization,timestamp\nr0h0,0.5,1700000000.25\n"
        + "r0h1 , 0.25 \nr0h2,NaN\nr0h3,-1\nr0h4,1.5\nr1h0,0.1,x\nr1h1\n,0.3\n"
        + "r1h2,0.1\nr1h2,0.2\nr1h3,Infinity\n";
    LoadReport r = LoadReport.parse(text, 42L, "f");
    assertEquals(Set.of("r0h0", "r0h1", "r0h4"), r.rows.keySet());
    assertEquals(0.25, r.rows.get("r0h1").utilization, EPS);
    assertEquals(1.0, r.rows.get("r0h4").utilization, EPS);
    assertEquals(1700000000250L, r.rows.get("r0h0").timeMs);
    assertEquals(-1, r.rows.get("r0h1").timeMs);
    assertTrue(r.hasTimestamps);
    assertEquals(1700000000250L, r.reportTimeMs);
    assertEquals(Set.of("r0h2", "r0h3", "r1h0", "r1h1", "r1h2", "r1h3"), r.badHosts);
    assertTrue(r.problems.containsKey("load-value:r0h2"));
    assertTrue(r.problems.containsKey("load-value:r0h3"));
    assertTrue(r.problems.containsKey("load-clamp:r0h4"));
    assertTrue(r.problems.containsKey("load-time:r1h0"));
    assertTrue(r.problems.containsKey("load-fields:r1h1"));
    assertTrue(r.problems.containsKey("load-dup:r1h2"));
    assertTrue(r.problems.containsKey("load-value:r1h3"));
    LoadReport plain = LoadReport.parse("a,0.1\r\nb,0.2\r\n", 42L, "f");
    assertFalse(plain.hasTimestamps);
    assertEquals(42L, plain.reportTimeMs);
    assertEquals(2, plain.rows.size());
  }

  @Test
  void classFileFormat() {
    UplinkClasses.Parsed p = UplinkClasses.parse("rack,class\n/rack0/,High\n/rack1,MEDIUM\n"
        + "h1,/rack2,low\n/rack3,Fast\nh2,/rack0,Low\nbad\nrack4,High\n", "f");
    assertEquals(UplinkClasses.UplinkClass.HIGH, p.rackClass.get("/rack0"));
    assertEquals(UplinkClasses.UplinkClass.MEDIUM, p.rackClass.get("/rack1"));
    assertEquals(UplinkClasses.UplinkClass.LOW, p.rackClass.get("/rack2"));
    assertTrue(p.conflictRacks.contains("/rack0"), "High and Low");
    assertTrue(p.conflictRacks.contains("/rack3"), "bad class name");
    assertTrue(p.problems.containsKey("class-line:7"));
    assertTrue(p.problems.containsKey("class-line:8"), "rack without a leading slash");
    assertNull(UplinkClasses.UplinkClass.parse("sideways"));
  }

  @Test
  void scopes() {
    DatanodeDescriptor a = DFSTestUtil.getDatanodeDescriptor("1.1.1.1", "/rack1", "a");
    DatanodeDescriptor b = DFSTestUtil.getDatanodeDescriptor("2.2.2.2", "/rack10", "b");
    assertTrue(NetheatBlockPlacementPolicy.inScope(a, ""));
    assertTrue(NetheatBlockPlacementPolicy.inScope(a, "/rack1"));
    assertFalse(NetheatBlockPlacementPolicy.inScope(b, "/rack1"), "not a prefix match");
    assertFalse(NetheatBlockPlacementPolicy.inScope(a, "~/rack1"));
    assertTrue(NetheatBlockPlacementPolicy.inScope(b, "~/rack1"));
  }
}
