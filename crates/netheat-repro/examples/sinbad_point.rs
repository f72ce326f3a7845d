//! Times one Sinbad point (uniform + sinbad on the same workload):
//! `cargo run --release -p netheat-repro --example sinbad_point -- <duration_s> [q_s] [in_memory]`.

use netheat_repro::sinbad::{sinbad_point, SinbadSpec};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let dur: f64 = a.get(1).and_then(|x| x.parse().ok()).unwrap_or(3600.0);
    let q: f64 = a.get(2).and_then(|x| x.parse().ok()).unwrap_or(10.0);
    let in_memory = a.get(3).is_some_and(|x| x == "1" || x == "true");
    let dir = netheat_data::DataDir::resolve(None);
    let trace = match netheat_data::load_coflows(&dir, "coflow-fb2010") {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let d = SinbadSpec::default();
    let disk_write_bps = if in_memory { None } else { d.disk_write_bps };
    let s = SinbadSpec { duration_s: dur, q_s: q, disk_write_bps, also_q_s: vec![0.0], ..d };
    let t0 = std::time::Instant::now();
    match sinbad_point(&s, &trace) {
        Ok(p) => {
            for (k, v) in &p.values {
                println!("{k:45} {v:.4}");
            }
            println!("wall_s {:.2}", t0.elapsed().as_secs_f64());
        }
        Err(e) => eprintln!("{e}"),
    }
}
