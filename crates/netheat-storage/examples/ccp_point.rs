//! Runs one CCP point: `cargo run --release -p netheat-storage --example ccp_point`.

use netheat_storage::experiment::{ccp_point, CcpSpec};

fn main() {
    let t0 = std::time::Instant::now();
    match ccp_point(&CcpSpec::default()) {
        Ok(v) => {
            for (k, x) in v {
                println!("{k:45} {x:.4}");
            }
            println!("wall_s {:.2}", t0.elapsed().as_secs_f64());
        }
        Err(e) => eprintln!("{e}"),
    }
}
