//! Prints what LLC detection sees: sysfs, the pointer-chase curve and the verdict.
fn main() {
    println!("sysfs: {:?}", plexus_jobs::cache::sysfs_llc_bytes());
    for (bytes, ns) in plexus_jobs::cache::latency_curve(64 << 20) {
        println!("{:>8} KiB {:>7.1} ns", bytes >> 10, ns);
    }
    println!("{:?}", plexus_jobs::cache::detect_llc(None));
}
