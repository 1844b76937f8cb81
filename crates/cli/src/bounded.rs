//! `plexus import … --memory SIZE` and `plexus generate … --memory SIZE`:
//! bounded-memory builds (`plexus_graph::bounded`), which write the same
//! store file as the in-memory build without holding the edges.
use std::time::Instant;

use plexus_graph::bounded::{self, Built};
use plexus_graph::generate::{GenOptions, Generator};
use plexus_graph::{ImportOptions, Provenance};

use crate::fmt::{bytes, secs, thousands};
use crate::graph_cmds::{check_name_free, now, Ctx, GenerateArgs, ImportArgs};
use crate::progress::Bar;

/// The summary line's kind of graph.
fn kind(b: &Built) -> String {
    format!(
        "{}, {}",
        if b.directed { "directed" } else { "undirected" },
        if b.weighted { "weighted" } else { "unweighted" }
    )
}

/// Imports `a.input` within `budget` bytes.
pub fn import(ctx: &Ctx, a: &ImportArgs, opts: &ImportOptions, budget: u64) -> anyhow::Result<()> {
    check_name_free(ctx, &a.name, a.force)?;
    bounded::check_options(budget, opts.order)?;
    bounded::interrupt_on_signals();
    let t = Instant::now();
    let bar = Bar::new(ctx.quiet);
    let built = bounded::save_bounded(
        &ctx.data,
        &a.name,
        a.force,
        |scratch, out| bounded::import_to_file(&a.input, opts, budget, scratch, out, &bar),
        |_| Provenance {
            source: a.input.display().to_string(),
            options: format!("{opts:?}, memory: {budget}"),
            build_seconds: t.elapsed().as_secs_f64(),
            created_unix: now(),
        },
    );
    bar.finish();
    let b = built?;
    println!(
        "imported {} as '{}': {} vertices, {} edges ({}) in {} within {}",
        a.input.display(),
        a.name,
        thousands(b.vertices),
        thousands(b.edges),
        kind(&b),
        secs(t.elapsed().as_secs_f64()),
        bytes(budget),
    );
    Ok(())
}

/// Generates `kind` within `budget` bytes: into the store, or with
/// `--out` as an edge list written as the edges are made.
pub fn generate(
    ctx: &Ctx,
    a: &GenerateArgs,
    kind: Generator,
    o: &GenOptions,
    budget: u64,
) -> anyhow::Result<()> {
    bounded::check_options(budget, o.order)?;
    let t = Instant::now();
    if let Some(out) = &a.out {
        crate::out::check(out, &[])?;
        let mut edges = 0u64;
        let mut n = 0;
        plexus_graph::export::write_atomically(out, |w| {
            let (vertices, _) = plexus_graph::generate::for_each_edge(kind, o, |u, v, wt| {
                edges += 1;
                match wt {
                    Some(x) => writeln!(w, "{u} {v} {x}"),
                    None => writeln!(w, "{u} {v}"),
                }
                .map_err(|e| plexus_graph::GraphError::InvalidArgument(e.to_string()))
            })
            .map_err(std::io::Error::other)?;
            n = vertices;
            Ok(())
        })?;
        let msg = format!(
            "wrote {} edges on {} vertex ids to {} in {}",
            thousands(edges),
            thousands(n as u64),
            out.display(),
            secs(t.elapsed().as_secs_f64())
        );
        if crate::out::is_stdout(out) {
            eprintln!("{msg}");
        } else {
            println!("{msg}");
        }
        return Ok(());
    }
    let name = a.name.clone().unwrap_or_else(|| match kind {
        Generator::Grid2d { width, height } => format!("grid{width}x{height}"),
        _ => format!("{}{}", a.kind, a.scale),
    });
    check_name_free(ctx, &name, a.force)?;
    bounded::interrupt_on_signals();
    let b = bounded::save_bounded(
        &ctx.data,
        &name,
        a.force,
        |scratch, out| bounded::generate_to_file(kind, o, budget, scratch, out),
        |_| Provenance {
            source: format!("generate {} {:?}", a.kind, o),
            options: format!("memory: {budget}"),
            build_seconds: t.elapsed().as_secs_f64(),
            created_unix: now(),
        },
    )?;
    println!(
        "generated '{name}': {} vertices, {} edges ({}) in {} within {}",
        thousands(b.vertices),
        thousands(b.edges),
        self::kind(&b),
        secs(t.elapsed().as_secs_f64()),
        bytes(budget),
    );
    Ok(())
}
