//! `plexus demo`: the first thing a newcomer runs.
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use plexus_graph::generate::{GenOptions, Generator};
use plexus_graph::{ImportOptions, NoProgress, OrderChoice, Provenance};

use crate::fmt::{bytes, secs, thousands};
use crate::graph_cmds::{degree_stats, Ctx};

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Kronecker scale of the generated graph (2^scale vertices, 16 edges each).
    #[arg(long, default_value_t = 18)]
    pub scale: u32,
    /// Directory of the shared real graphs (default: $PLEXUS_SHARED_DATA, ../shared/data or ./shared/data).
    #[arg(long)]
    pub shared_data: Option<PathBuf>,
}

/// Finds the shared data directory, if any.
pub fn shared_data(explicit: Option<PathBuf>) -> Option<PathBuf> {
    explicit
        .or_else(|| std::env::var_os("PLEXUS_SHARED_DATA").map(PathBuf::from))
        .into_iter()
        .chain([
            PathBuf::from("../shared/data"),
            PathBuf::from("shared/data"),
        ])
        .find(|p| p.is_dir())
}

pub fn demo(ctx: &Ctx, a: DemoArgs) -> anyhow::Result<()> {
    let total = Instant::now();
    println!("Plexus demo: data directory {}", ctx.data.root().display());
    let mut rows: Vec<(String, String, u64, u64, f64, f64, u64)> = Vec::new();

    let t = Instant::now();
    let o = GenOptions {
        scale: a.scale,
        edge_factor: 16,
        max_weight: Some(255),
        // As `plexus generate` and `plexus import` do by default.
        order: OrderChoice::Auto,
        ..Default::default()
    };
    let g = plexus_graph::generate::generate(Generator::Kron, &o)?;
    let build = t.elapsed().as_secs_f64();
    let name = format!("demo-kron{}", a.scale);
    let t = Instant::now();
    ctx.data.save(
        &name,
        &g,
        &Provenance {
            source: format!("kron scale {}", a.scale),
            ..Default::default()
        },
        true,
    )?;
    rows.push((
        name.clone(),
        "generated Kronecker (Graph500 A,B,C; weights 1-255)".into(),
        g.num_vertices() as u64,
        g.num_edges(),
        build,
        t.elapsed().as_secs_f64(),
        plexus_graph::store::dir_size(&ctx.data.graph_dir(&name)),
    ));

    match shared_data(a.shared_data.clone()) {
        Some(dir) => {
            let file = dir.join("email-Enron.el.gz");
            if file.is_file() {
                let t = Instant::now();
                let opts = ImportOptions {
                    directed: Some(false),
                    order: OrderChoice::Auto,
                    ..Default::default()
                };
                let g = plexus_graph::import_file(&file, &opts, &NoProgress)?;
                let build = t.elapsed().as_secs_f64();
                let t = Instant::now();
                ctx.data.save(
                    "demo-email-Enron",
                    &g,
                    &Provenance {
                        source: file.display().to_string(),
                        ..Default::default()
                    },
                    true,
                )?;
                rows.push((
                    "demo-email-Enron".into(),
                    format!("imported {} (undirected)", file.display()),
                    g.num_vertices() as u64,
                    g.num_edges(),
                    build,
                    t.elapsed().as_secs_f64(),
                    plexus_graph::store::dir_size(&ctx.data.graph_dir("demo-email-Enron")),
                ));
            } else {
                println!(
                    "(no email-Enron.el.gz in {}: skipping the real graph)",
                    dir.display()
                );
            }
        }
        None => println!(
            "(no shared data directory found: skipping the real graph; pass --shared-data DIR)"
        ),
    }

    println!();
    println!(
        "{:<20} {:>12} {:>14} {:>10} {:>10} {:>10}  source",
        "graph", "vertices", "edges", "build", "write", "on disk"
    );
    for (name, src, n, m, b, w, d) in &rows {
        println!(
            "{:<20} {:>12} {:>14} {:>10} {:>10} {:>10}  {}",
            name,
            thousands(*n),
            thousands(*m),
            secs(*b),
            secs(*w),
            bytes(*d),
            src
        );
    }
    println!();
    for (name, ..) in &rows {
        let t = Instant::now();
        let g = ctx.data.open(name)?;
        let open = t.elapsed().as_secs_f64();
        let st = degree_stats(&g);
        println!(
            "{name}: opened in {} (memory-mapped), degree min {} max {} mean {:.1}, {} chunks",
            secs(open),
            st.min,
            st.max,
            st.mean,
            g.chunks().len()
        );
    }
    println!();
    println!("The algorithm suite, each result verified (--verify):");
    let mut all_ok = true;
    for (gname, ..) in &rows {
        all_ok &= run_suite(ctx, gname)?;
    }
    println!();
    println!(
        "done in {}. Try: plexus list; plexus info {name}; plexus run pagerank {name}",
        secs(total.elapsed().as_secs_f64())
    );
    if !all_ok {
        anyhow::bail!("a verification failed (see the table above)");
    }
    Ok(())
}

/// Runs every algorithm of the registry on stored graph `gname` with
/// `--verify`, printing one table row each; whether every result verified.
fn run_suite(ctx: &Ctx, gname: &str) -> anyhow::Result<bool> {
    let mut all_ok = true;
    let g = ctx.data.open(gname)?;
    println!();
    println!("{gname}");
    println!(
        "  {:<12} {:>10}  {:<9} summary",
        "algorithm", "time", "verified"
    );
    for entry in plexus_engine::registry::ALGORITHMS {
        let algo = &entry.name;
        if entry.needs_weights && !g.is_weighted() {
            println!(
                "  {:<12} {:>10}  {:<9} (skipped: unweighted graph)",
                algo, "-", "-"
            );
            continue;
        }
        let args = crate::run::RunArgs::for_demo(algo, gname);
        let p = crate::run::resolve(&g, &args)?;
        let o = crate::run::execute(&g, &p, true)?;
        let ok = matches!(o.verified, Some(Ok(())));
        all_ok &= ok;
        let summary: Vec<String> = o
            .summary
            .iter()
            .filter(|(k, _)| {
                // Long lists, the timings of untimed extras and PageRank's
                // run details (last change, method, precision) stay out
                // of the table.
                !matches!(
                    k.as_str(),
                    "top" | "size_histogram" | "core_histogram" | "change" | "method" | "precision"
                ) && !k.ends_with("_seconds")
            })
            .map(|(k, v)| format!("{k} {}", crate::run::summarize(v)))
            .collect();
        println!(
            "  {:<12} {:>10}  {:<9} {}",
            algo,
            secs(o.compute_seconds),
            if ok { "yes" } else { "NO" },
            summary.join(", ")
        );
    }
    Ok(all_ok)
}
