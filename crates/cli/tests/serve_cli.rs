//! `plexus serve` as a process: SIGTERM stops admitting jobs, lets running
//! ones go on for `--grace` seconds, cancels the rest, exits 0 and frees
//! the data directory's writer lock, so `plexus tx` works afterwards.
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_plexus");
const TIMEOUT: Duration = Duration::from_secs(30);

fn plexus(data: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .env_remove("PLEXUS_DATA")
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .output()
        .unwrap()
}

/// One HTTP/1.1 request over a fresh connection: status and JSON body.
fn http(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, Value) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|x| x.parse().ok())
        .unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// A running `plexus serve` on a free loopback port.
struct Served {
    child: Child,
    addr: SocketAddr,
    stderr: BufReader<std::process::ChildStderr>,
}

fn serve(data: &Path, extra: &[&str]) -> Served {
    let mut child = Command::new(BIN)
        .env_remove("PLEXUS_DATA")
        .arg("--data-dir")
        .arg(data)
        .args(["--threads", "2", "serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    // "plexus serve: http://127.0.0.1:PORT/ (data ..."
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    Served {
        child,
        addr,
        stderr,
    }
}

fn sigterm(child: &Child) {
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// Waits for the process to end (killing it past `TIMEOUT`).
fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            panic!("plexus serve did not exit after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until job `id` runs: the server gathers a burst of submissions
/// for a few milliseconds before it admits them (`--gather-quiet`).
fn wait_running(addr: SocketAddr, id: u64) {
    let start = Instant::now();
    loop {
        let (st, v) = http(addr, "GET", &format!("/api/jobs/{id}"), "");
        assert_eq!(st, 200, "{v}");
        match v["state"].as_str() {
            Some("running") => return,
            Some("queued") if start.elapsed() < TIMEOUT => {
                std::thread::sleep(Duration::from_millis(5))
            }
            _ => panic!("job {id} did not start running: {v}"),
        }
    }
}

fn generated(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    let out = plexus(
        &data,
        &[
            "generate",
            "kron",
            "--scale",
            "10",
            "--weighted",
            "--name",
            "k",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    data
}

const ENDLESS: &str =
    r#"{"graph": "k", "algorithm": "pagerank", "params": {"iterations": 100000000}}"#;

#[test]
fn sigterm_refuses_new_jobs_cancels_after_the_grace_and_frees_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = generated(dir.path());
    let mut s = serve(&data, &["--grace", "1.5"]);
    let (st, v) = http(s.addr, "POST", "/api/jobs", ENDLESS);
    assert_eq!(st, 202, "{v}");
    let id = v["id"].as_u64().unwrap();
    wait_running(s.addr, id);
    // Writers are sent to the server while it runs.
    let tx = dir.path().join("t.tx");
    std::fs::write(&tx, "add-vertex 999999\n").unwrap();
    let out = plexus(&data, &["tx", "k", tx.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("served by PID") && err.contains("use the server"),
        "{err}"
    );

    let t = Instant::now();
    sigterm(&s.child);
    // Stopping: health says so, and new jobs get 503 (clients can still
    // watch the running one).
    let mut refused = false;
    while t.elapsed() < Duration::from_secs(1) && !refused {
        let (_, h) = http(s.addr, "GET", "/api/health", "");
        if h["status"] == "stopping" {
            let (st, v) = http(
                s.addr,
                "POST",
                "/api/jobs",
                r#"{"graph": "k", "algorithm": "wcc"}"#,
            );
            assert_eq!(st, 503, "{v}");
            let (st, v) = http(s.addr, "GET", &format!("/api/jobs/{id}"), "");
            assert_eq!((st, v["state"].as_str()), (200, Some("running")), "{v}");
            refused = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(refused, "the server never said it was stopping");
    let status = wait_exit(&mut s.child);
    let took = t.elapsed();
    assert!(status.success(), "{status:?}");
    assert!(
        took >= Duration::from_millis(1400),
        "the grace was not given: {took:?}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
    let mut rest = String::new();
    s.stderr.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("plexus serve: stopped"), "{rest}");
    assert!(
        !rest.contains("panic") && !rest.contains("internal error"),
        "{rest}"
    );
    // The lock is released and the store intact: a transaction commits.
    let out = plexus(&data, &["tx", "k", tx.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = plexus(&data, &["info", "k", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sigterm_lets_a_job_that_ends_within_the_grace_finish() {
    let dir = tempfile::tempdir().unwrap();
    let data = generated(dir.path());
    let mut s = serve(&data, &["--grace", "30"]);
    let (st, v) = http(
        s.addr,
        "POST",
        "/api/jobs",
        r#"{"graph": "k", "algorithm": "pagerank", "params": {"iterations": 20000}}"#,
    );
    assert_eq!(st, 202, "{v}");
    let id = v["id"].as_u64().unwrap();
    wait_running(s.addr, id);
    // Watch it over Server-Sent Events, then ask the server to stop.
    let mut sse = TcpStream::connect(s.addr).unwrap();
    sse.set_read_timeout(Some(TIMEOUT)).unwrap();
    write!(
        sse,
        "GET /api/jobs/{id}/events HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut first = [0u8; 64];
    let n = sse.read(&mut first).unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"));
    let start = Instant::now();
    sigterm(&s.child);
    // The stream goes on to the job's end: its final status is done.
    let mut events = String::new();
    sse.read_to_string(&mut events).unwrap();
    let status = wait_exit(&mut s.child);
    assert!(status.success(), "{status:?}");
    assert!(
        start.elapsed() < Duration::from_secs(25),
        "it waited for the whole grace"
    );
    let last = events
        .split("event: status")
        .nth(1)
        .unwrap_or_else(|| panic!("no final status event in {events}"));
    assert!(last.contains("\"state\":\"done\""), "{last}");
}
