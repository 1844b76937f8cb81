//! `plexus mix`: writes a JOBS.toml job mix like GraphM's evaluation to
//! stdout: WCC, PageRank with damping drawn from 0.1–0.85, SSSP and BFS
//! from random roots, CDLP label propagation; submitted all at once or with
//! Poisson arrivals; fully determined by the seed.
use anyhow::{bail, Context};
use clap::Args;
use plexus_graph::VertexId;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::graph_cmds::Ctx;

/// Algorithms a mix may contain, in the order the round-robin uses: the
/// job kinds of the registry ([`plexus_jobs::spec::job_algorithms`]).
pub fn mix_algorithms() -> Vec<&'static str> {
    plexus_jobs::spec::job_algorithms()
}

/// Most jobs in one mix (the file is built in memory: about 100 B a job).
pub const MAX_JOBS: usize = 10_000_000;

/// Default PageRank iterations in a mix (fixed, as GraphM's evaluation runs them).
pub const DEFAULT_PR_ITERATIONS: usize = 20;

#[derive(Args, Debug)]
pub struct MixArgs {
    /// The stored graph the jobs run on.
    #[arg(long)]
    pub graph: String,
    /// Number of jobs.
    #[arg(long)]
    pub jobs: usize,
    /// Random seed (roots, dampings, arrival times, order).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Poisson arrivals at this rate (jobs per second); default: all at time 0.
    #[arg(long)]
    pub poisson: Option<f64>,
    /// Algorithms to mix, comma-separated (bfs, sssp, pagerank, wcc, cdlp);
    /// jobs take them in turn (counts differ by at most one), in an order
    /// shuffled by the seed. SSSP is left out on unweighted graphs.
    #[arg(long, value_delimiter = ',', default_values_t = mix_algorithms().into_iter().map(String::from))]
    pub algos: Vec<String>,
    /// PageRank iterations (fixed count).
    #[arg(long, default_value_t = DEFAULT_PR_ITERATIONS)]
    pub pr_iterations: usize,
    /// PageRank contribution storage: double (default, not written) or
    /// single (f32, written as `precision = "single"`).
    #[arg(long, default_value = "double", value_parser = ["double", "single"])]
    pub pr_precision: String,
    /// CDLP iterations.
    #[arg(long, default_value_t = 10)]
    pub cdlp_iterations: usize,
}

pub fn mix(ctx: &Ctx, a: MixArgs) -> anyhow::Result<()> {
    if a.jobs == 0 || a.jobs > MAX_JOBS {
        bail!("--jobs must be 1 to {MAX_JOBS}, got {}", a.jobs);
    }
    if let Some(l) = a.poisson {
        if !(l > 0.0 && l.is_finite()) {
            bail!("--poisson must be a positive rate in jobs per second, got {l}");
        }
    }
    for name in &a.algos {
        if !mix_algorithms().contains(&name.as_str()) {
            bail!(
                "unknown algorithm '{name}' in --algos (expected some of: {})",
                mix_algorithms().join(", ")
            );
        }
    }
    let g = crate::live::open_latest(&ctx.data, &a.graph)
        .with_context(|| format!("cannot open graph '{}'", a.graph))?;
    let n = g.num_vertices();
    if n == 0 {
        bail!("graph '{}' has no vertices", a.graph);
    }
    let mut algos: Vec<&str> = a.algos.iter().map(String::as_str).collect();
    let mut notes = Vec::new();
    if !g.is_weighted() && algos.contains(&"sssp") {
        algos.retain(|&x| x != "sssp");
        notes.push(format!(
            "# sssp left out: graph '{}' is unweighted (import or generate with --weighted)",
            a.graph
        ));
    }
    if algos.is_empty() {
        bail!("no algorithm left to mix");
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(a.seed);
    // Roots: vertices with out-edges, so traversals do some work.
    let root = |rng: &mut Xoshiro256PlusPlus| -> String {
        for _ in 0..1000 {
            let v = rng.gen_range(0..n) as VertexId;
            if g.out_degree(v) > 0 {
                return g.ids().external_string(v);
            }
        }
        g.ids().external_string(rng.gen_range(0..n) as VertexId)
    };
    let mut out = String::new();
    out.push_str(&format!(
        "# plexus mix --graph {} --jobs {} --seed {}{}\n",
        a.graph,
        a.jobs,
        a.seed,
        a.poisson
            .map(|l| format!(" --poisson {l}"))
            .unwrap_or_default()
    ));
    for note in &notes {
        out.push_str(note);
        out.push('\n');
    }
    out.push_str(&format!("graph = {}\n", toml_str(&a.graph)));
    // Algorithms in turn, then the order shuffled (seeded).
    let mut kinds: Vec<&str> = (0..a.jobs).map(|i| algos[i % algos.len()]).collect();
    for i in (1..kinds.len()).rev() {
        let j = rng.gen_range(0..=i);
        kinds.swap(i, j);
    }
    let mut at = 0.0f64;
    for (i, kind) in kinds.iter().enumerate() {
        if let Some(l) = a.poisson {
            if i > 0 {
                // Exponential inter-arrival time with rate λ.
                let u: f64 = rng.gen_range(f64::EPSILON..1.0);
                at += -u.ln() / l;
            }
        }
        out.push_str("\n[[job]]\n");
        out.push_str(&format!("name = \"{kind}-{}\"\n", i + 1));
        out.push_str(&format!("algorithm = \"{kind}\"\n"));
        match *kind {
            "pagerank" => {
                let d = rng.gen_range(10..=85) as f64 / 100.0;
                out.push_str(&format!(
                    "damping = {d}\niterations = {}\n",
                    a.pr_iterations
                ));
                if a.pr_precision == "single" {
                    out.push_str("precision = \"single\"\n");
                }
            }
            "bfs" | "sssp" => {
                out.push_str(&format!("source = {}\n", toml_str(&root(&mut rng))));
            }
            "cdlp" => out.push_str(&format!("iterations = {}\n", a.cdlp_iterations)),
            _ => {}
        }
        if a.poisson.is_some() {
            out.push_str(&format!("at = {at:.3}\n"));
        }
    }
    print!("{out}");
    Ok(())
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => o.push_str(&format!("\\u{:04X}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}
