//! `plexus`: the command-line face of the Plexus graph engine.
//!
//! Every failure prints one line `error: …` on stderr and exits with status
//! 2 (a usage error prints clap's whole message: the line, the usage and
//! any suggestion); nothing is half-written (outputs go to temporary files
//! renamed on success). A closed standard output (`plexus mix … | head`)
//! ends the command quietly with status 0.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod algorithms;
mod batch;
mod bounded;
mod demo;
mod dist;
mod fmt;
mod graph_cmds;
mod live;
mod mix;
mod ooc;
mod out;
mod partition;
mod probe;
mod profile;
mod progress;
mod query;
mod run;
mod serve;
mod simulate;

/// Plexus: a graph analytics engine. Stores graphs under a data directory
/// and runs analytics on them.
#[derive(Parser, Debug)]
#[command(
    name = "plexus",
    version,
    long_about = None,
    propagate_version = true,
    arg_required_else_help = true
)]
pub struct Cli {
    /// Data directory holding the stored graphs.
    #[arg(
        long,
        global = true,
        env = "PLEXUS_DATA",
        default_value = "./plexus-data"
    )]
    pub data_dir: PathBuf,
    /// Worker threads (0 = all cores; at most 8 per CPU). One per allowed CPU pins each to its
    /// own CPU; any other count runs every worker on all the allowed CPUs.
    #[arg(long, global = true, default_value_t = 0)]
    pub threads: usize,
    /// No progress bars.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Import a file (edge list, Matrix Market, CSV, Graphalytics) as a stored graph.
    Import(graph_cmds::ImportArgs),
    /// Generate a synthetic graph (kron, rmat, uniform, grid2d) into the store or a file.
    Generate(graph_cmds::GenerateArgs),
    /// Show a stored graph's counts, degrees, layout and size; --check verifies it.
    Info(graph_cmds::InfoArgs),
    /// Write a stored graph to an edge list, CSV or Graphalytics files.
    Export(graph_cmds::ExportArgs),
    /// List the stored graphs.
    List(graph_cmds::ListArgs),
    /// Remove a stored graph.
    Remove(graph_cmds::RemoveArgs),
    /// Run an algorithm on a stored graph (`plexus algorithms` lists them).
    Run(run::RunArgs),
    /// Point queries on a stored graph: neighbors, degree, has-edge, khop, path.
    Query(query::QueryArgs),
    /// List the algorithms with their parameters and the executors that run them.
    Algorithms(algorithms::AlgorithmsArgs),
    /// Generate and import sample graphs and show what Plexus does with them (under a minute).
    Demo(demo::DemoArgs),
    /// Measure the machine's memory bandwidth (STREAM copy, scale, add, triad) and store it.
    Probe(probe::ProbeArgs),
    /// Run a job mix (JOBS.toml) one after another, side by side, or through one shared scan.
    Batch(batch::BatchArgs),
    /// Write a random job mix (JOBS.toml) for a stored graph to stdout.
    Mix(mix::MixArgs),
    /// Profile each job algorithm on a stored graph at 1..=cores threads (time, bytes, bandwidth).
    Profile(profile::ProfileArgs),
    /// Replay a job stream through the schedulers on a modelled machine (MACHINE.toml).
    Simulate(simulate::SimulateArgs),
    /// Apply one transaction (a file of add-edge/remove-edge/... lines) to a stored graph.
    Tx(live::TxArgs),
    /// Show a graph's change log; --check verifies it, --repair cuts a damaged tail.
    Log(live::LogArgs),
    /// Merge a graph's committed changes into a new base (its log shrinks, layout restored).
    Compact(live::CompactArgs),
    /// Cut a stored graph into per-rank part files for `--executor dist --parts DIR`.
    Partition(partition::PartitionArgs),
    /// Serve the data directory over HTTP: a job server with live progress and a web page.
    Serve(serve::ServeArgs),
}

/// Most worker threads per CPU: more only adds start-up time and memory.
const MAX_THREADS_PER_CPU: usize = 8;

/// Whether a panic message is the standard library's report of a write to
/// a closed standard output.
fn is_closed_stdout(msg: &str) -> bool {
    msg.contains("failed printing to stdout") && msg.contains("Broken pipe")
}

fn main() -> ExitCode {
    // A bug must still end in one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        if is_closed_stdout(&msg) {
            std::process::exit(0);
        }
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "error: internal error: {msg}{at} (if a stored graph is involved, `plexus info NAME --check` tells whether it is corrupt; otherwise please report this bug)"
        );
        std::process::exit(2);
    }));
    let mut cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    cli.threads = capped_threads(cli.threads);
    let threads = cli.threads;
    // The command runs on a pool of its own on the process's CPUs: one CPU
    // per worker when it has one worker per CPU, else every worker on all
    // of them (`plexus_engine::affinity::PoolPinning`). Rayon's global
    // pool, which serves parallel work started outside any pool (from a
    // thread of a job manager, say), is built here too, on every CPU of
    // the process: built lazily, it would take the affinity of the thread
    // that first used it. It stays apart from the command's pool, whose
    // workers block on work the global pool may have to do.
    let _ = plexus_jobs::sched::numa::PoolPinning::new(0, None)
        .builder()
        .build_global();
    let pinning = plexus_jobs::sched::numa::PoolPinning::new(threads, None);
    let result = match pinning.builder().build() {
        Ok(pool) => pool.install(|| run(cli)),
        Err(e) => Err(anyhow::anyhow!("cannot start {threads} threads: {e}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_text(&e));
            ExitCode::from(2)
        }
    }
}

/// `--threads`, capped at [`MAX_THREADS_PER_CPU`] per CPU with a note.
fn capped_threads(threads: usize) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cap = MAX_THREADS_PER_CPU * cpus;
    if threads > cap {
        eprintln!(
            "note: --threads {threads} is capped at {cap} ({MAX_THREADS_PER_CPU} per CPU, {cpus} CPUs)"
        );
        cap
    } else {
        threads
    }
}

/// Whether `e` comes from writing to a closed pipe.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes on one line, each cause once: a cause whose
/// text the line already holds (an I/O error a message quotes) is not
/// repeated.
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let c = cause.to_string();
        if text.contains(&c) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&c);
    }
    text
}

/// Help and version go to stdout as clap prints them; a usage error is
/// clap's whole message (what is wrong, the usage, any "did you mean" or
/// possible values) on stderr, and exit status 2; bare `plexus` prints the
/// help on stderr, with status 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let _ = e.print();
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => ExitCode::SUCCESS,
        _ => ExitCode::from(2),
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let ctx = graph_cmds::Ctx {
        data: plexus_graph::DataDir::new(&cli.data_dir),
        quiet: cli.quiet,
    };
    match cli.command {
        Command::Import(a) => graph_cmds::import(&ctx, a),
        Command::Generate(a) => graph_cmds::generate(&ctx, a),
        Command::Info(a) => graph_cmds::info(&ctx, a),
        Command::Export(a) => graph_cmds::export(&ctx, a),
        Command::List(a) => graph_cmds::list(&ctx, a),
        Command::Remove(a) => graph_cmds::remove(&ctx, a),
        Command::Run(a) => run::run(&ctx, a),
        Command::Query(a) => query::query(&ctx, a),
        Command::Algorithms(a) => algorithms::run(&a),
        Command::Demo(a) => demo::demo(&ctx, a),
        Command::Probe(a) => probe::probe(&ctx, a),
        Command::Batch(a) => batch::batch(&ctx, cli.threads, a),
        Command::Mix(a) => mix::mix(&ctx, a),
        Command::Profile(a) => profile::profile(&ctx, a),
        Command::Simulate(a) => simulate::simulate(&ctx, a),
        Command::Tx(a) => live::tx(&ctx, a),
        Command::Log(a) => live::log(&ctx, a),
        Command::Compact(a) => live::compact(&ctx, a),
        Command::Partition(a) => partition::partition(&ctx, a),
        Command::Serve(a) => serve::serve(&ctx, cli.threads, a),
    }
}
