//! The server end to end: each test starts `plexus serve` (the library) on
//! a loopback port chosen by the system and talks to it with a real HTTP
//! client. Every client call has a timeout.
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use plexus_graph::{BuildOptions, DataDir, Graph, Provenance};
use plexus_jobs::request::{self, Column, RunRequest};
use plexus_server::{Server, ServerConfig};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(20);

/// A weighted undirected graph on `n` vertices: a ring with chords, ids
/// 0..n (identity), so jobs are quick and every vertex is reached.
fn ring(n: u32) -> Graph {
    let mut edges = Vec::new();
    for v in 0..n {
        edges.push((v, (v + 1) % n, 1.0 + (v % 7) as f64));
        if v % 3 == 0 {
            edges.push((v, (v * 7 + 11) % n, 2.0));
        }
    }
    Graph::from_weighted_edges(n as usize, &edges, &BuildOptions::undirected()).unwrap()
}

fn save(data: &Path, name: &str, g: &Graph) {
    DataDir::new(data)
        .save(name, g, &Provenance::default(), false)
        .unwrap();
}

struct Running {
    addr: SocketAddr,
    client: Client,
    token: Option<String>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
    data: std::path::PathBuf,
}

impl Running {
    fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
    fn req(&self, m: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let r = self.client.request(m, self.url(path)).timeout(TIMEOUT);
        match &self.token {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    }
    async fn get(&self, path: &str) -> (StatusCode, Value) {
        let r = self.req(reqwest::Method::GET, path).send().await.unwrap();
        let s = r.status();
        (s, r.json().await.unwrap_or(Value::Null))
    }
    async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let r = self
            .req(reqwest::Method::POST, path)
            .json(&body)
            .send()
            .await
            .unwrap();
        let s = r.status();
        (s, r.json().await.unwrap_or(Value::Null))
    }
    async fn delete(&self, path: &str) -> (StatusCode, Value) {
        let r = self
            .req(reqwest::Method::DELETE, path)
            .send()
            .await
            .unwrap();
        let s = r.status();
        (s, r.json().await.unwrap_or(Value::Null))
    }
    /// Polls job `id` until it ends; its final status.
    async fn wait(&self, id: u64) -> Value {
        let start = Instant::now();
        loop {
            let (s, v) = self.get(&format!("/api/jobs/{id}")).await;
            assert_eq!(s, StatusCode::OK, "{v}");
            if ["done", "failed", "cancelled"].contains(&v["state"].as_str().unwrap_or("")) {
                return v;
            }
            assert!(start.elapsed() < TIMEOUT, "job {id} did not end: {v}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    async fn submit(&self, body: Value) -> u64 {
        let (s, v) = self.post("/api/jobs", body).await;
        assert_eq!(s, StatusCode::ACCEPTED, "{v}");
        v["id"].as_u64().unwrap()
    }
    /// Stops the server (as SIGTERM does) and waits for it to return; the
    /// directory holding the data directory, kept until dropped.
    async fn stop(mut self) -> tempfile::TempDir {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        tokio::time::timeout(TIMEOUT, &mut self.done)
            .await
            .expect("the server stops")
            .unwrap();
        self._dir
    }
}

async fn start_with(cfg_of: impl FnOnce(&Path) -> ServerConfig) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    save(&data, "ring", &ring(3000));
    let mut cfg = cfg_of(dir.path());
    cfg.data = data.clone();
    cfg.bind = SocketAddr::from(([127, 0, 0, 1], 0));
    cfg.threads = 2;
    let token = cfg.token.clone();
    let server = Server::bind(cfg).await.unwrap();
    let addr = server.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(async move {
        server
            .run(async move {
                let _ = rx.await;
            })
            .await
            .unwrap();
    });
    Running {
        addr,
        client: Client::new(),
        token,
        stop: Some(tx),
        done,
        _dir: dir,
        data,
    }
}

async fn start() -> Running {
    start_with(|d| ServerConfig::new(d.join("data"))).await
}

/// A PageRank job that runs until cancelled (a fixed, huge iteration count).
fn endless(graph: &str) -> Value {
    json!({"graph": graph, "algorithm": "pagerank", "params": {"iterations": 100_000_000}})
}

/// The per-vertex result of `algorithm` as `plexus run` computes it.
fn run_locally(g: &Graph, algorithm: &str, params: &[(&str, &str)]) -> Vec<(&'static str, Column)> {
    let mut r = RunRequest::new(algorithm, "ring");
    r.per_vertex = true;
    for (k, v) in params {
        match *k {
            "source" => r.source = Some(v.to_string()),
            "iterations" => r.iterations = v.parse().ok(),
            _ => panic!("{k}"),
        }
    }
    let p = request::resolve(g, &r).unwrap();
    request::execute(g, &p, false).unwrap().columns
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_graphs_info_page_and_openapi() {
    let s = start().await;
    let (st, v) = s.get("/api/health").await;
    assert_eq!((st, v["status"].as_str()), (StatusCode::OK, Some("ok")));
    let (st, v) = s.get("/api/graphs").await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(v["graphs"][0]["name"], "ring");
    assert_eq!(v["graphs"][0]["vertices"], 3000);
    let (st, v) = s.get("/api/graphs/ring").await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(v["vertices"], 3000);
    assert_eq!(v["weights"], "integer");
    assert!(v["out_degree"]["histogram"]
        .as_array()
        .is_some_and(|h| !h.is_empty()));
    let (st, v) = s.get("/api/graphs/nope").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert!(v["error"].as_str().unwrap().contains("nope"));
    let (st, _) = s.get("/api/graphs/.hidden").await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    let (st, v) = s.get("/api/nothing-here").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert!(v["error"].is_string());
    let (st, v) = s.get("/openapi.json").await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(v["openapi"], "3.0.3");
    assert!(v["paths"]["/api/jobs/{id}/events"].is_object());
    let page = s.req(reqwest::Method::GET, "/").send().await.unwrap();
    assert!(page
        .text()
        .await
        .unwrap()
        .contains("<title>plexus serve</title>"));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_match_plexus_run_in_every_format() {
    let s = start().await;
    let g = DataDir::new(&s.data).open("ring").unwrap();
    // bfs goes through the shared job manager, triangles through a worker.
    let bfs = s
        .submit(json!({"graph": "ring", "algorithm": "bfs", "params": {"source": 5}}))
        .await;
    let tri = s
        .submit(json!({"graph": "ring", "algorithm": "triangles"}))
        .await;
    let v = s.wait(bfs).await;
    assert_eq!(
        (v["state"].as_str(), v["route"].as_str()),
        (Some("done"), Some("shared"))
    );
    assert!(
        v.get("digest").is_none(),
        "a plain status has no digest: {v}"
    );
    let (st, v) = s.get(&format!("/api/jobs/{bfs}?digest=true")).await;
    assert_eq!(st, StatusCode::OK);
    assert!(v["digest"]["histogram"].is_array(), "{v}");
    let (st, v) = s.get(&format!("/api/jobs/{bfs}?digest=maybe")).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(v["error"].as_str().unwrap().contains("digest"), "{v}");
    let v = s.wait(tri).await;
    assert_eq!(
        (v["state"].as_str(), v["route"].as_str()),
        (Some("done"), Some("worker"))
    );

    let want = run_locally(&g, "bfs", &[("source", "5")]);
    let Column::Depth(depth) = &want[0].1 else {
        panic!()
    };
    // JSON.
    let (st, j) = s.get(&format!("/api/jobs/{bfs}/result?format=json")).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(j["columns"], json!(["id", "depth", "parent"]));
    let rows = j["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3000);
    for r in rows {
        let id = r[0].as_u64().unwrap() as usize;
        assert_eq!(r[1].as_u64(), Some(depth[id] as u64), "vertex {id}");
    }
    // CSV, as `plexus run --out x.csv` writes it.
    let csv = s
        .req(
            reqwest::Method::GET,
            &format!("/api/jobs/{tri}/result?format=csv"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
    let text = csv.text().await.unwrap();
    let want = run_locally(&g, "triangles", &[]);
    let Column::Int(t) = &want[0].1 else { panic!() };
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("id,triangles"));
    for (v, line) in lines.enumerate() {
        assert_eq!(line, format!("{v},{}", t[v]));
    }
    // Parquet and Arrow, read back with the arrow crates.
    let body = s
        .req(
            reqwest::Method::GET,
            &format!("/api/jobs/{bfs}/result?format=parquet"),
        )
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(body)
        .unwrap()
        .build()
        .unwrap();
    let mut seen = 0;
    for b in reader {
        let b = b.unwrap();
        let ids = b
            .column(0)
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .unwrap();
        let d = b
            .column(1)
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .unwrap();
        for i in 0..b.num_rows() {
            assert_eq!(d.value(i), depth[ids.value(i) as usize] as i64);
        }
        seen += b.num_rows();
    }
    assert_eq!(seen, 3000);
    let body = s
        .req(
            reqwest::Method::GET,
            &format!("/api/jobs/{tri}/result?format=arrow"),
        )
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let reader =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(body), None).unwrap();
    let mut seen = 0;
    for b in reader {
        let b = b.unwrap();
        let tc = b
            .column(1)
            .as_any()
            .downcast_ref::<arrow_array::UInt64Array>()
            .unwrap();
        for i in 0..b.num_rows() {
            assert_eq!(tc.value(i), t[seen + i]);
        }
        seen += b.num_rows();
    }
    assert_eq!(seen, 3000);
    let (st, v) = s.get(&format!("/api/jobs/{bfs}/result?format=xml")).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(v["error"].as_str().unwrap().contains("xml"));
    // A finished job is forgotten by DELETE.
    let (st, _) = s.delete(&format!("/api/jobs/{bfs}")).await;
    assert_eq!(st, StatusCode::OK);
    let (st, _) = s.get(&format!("/api/jobs/{bfs}")).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_one_line_4xx_errors() {
    let s = start_with(|d| {
        let mut c = ServerConfig::new(d.join("data"));
        c.max_body_bytes = 4096;
        c
    })
    .await;
    let cases = [
        (
            json!({"graph": "ring", "algorithm": "pagerank", "params": {"damping": 2}}),
            400,
            "damping",
        ),
        (
            json!({"graph": "ring", "algorithm": "pagerank", "params": {"dampening": 0.5}}),
            400,
            "dampening",
        ),
        (
            json!({"graph": "ring", "algorithm": "bfs", "params": {"source": "x"}}),
            400,
            "source",
        ),
        (
            json!({"graph": "ring", "algorithm": "nosuch"}),
            400,
            "unknown algorithm",
        ),
        (json!({"graph": "nope", "algorithm": "wcc"}), 404, "nope"),
        (
            json!({"graph": "../x", "algorithm": "wcc"}),
            400,
            "invalid graph name",
        ),
        (json!({"algorithm": "wcc"}), 400, "graph"),
        (
            json!({"graph": "ring", "algorithm": "wcc", "colour": 1}),
            400,
            "colour",
        ),
        (
            json!({"graph": "ring", "algorithm": "wcc", "deadline_seconds": -1}),
            400,
            "deadline_seconds",
        ),
    ];
    for (body, status, word) in cases {
        let (st, v) = s.post("/api/jobs", body.clone()).await;
        assert_eq!(st.as_u16(), status, "{body}: {v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains(word) && !e.contains('\n'), "{body}: {e}");
    }
    let r = s
        .req(reqwest::Method::POST, "/api/jobs")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let big = json!({"graph": "ring", "algorithm": "wcc", "params": {"source": "x".repeat(5000)}});
    let (st, v) = s.post("/api/jobs", big).await;
    assert_eq!(st, StatusCode::PAYLOAD_TOO_LARGE, "{v}");
    let (st, _) = s.get("/api/jobs/12345").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    let (st, _) = s.get("/api/jobs/abc").await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    let (st, v) = s
        .post(
            "/api/estimate",
            json!({"graph": "ring", "algorithm": "sssp"}),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{v}");
    assert_eq!(v["state_bytes"].as_u64(), Some(28 * 3000));
    assert!(v["seconds"].as_f64().is_some_and(|x| x > 0.0));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_are_progress_then_one_final_status() {
    let s = start().await;
    let id = s
        .submit(json!({"graph": "ring", "algorithm": "pagerank", "params": {"iterations": 3000}}))
        .await;
    let mut r = s
        .req(reqwest::Method::GET, &format!("/api/jobs/{id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut text = String::new();
    while let Some(chunk) = tokio::time::timeout(TIMEOUT, r.chunk())
        .await
        .unwrap()
        .unwrap()
    {
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    let events: Vec<(String, Value)> = text
        .split("\n\n")
        .filter_map(|block| {
            let ev = block.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((ev.to_string(), serde_json::from_str(data).unwrap()))
        })
        .collect();
    let (last, rest) = events.split_last().unwrap();
    assert_eq!(last.0, "status");
    assert_eq!(last.1["state"], "done");
    assert_eq!(last.1["summary"]["iterations"], 3000);
    let mut step = 0;
    for (ev, v) in rest {
        assert_eq!(ev, "progress");
        assert!(
            ["queued", "running"].contains(&v["state"].as_str().unwrap()),
            "{v}"
        );
        let now = v["superstep"].as_u64().unwrap();
        assert!(now >= step, "supersteps go forward");
        step = now;
    }
    assert!(last.1.get("digest").is_none(), "{}", last.1);
    // Asked for, the final event carries the digest (the job has ended:
    // the stream is that one event).
    let text = s
        .req(
            reqwest::Method::GET,
            &format!("/api/jobs/{id}/events?digest=true"),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let data = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
    let v: Value = serde_json::from_str(data).unwrap();
    assert_eq!(v["digest"]["column"], "rank", "{v}");
    assert_eq!(v["digest"]["top"].as_array().unwrap().len(), 10, "{v}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_deadline_and_graph_delete_conflicts() {
    let s = start().await;
    let id = s.submit(endless("ring")).await;
    let (st, v) = s.get(&format!("/api/jobs/{id}/result")).await;
    assert_eq!(st, StatusCode::CONFLICT, "{v}");
    let (st, v) = s.delete("/api/graphs/ring").await;
    assert_eq!(st, StatusCode::CONFLICT, "{v}");
    assert!(v["error"].as_str().unwrap().contains("1 unfinished job"));
    // A worker job too, cancelled while running.
    let w = s
        .submit(
            json!({"graph": "ring", "algorithm": "pagerank", "shared": false,
                       "params": {"iterations": 100_000_000}}),
        )
        .await;
    let (st, v) = s.delete(&format!("/api/jobs/{id}")).await;
    assert_eq!(st, StatusCode::OK, "{v}");
    assert_eq!(s.wait(id).await["state"], "cancelled");
    let (st, _) = s.delete(&format!("/api/jobs/{w}")).await;
    assert_eq!(st, StatusCode::OK);
    let v = s.wait(w).await;
    assert_eq!(v["state"], "cancelled", "{v}");
    let (st, v) = s.get(&format!("/api/jobs/{id}/result")).await;
    assert_eq!(st, StatusCode::CONFLICT);
    assert!(v["error"].as_str().unwrap().contains("cancelled"));
    // Deadlines fail the job alone.
    let mut body = endless("ring");
    body["deadline_seconds"] = json!(0.2);
    let d = s.submit(body).await;
    let ok = s.submit(json!({"graph": "ring", "algorithm": "wcc"})).await;
    let v = s.wait(d).await;
    assert_eq!(v["state"], "failed");
    assert!(v["error"].as_str().unwrap().contains("deadline"), "{v}");
    assert_eq!(s.wait(ok).await["state"], "done");
    // Nothing reads the graph now.
    let (st, v) = s.delete("/api/graphs/ring").await;
    assert_eq!(st, StatusCode::OK, "{v}");
    let (st, _) = s.get("/api/graphs/ring").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_is_required_and_compared() {
    let s = start_with(|d| {
        let mut c = ServerConfig::new(d.join("data"));
        c.token = Some("s3cret-token".into());
        c
    })
    .await;
    let (st, _) = s.get("/api/graphs").await;
    assert_eq!(st, StatusCode::OK);
    for auth in [
        None,
        Some("Bearer wrong"),
        Some("Bearer s3cret-token2"),
        Some("s3cret-token"),
    ] {
        let mut r = s.client.get(s.url("/api/graphs")).timeout(TIMEOUT);
        if let Some(a) = auth {
            r = r.header("authorization", a);
        }
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{auth:?}");
        let v: Value = r.json().await.unwrap();
        assert!(!v["error"].as_str().unwrap().contains("s3cret"));
    }
    for path in ["/api/jobs", "/metrics", "/api/graphs/ring"] {
        let r = s
            .client
            .get(s.url(path))
            .timeout(TIMEOUT)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{path}");
    }
    let r = s
        .client
        .get(s.url("/api/health"))
        .timeout(TIMEOUT)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    s.stop().await;
    // A non-loopback address without a token is refused.
    let dir = tempfile::tempdir().unwrap();
    let mut c = ServerConfig::new(dir.path());
    c.bind = SocketAddr::from(([0, 0, 0, 0], 0));
    let e = Server::bind(c).await.err().expect("refused");
    assert!(e.to_string().contains("token"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_limits_answer_429() {
    let s = start_with(|d| {
        let mut c = ServerConfig::new(d.join("data"));
        c.limits.per_client = 2;
        c.limits.total = 3;
        c
    })
    .await;
    let a = s.submit(endless("ring")).await;
    let b = s.submit(endless("ring")).await;
    let (st, v) = s.post("/api/jobs", endless("ring")).await;
    assert_eq!(st, StatusCode::TOO_MANY_REQUESTS, "{v}");
    // Another client still has room, up to the total.
    let r = s
        .req(reqwest::Method::POST, "/api/jobs")
        .header("x-plexus-client", "other")
        .json(&endless("ring"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let c = r.json::<Value>().await.unwrap()["id"].as_u64().unwrap();
    let r = s
        .req(reqwest::Method::POST, "/api/jobs")
        .header("x-plexus-client", "third")
        .json(&endless("ring"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    let (st, m) = (
        StatusCode::OK,
        s.req(reqwest::Method::GET, "/metrics")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    );
    assert_eq!(st, StatusCode::OK);
    assert!(
        m.contains("plexus_jobs{state=\"running\"}") && m.contains("plexus_queue_length"),
        "{m}"
    );
    for id in [a, b, c] {
        s.delete(&format!("/api/jobs/{id}")).await;
        assert_eq!(s.wait(id).await["state"], "cancelled");
    }
    let (st, _) = s
        .post("/api/jobs", json!({"graph": "ring", "algorithm": "wcc"}))
        .await;
    assert_eq!(st, StatusCode::ACCEPTED);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imports_by_path_under_a_root_and_by_upload() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("tri.el"), "1 2\n2 3\n3 1\n").unwrap();
    std::fs::write(outside.path().join("x.el"), "1 2\n").unwrap();
    let r = root.path().to_path_buf();
    let s = start_with(move |d| {
        let mut c = ServerConfig::new(d.join("data"));
        c.import_roots = vec![r];
        c.max_upload_bytes = 64;
        c
    })
    .await;
    let (st, v) = s
        .post(
            "/api/graphs",
            json!({"name": "tri", "path": "tri.el", "directed": true}),
        )
        .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{v}");
    let v = s.wait(v["id"].as_u64().unwrap()).await;
    assert_eq!(v["state"], "done", "{v}");
    assert_eq!(v["summary"]["edges"], 3);
    let (_, g) = s.get("/api/graphs/tri").await;
    assert_eq!(
        (g["vertices"].as_u64(), g["directed"].as_bool()),
        (Some(3), Some(true))
    );
    let outside_file = outside.path().join("x.el").display().to_string();
    let traversal = format!(
        "../{}/x.el",
        outside.path().file_name().unwrap().to_string_lossy()
    );
    for path in [outside_file.as_str(), traversal.as_str(), "/etc/passwd"] {
        let (st, v) = s
            .post("/api/graphs", json!({"name": "x", "path": path}))
            .await;
        assert!(
            st == StatusCode::FORBIDDEN || st == StatusCode::BAD_REQUEST,
            "{path}: {st} {v}"
        );
    }
    let (st, _) = s
        .post("/api/graphs", json!({"name": "tri", "path": "tri.el"}))
        .await;
    assert_eq!(st, StatusCode::CONFLICT);
    let (st, _) = s
        .post("/api/graphs", json!({"name": "../x", "path": "tri.el"}))
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    // Uploads: the body is the file.
    let r = s
        .req(reqwest::Method::POST, "/api/graphs?name=up&filename=g.el")
        .body("10 20\n20 30\n")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let id = r.json::<Value>().await.unwrap()["id"].as_u64().unwrap();
    assert_eq!(s.wait(id).await["state"], "done");
    let (_, g) = s.get("/api/graphs/up").await;
    assert_eq!(g["vertices"], 3);
    let r = s
        .req(reqwest::Method::POST, "/api/graphs?name=big")
        .body("1 2\n".repeat(100))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let r = s
        .req(reqwest::Method::POST, "/api/graphs?name=bad")
        .body("1 x y z\n")
        .send()
        .await
        .unwrap();
    let id = r.json::<Value>().await.unwrap()["id"].as_u64().unwrap();
    let v = s.wait(id).await;
    assert_eq!(v["state"], "failed", "{v}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_and_queries_and_jobs_pin_their_version() {
    let s = start().await;
    let before = s.submit(endless("ring")).await;
    let tx = "add-vertex 5000\nadd-edge 5000 1 1.5\n";
    let r = s
        .req(reqwest::Method::POST, "/api/graphs/ring/tx")
        .body(tx)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        (v["version"].as_u64(), v["ops"].as_u64()),
        (Some(1), Some(2))
    );
    let (st, v) = s.get("/api/graphs/ring/query/has-edge?u=5000&v=1").await;
    assert_eq!(
        (st, v["exists"].as_bool()),
        (StatusCode::OK, Some(true)),
        "{v}"
    );
    let (_, v) = s
        .get("/api/graphs/ring/query/neighbors?vertex=5000&weights=true")
        .await;
    assert_eq!(
        (v["neighbors"].clone(), v["weights"].clone()),
        (json!([1]), json!([1.5]))
    );
    let (_, v) = s.get("/api/graphs/ring/query/degree?vertex=5000").await;
    assert_eq!(v["degree"], 1);
    let (_, v) = s
        .get("/api/graphs/ring/query/khop?vertex=5000&hops=1&count=true")
        .await;
    assert_eq!(v["count"].as_u64(), Some(1), "{v}");
    let (_, v) = s.get("/api/graphs/ring/query/path?u=5000&v=2").await;
    assert_eq!(v["found"], true);
    let (st, _) = s.get("/api/graphs/ring/query/degree?vertex=999999").await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    let (st, _) = s.get("/api/graphs/ring/query/nothing?vertex=1").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    let r = s
        .req(reqwest::Method::POST, "/api/graphs/ring/tx")
        .body("add-edge 1\n")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let after = s.submit(json!({"graph": "ring", "algorithm": "wcc"})).await;
    let v = s.wait(after).await;
    assert_eq!(v["version"], 1);
    let (_, j) = s.get(&format!("/api/jobs/{after}/result")).await;
    assert_eq!(j["rows"].as_array().unwrap().len(), 3001);
    let (_, v) = s.get(&format!("/api/jobs/{before}")).await;
    assert_eq!(
        v["version"], 0,
        "the running job keeps the version it pinned"
    );
    s.delete(&format!("/api/jobs/{before}")).await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_cancels_jobs_after_the_grace_period_and_frees_the_store() {
    let s = start_with(|d| {
        let mut c = ServerConfig::new(d.join("data"));
        c.grace = Duration::from_millis(300);
        c
    })
    .await;
    let endless_job = s.submit(endless("ring")).await;
    let quick = s.submit(json!({"graph": "ring", "algorithm": "wcc"})).await;
    assert_eq!(s.wait(quick).await["state"], "done");
    // The writer lock is held while serving; writers are told to use the server.
    let e = plexus_store::WriterLock::acquire(&s.data).expect_err("locked");
    let pid = std::process::id();
    assert!(
        e.to_string()
            .contains(&format!("served by PID {pid}; use the server")),
        "{e}"
    );
    let data = s.data.clone();
    let t = Instant::now();
    let _dir = s.stop().await;
    assert!(t.elapsed() < Duration::from_secs(10));
    let lock = plexus_store::WriterLock::acquire(&data);
    assert!(
        lock.is_ok(),
        "the store is free after shutdown: {:?}",
        lock.err()
    );
    assert!(
        DataDir::new(&data).open("ring").is_ok(),
        "the store is intact"
    );
    let _ = endless_job;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_go_away_change_nothing() {
    let s = start().await;
    let id = s
        .submit(json!({"graph": "ring", "algorithm": "pagerank", "params": {"iterations": 2000}}))
        .await;
    // Drop an event stream after its first piece.
    let mut r = s
        .req(reqwest::Method::GET, &format!("/api/jobs/{id}/events"))
        .send()
        .await
        .unwrap();
    let first = tokio::time::timeout(TIMEOUT, r.chunk())
        .await
        .unwrap()
        .unwrap();
    assert!(first.is_some());
    drop(r);
    assert_eq!(s.wait(id).await["state"], "done");
    // Drop a download after its first piece; the next one is whole.
    let mut r = s
        .req(
            reqwest::Method::GET,
            &format!("/api/jobs/{id}/result?format=json"),
        )
        .send()
        .await
        .unwrap();
    let _ = tokio::time::timeout(TIMEOUT, r.chunk())
        .await
        .unwrap()
        .unwrap();
    drop(r);
    let (st, j) = s.get(&format!("/api/jobs/{id}/result?format=json")).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(j["rows"].as_array().unwrap().len(), 3000);
    let (_, v) = s.get(&format!("/api/jobs/{id}")).await;
    assert_eq!(v["state"], "done");
    s.stop().await;
}

#[test]
fn sizes_parse() {
    assert_eq!(plexus_server::parse_size("64K"), Ok(64 << 10));
    assert_eq!(plexus_server::parse_size("2g"), Ok(2 << 30));
    assert!(plexus_server::parse_size("x").is_err());
    let _ = Arc::new(0);
}

/// Sends `head` (request line and headers, declaring a body longer than
/// `pieces` hold) and then each piece after `pause`, over a raw socket
/// (on a blocking thread); the response's status and body, read once the
/// server answers.
async fn slow_request(
    addr: SocketAddr,
    head: &str,
    pieces: &[&[u8]],
    pause: Duration,
) -> (u16, String) {
    let head = head.to_string();
    let pieces: Vec<Vec<u8>> = pieces.iter().map(|p| p.to_vec()).collect();
    tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut sock = std::net::TcpStream::connect(addr).unwrap();
        sock.set_read_timeout(Some(TIMEOUT)).unwrap();
        sock.write_all(head.as_bytes()).unwrap();
        for p in &pieces {
            std::thread::sleep(pause);
            // The server may have answered and closed already.
            if sock.write_all(p).is_err() {
                break;
            }
        }
        let mut buf = Vec::new();
        let _ = sock.read_to_end(&mut buf);
        let text = String::from_utf8_lossy(&buf).to_string();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
        (status, body)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_over_the_memory_limit_gets_507_with_the_bytes() {
    let s = start_with(|d| {
        let mut c = ServerConfig::new(d.join("data"));
        c.memory_limit_bytes = Some(10_000);
        c
    })
    .await;
    // PageRank on 3,000 vertices holds far more than 10,000 bytes.
    for shared in [true, false] {
        let (st, v) = s
            .post(
                "/api/jobs",
                json!({"graph": "ring", "algorithm": "pagerank", "shared": shared}),
            )
            .await;
        assert_eq!(st, StatusCode::INSUFFICIENT_STORAGE, "{v}");
        let needed = v["needed_bytes"].as_u64().unwrap();
        assert_eq!(v["available_bytes"], 10_000, "{v}");
        assert!(needed > 10_000, "{v}");
        let msg = v["error"].as_str().unwrap();
        assert!(
            msg.contains(&needed.to_string()) && msg.contains("10000"),
            "{v}"
        );
    }
    let (st, v) = s
        .post(
            "/api/estimate",
            json!({"graph": "ring", "algorithm": "pagerank"}),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{v}");
    assert_eq!(
        (v["fits"].clone(), v["available_bytes"].clone()),
        (json!(false), json!(10_000))
    );
    // Nothing was queued.
    let (_, v) = s.get("/api/jobs").await;
    assert_eq!(v["jobs"].as_array().unwrap().len(), 0, "{v}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_bodies_and_uploads_get_408() {
    let s = start_with(|d| {
        let mut c = ServerConfig::new(d.join("data"));
        c.request_timeout = Duration::from_secs(1);
        c.read_timeout = Duration::from_millis(700);
        c
    })
    .await;
    let job = br#"{"graph": "ring", "algorithm": "wcc"}"#;
    let head = |path: &str, len: usize| {
        format!(
            "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {len}\r\nconnection: close\r\n\r\n"
        )
    };
    // A JSON body trickling in, each piece within the read timeout: the
    // request deadline (1 s) ends it.
    let t = Instant::now();
    let pieces: Vec<&[u8]> = job.chunks(4).collect();
    let (st, body) = slow_request(
        s.addr,
        &head("/api/jobs", job.len()),
        &pieces,
        Duration::from_millis(300),
    )
    .await;
    assert_eq!(st, 408, "{body}");
    assert!(body.contains("did not arrive within 1 s"), "{body}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    // A JSON body stalled longer than the read timeout between pieces.
    let (st, body) = slow_request(
        s.addr,
        &head("/api/jobs", job.len()),
        &[&job[..5], &job[5..]],
        Duration::from_millis(900),
    )
    .await;
    assert_eq!(st, 408, "{body}");
    // An upload stalled past the read timeout: 408, and nothing is imported.
    let upload = "POST /api/graphs?name=slow&filename=g.el HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\ncontent-length: 1000\r\nconnection: close\r\n\r\n";
    let t = Instant::now();
    let (st, body) = slow_request(
        s.addr,
        upload,
        &[b"0 1\n1 2\n", b"2 3\n"],
        Duration::from_millis(1200),
    )
    .await;
    assert_eq!(st, 408, "{body}");
    assert!(body.contains("upload too slow"), "{body}");
    assert!(t.elapsed() < Duration::from_secs(5));
    let (_, v) = s.get("/api/graphs").await;
    assert!(!v.to_string().contains("\"slow\""), "{v}");
    // An upload whose pieces keep coming is not bound by the request
    // deadline: 1.5 s in all, each piece within the read timeout.
    let body_text = b"0 1\n1 2\n2 3\n3 0\n";
    let upload = format!(
        "POST /api/graphs?name=steady&filename=g.el HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body_text.len()
    );
    let pieces: Vec<&[u8]> = body_text.chunks(4).collect();
    let (st, body) = slow_request(s.addr, &upload, &pieces, Duration::from_millis(400)).await;
    assert_eq!(st, 202, "{body}");
    let id = serde_json::from_str::<Value>(&body).unwrap()["id"]
        .as_u64()
        .unwrap();
    assert_eq!(s.wait(id).await["state"], "done");
    // Quick requests are untouched.
    let id = s.submit(json!({"graph": "ring", "algorithm": "wcc"})).await;
    assert_eq!(s.wait(id).await["state"], "done");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduler_runs_every_clients_jobs_with_the_same_results() {
    for policy in ["congra", "fifo"] {
        let s = start_with(|d| {
            let mut c = ServerConfig::new(d.join("data"));
            // No CPU ids: the units' pools are not pinned.
            let m = plexus_jobs::sched::Machine::model(1, 2, 10.0);
            c.scheduler = Some(plexus_server::SchedulerConfig {
                policy: policy.parse().unwrap(),
                machine: m,
            });
            c
        })
        .await;
        let g = ring(3000);
        // Jobs from two clients, of several algorithms, queued together.
        let mut ids = Vec::new();
        for (i, (alg, params)) in [
            ("pagerank", json!({"iterations": 15})),
            ("bfs", json!({"source": "7"})),
            ("wcc", json!({})),
            ("pagerank", json!({"iterations": 15})),
            ("sssp", json!({"source": "3"})),
        ]
        .into_iter()
        .enumerate()
        {
            let r = s
                .req(reqwest::Method::POST, "/api/jobs")
                .header("x-plexus-client", format!("client-{}", i % 2))
                .json(&json!({"graph": "ring", "algorithm": alg, "params": params}))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::ACCEPTED);
            let v: Value = r.json().await.unwrap();
            assert_eq!(v["route"], "scheduled", "{v}");
            ids.push((v["id"].as_u64().unwrap(), alg));
        }
        // One cancelled (before or after its launch) ends cancelled.
        let endless_id = s.submit(endless("ring")).await;
        let (st, _) = s.delete(&format!("/api/jobs/{endless_id}")).await;
        assert_eq!(st, StatusCode::OK);
        assert_eq!(s.wait(endless_id).await["state"], "cancelled");
        for (id, alg) in &ids {
            let v = s.wait(*id).await;
            assert_eq!(v["state"], "done", "{policy} {v}");
            let (st, j) = s.get(&format!("/api/jobs/{id}/result")).await;
            assert_eq!(st, StatusCode::OK);
            let rows = j["rows"].as_array().unwrap();
            assert_eq!(rows.len(), 3000);
            let local = match *alg {
                "pagerank" => run_locally(&g, "pagerank", &[("iterations", "15")]),
                "bfs" => run_locally(&g, "bfs", &[("source", "7")]),
                "sssp" => run_locally(&g, "sssp", &[("source", "3")]),
                _ => run_locally(&g, "wcc", &[]),
            };
            match (&local[0].1, *alg) {
                (Column::Float(x), "pagerank") => {
                    for (v, row) in rows.iter().enumerate() {
                        let got = row[1].as_f64().unwrap();
                        assert!(
                            (got - x[v]).abs() <= 1e-9 * x[v].abs(),
                            "{policy} {alg} {v}"
                        );
                    }
                }
                (Column::Float(x), _) => {
                    for (v, row) in rows.iter().enumerate() {
                        assert_eq!(row[1].as_f64(), Some(x[v]), "{policy} {alg} {v}");
                    }
                }
                (Column::Depth(d), _) => {
                    for (v, row) in rows.iter().enumerate() {
                        assert_eq!(row[1].as_u64(), Some(u64::from(d[v])), "{policy} {alg} {v}");
                    }
                }
                (Column::Vertex(c), _) => {
                    // Component labels: the same partition.
                    for (v, row) in rows.iter().enumerate() {
                        let same = rows[c[v] as usize][1] == row[1];
                        assert!(same, "{policy} {alg} {v}");
                    }
                }
                (c, _) => panic!("unexpected column {c:?}"),
            }
        }
        let (_, m) = s.get("/api/health").await;
        assert_eq!(m["status"], "ok");
        s.stop().await;
    }
}

/// The `plexus_graph_versions_mapped` gauge of `/metrics`.
async fn versions_mapped(s: &Running) -> u64 {
    let r = s
        .req(reqwest::Method::GET, "/metrics")
        .send()
        .await
        .unwrap();
    let text = r.text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("plexus_graph_versions_mapped "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no versions gauge in {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_is_released_once_no_job_or_result_holds_it() {
    let s = start().await;
    let a = s.submit(json!({"graph": "ring", "algorithm": "wcc"})).await;
    let w = s
        .submit(json!({"graph": "ring", "algorithm": "wcc", "shared": false}))
        .await;
    assert_eq!(s.wait(a).await["state"], "done");
    assert_eq!(s.wait(w).await["state"], "done");
    let (st, _) = s.get(&format!("/api/jobs/{a}/result")).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(versions_mapped(&s).await, 1);
    // A transaction makes version 1; a job runs on it.
    let r = s
        .req(reqwest::Method::POST, "/api/graphs/ring/tx")
        .body("add-edge 1 2000 1.0\n")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let b = s.submit(json!({"graph": "ring", "algorithm": "wcc"})).await;
    let v = s.wait(b).await;
    assert_eq!(
        (v["state"].as_str(), v["version"].as_u64()),
        (Some("done"), Some(1))
    );
    // Version 0 is still held by the results of jobs a and w.
    assert_eq!(versions_mapped(&s).await, 2);
    let (st, _) = s.delete(&format!("/api/jobs/{a}")).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(versions_mapped(&s).await, 2, "job w still holds version 0");
    let (st, _) = s.delete(&format!("/api/jobs/{w}")).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(versions_mapped(&s).await, 1, "version 0 is released");
    let (st, _) = s.get(&format!("/api/jobs/{b}/result")).await;
    assert_eq!(st, StatusCode::OK);
    s.stop().await;
}
