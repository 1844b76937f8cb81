//! What the engine's measurement examples share.

use plexus_graph::store::DataDir;
use plexus_graph::Graph;

/// The command line's arguments (the program's name first) and the graph
/// its first two name (`DATA_DIR GRAPH`), opened from the store. Prints
/// `usage` (everything after the program's name) or the store's error and
/// exits with status 2 when that fails.
pub fn stored_graph_from_args(usage: &str) -> (Vec<String>, Graph) {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        let program = args.first().map_or("example", String::as_str);
        eprintln!("usage: {program} {usage}");
        std::process::exit(2);
    }
    match DataDir::new(&args[1]).open(&args[2]) {
        Ok(g) => (args, g),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
