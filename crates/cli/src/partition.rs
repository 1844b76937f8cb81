//! `plexus partition GRAPH --ranks N [--out DIR]`: cuts a stored graph into
//! the distributed executor's N parts (Gemini's balanced master ranges)
//! and writes one file per rank (`DIR/rank-R.plxp`, `plexus-dist`'s part
//! files), so that `mpirun -np N plexus run ALGO GRAPH --executor dist
//! --parts DIR` runs on hosts that do not share a disk: each host needs
//! only its own rank's file under DIR. The parts equal those the ranks
//! build from a shared store.
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use plexus_dist::file;
use plexus_dist::part::{Cuts, Part};
use plexus_dist::view::DistView;

use crate::fmt::{secs, thousands};
use crate::graph_cmds::Ctx;

#[derive(Args, Debug)]
pub struct PartitionArgs {
    /// The stored graph.
    pub graph: String,
    /// The number of ranks (parts) to cut it into.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub ranks: u32,
    /// The directory to write `rank-R.plxp` into (created; default ./GRAPH.parts).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Writes the parts.
pub fn partition(ctx: &Ctx, a: PartitionArgs) -> anyhow::Result<()> {
    let t = Instant::now();
    let g = crate::live::open_latest(&ctx.data, &a.graph)?;
    if g.num_vertices() == 0 {
        bail!("graph '{}' has no vertices", a.graph);
    }
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.parts", a.graph)));
    if dir.exists() && !dir.is_dir() {
        bail!("--out {}: not a directory", dir.display());
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let p = a.ranks as usize;
    // Parts for another rank count left in DIR would be mixed up with
    // these: refuse rather than delete what the user may still need.
    if file::path(&dir, p).exists() {
        bail!(
            "{} holds {} from a partition into more ranks; remove it or choose another --out",
            dir.display(),
            file::path(&dir, p).display()
        );
    }
    let view = DistView::of(&g)?;
    let cuts = Cuts::balanced(&view.total_degrees(), p);
    let mut lines = Vec::with_capacity(p);
    for r in 0..p {
        let part = Part::from_slices(&g, cuts.clone(), r);
        let ids = (r == 0).then(|| g.ids());
        let path = file::path(&dir, r);
        file::write(&path, &a.graph, &view, &part, ids)?;
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        lines.push(format!(
            "  rank {r}: {} masters, {} arcs stored, {} bytes",
            thousands(part.masters().len() as u64),
            thousands(part.num_entries()),
            thousands(size)
        ));
    }
    println!(
        "partitioned '{}' ({} vertices, {} arcs) into {p} parts in {} ({}):\n{}",
        a.graph,
        thousands(g.num_vertices() as u64),
        thousands(g.num_arcs()),
        dir.display(),
        secs(t.elapsed().as_secs_f64()),
        lines.join("\n")
    );
    Ok(())
}
