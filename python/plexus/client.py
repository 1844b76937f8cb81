"""A client for ``plexus serve``: the same algorithms and the same
:class:`~plexus.Result` as a local graph, run by a server that shares one
job manager among all its clients.

Standard library HTTP only; results come as an Arrow stream when pyarrow is
installed (JSON otherwise) and are turned into a :class:`~plexus.Result`
whose columns are numpy arrays aligned with ``Result.ids``, vertex columns
holding positions into ``ids`` as a local result's do.

>>> c = plexus.Client("http://127.0.0.1:7878")          # doctest: +SKIP
>>> r = c.run("k16", "pagerank", damping=0.85)           # doctest: +SKIP
>>> r.to_pandas().nlargest(3, "rank")                    # doctest: +SKIP
"""
from __future__ import annotations

import io
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, Union

import numpy as np

from ._plexus import UNREACHED, PlexusError

__all__ = ["Client", "RemoteJob", "ServerError", "BadRequest", "NotFound", "JobFailed"]

#: Finished states of a job.
ENDED = ("done", "failed", "cancelled")


class ServerError(PlexusError):
    """The server answered with an error status: ``status`` is the HTTP
    status, ``message`` the server's one-line explanation."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{message} (HTTP {status})")
        self.status = status
        self.message = message


class BadRequest(ServerError, ValueError):
    """400: a parameter or body the server refused (the message names it)."""


class NotFound(ServerError, LookupError):
    """404: an unknown graph, job or route."""


class JobFailed(PlexusError):
    """A job ended ``failed`` or ``cancelled``: ``job_id``, ``state`` and
    the server's ``error`` line."""

    def __init__(self, job_id: int, state: str, error: str) -> None:
        super().__init__(f"job {job_id} {state}: {error}")
        self.job_id = job_id
        self.state = state
        self.error = error


def _error(status: int, body: bytes) -> ServerError:
    try:
        message = str(json.loads(body.decode("utf-8"))["error"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        message = body.decode("utf-8", "replace").strip() or "no message"
    cls = {400: BadRequest, 404: NotFound}.get(status, ServerError)
    return cls(status, message)


class _RemoteGraph:
    """What a :class:`~plexus.Result` needs of its graph: the external ids
    by position and the vertex count."""

    def __init__(self, name: str, ids: Union[np.ndarray, List[str]]) -> None:
        self.name = name
        self.ids = ids
        self.num_vertices = len(ids)

    def __repr__(self) -> str:
        return f"<plexus remote graph {self.name!r}: {self.num_vertices:,} vertices>"


class Client:
    """A connection to ``plexus serve`` at ``url``.

    ``token`` (or the ``PLEXUS_TOKEN`` environment variable) is sent as a
    bearer token; ``client_id`` names this client for the server's
    per-client queue limit; ``timeout`` is seconds per request (waiting for
    a job is bounded by :meth:`RemoteJob.wait`'s own ``timeout``).
    """

    def __init__(
        self,
        url: str = "http://127.0.0.1:7878",
        token: Optional[str] = None,
        client_id: Optional[str] = None,
        timeout: float = 60.0,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {url!r}")
        self.url = url.rstrip("/")
        self._token = token if token is not None else os.environ.get("PLEXUS_TOKEN")
        self.client_id = client_id
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"<plexus.Client {self.url}>"

    # ------------------------------------------------------------ transport

    def _request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Optional[Mapping[str, Any]] = None,
        raw: Optional[Any] = None,
        content_type: str = "application/json",
        timeout: Optional[float] = None,
    ) -> Any:
        """Sends a request; returns the open response (2xx) or raises."""
        url = self.url + path
        if query:
            q = {k: _query_value(v) for k, v in query.items() if v is not None}
            url += "?" + urllib.parse.urlencode(q)
        data: Any = None
        headers = self._headers(None)
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = content_type
        elif raw is not None:
            data = raw
            headers["Content-Type"] = content_type
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            return urllib.request.urlopen(req, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as e:
            raise _error(e.code, e.read()) from None
        except urllib.error.URLError as e:
            raise ConnectionError(f"cannot reach plexus serve at {self.url}: {e.reason}") from None

    def _headers(self, content_type: Optional[str]) -> Dict[str, str]:
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        if self.client_id:
            headers["X-Plexus-Client"] = self.client_id
        return headers

    def _json(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        with self._request(method, path, body, **kw) as resp:
            text = resp.read()
        return json.loads(text) if text.strip() else None

    # --------------------------------------------------------------- server

    def health(self) -> Dict[str, Any]:
        """``GET /api/health``: ``{"status": "ok" | "stopping", ...}``."""
        return dict(self._json("GET", "/api/health"))

    def metrics(self) -> str:
        """``GET /metrics``: the Prometheus text."""
        with self._request("GET", "/metrics") as resp:
            return str(resp.read().decode("utf-8"))

    # --------------------------------------------------------------- graphs

    def graphs(self) -> List[Dict[str, Any]]:
        """The stored graphs: name, counts, bytes on disk, version."""
        got = self._json("GET", "/api/graphs")
        return list(got["graphs"] if isinstance(got, dict) else got)

    def graph(self, name: str) -> Dict[str, Any]:
        """One graph's ``plexus info`` fields (newest version)."""
        return dict(self._json("GET", f"/api/graphs/{_seg(name)}"))

    def import_graph(
        self,
        name: str,
        path: Optional[str] = None,
        upload: Optional[Union[str, "os.PathLike[str]", bytes]] = None,
        filename: Optional[str] = None,
        wait: bool = True,
        **options: Any,
    ) -> "RemoteJob":
        """Imports a graph as ``plexus import`` does, from ``path`` (a file
        the *server* reads, under one of its ``--import-root`` directories)
        or from ``upload`` (a local file's path, or the bytes themselves;
        ``filename``'s extension tells the format, default the local
        file's name). ``options`` are the import options (``directed``,
        ``weighted``, ``format``, ``force``, ...). Returns the import job,
        finished when ``wait`` (raising :class:`JobFailed` if it failed).
        """
        if (path is None) == (upload is None):
            raise ValueError("give exactly one of path= (on the server) or upload= (from here)")
        if path is not None:
            got = self._json("POST", "/api/graphs", {"name": name, "path": str(path), **options})
        else:
            if isinstance(upload, bytes):
                data: Any = upload
                fname = filename or "upload.el"
            else:
                local = os.fspath(upload)  # type: ignore[arg-type]
                data = _file_body(local)
                fname = filename or os.path.basename(local)
            if not options.get("force") and self._exists(name):
                raise ServerError(409, f"a graph named '{name}' already exists (set force=True to replace it)")
            q = {"name": name, "filename": fname, **options}
            got = self._upload("/api/graphs", q, data)
        job = RemoteJob(self, int(got["id"]), got)
        if wait:
            job.wait()
            job._raise_if_failed()
        return job

    def _exists(self, name: str) -> bool:
        try:
            self.graph(name)
        except NotFound:
            return False
        return True

    def _upload(self, path: str, query: Mapping[str, Any], body: Any) -> Any:
        """POSTs `body` (bytes, or a `_Body` over a file) through
        http.client, so that an answer the server gives before it has read
        the whole body (413 over --max-upload, 409) is read rather than
        lost to a broken pipe."""
        import http.client

        u = urllib.parse.urlsplit(self.url)
        cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
        conn = cls(u.hostname or "127.0.0.1", u.port, timeout=self.timeout)
        q = urllib.parse.urlencode({k: _query_value(v) for k, v in query.items() if v is not None})
        try:
            try:
                conn.putrequest("POST", f"{u.path.rstrip('/')}{path}?{q}")
                for k, v in self._headers("application/octet-stream").items():
                    conn.putheader(k, v)
                conn.putheader("Content-Length", str(len(body)))
                conn.endheaders()
                try:
                    _send(conn, body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the server answered before reading it all: read that
            except OSError as e:
                raise ConnectionError(f"cannot reach plexus serve at {self.url}: {e}") from None
            try:
                resp = conn.getresponse()
                text = resp.read()
            except (OSError, http.client.HTTPException) as e:
                raise ConnectionError(
                    f"plexus serve at {self.url} closed the connection during the upload ({e}); "
                    "it refuses uploads over its --max-upload"
                ) from None
        finally:
            conn.close()
            if not isinstance(body, bytes):
                body.close()
        if resp.status >= 400:
            raise _error(resp.status, text)
        return json.loads(text)

    def delete_graph(self, name: str) -> None:
        """Removes a stored graph (409 while unfinished jobs read it)."""
        self._json("DELETE", f"/api/graphs/{_seg(name)}")

    def tx(self, name: str, ops: Union[str, List[str]]) -> Dict[str, Any]:
        """Commits one transaction: ``plexus tx``'s lines (``add-edge U V
        [W]``, ``remove-edge U V``, ``add-vertex U``, ``remove-vertex U``,
        ``set-weight U V W``), all or nothing. Returns the commit (its
        version)."""
        text = ops if isinstance(ops, str) else "\n".join(ops)
        with self._request(
            "POST", f"/api/graphs/{_seg(name)}/tx", raw=text.encode("utf-8"), content_type="text/plain"
        ) as resp:
            return dict(json.loads(resp.read()))

    def query(self, name: str, what: str, **params: Any) -> Dict[str, Any]:
        """A point query with ``plexus query --json``'s answer: ``what`` is
        ``neighbors``, ``degree``, ``has-edge``, ``khop`` or ``path``;
        ``params`` its query parameters (``vertex=``, ``u=``, ``v=``,
        ``hops=``, and the flags ``in_=True``, ``weights=True``,
        ``count=True``)."""
        q: Dict[str, Any] = {}
        for k, v in params.items():
            key = k.rstrip("_").replace("_", "-")
            if v is True:
                q[key] = ""
            elif v is not False and v is not None:
                q[key] = v
        return dict(self._json("GET", f"/api/graphs/{_seg(name)}/query/{_seg(what)}", query=q))

    # ----------------------------------------------------------------- jobs

    def submit(
        self,
        graph: str,
        algorithm: str,
        deadline: Optional[float] = None,
        shared: Optional[bool] = None,
        **params: Any,
    ) -> "RemoteJob":
        """Submits a job and returns at once. ``params`` are the algorithm's
        parameters as :meth:`plexus.Graph.run` takes them (checked by the
        server: :class:`BadRequest` names a bad one); ``deadline`` is
        seconds after which the server cancels it."""
        got = self._json("POST", "/api/jobs", _job_body(graph, algorithm, deadline, shared, params))
        return RemoteJob(self, int(got["id"]), got)

    def run(
        self,
        graph: str,
        algorithm: str,
        progress: Optional[Callable[[int, int, float], Any]] = None,
        timeout: Optional[float] = None,
        format: Optional[str] = None,  # noqa: A002
        **params: Any,
    ) -> Any:
        """Submits a job, waits for it and returns its
        :class:`~plexus.Result`. ``progress(superstep, active, seconds)``
        is called as the server reports progress; Ctrl-C cancels the job on
        the server and raises ``KeyboardInterrupt``."""
        job = self.submit(graph, algorithm, **params)
        try:
            job.wait(timeout=timeout, progress=progress)
        except BaseException:
            try:
                job.cancel()
            except (ServerError, ConnectionError):
                pass
            raise
        return job.result(format=format)

    def job(self, job_id: int) -> "RemoteJob":
        """A job by id (its status is fetched now)."""
        got = self._json("GET", f"/api/jobs/{int(job_id)}")
        return RemoteJob(self, int(job_id), got)

    def jobs(self, state: Optional[str] = None, graph: Optional[str] = None) -> List[Dict[str, Any]]:
        """Every job the server knows (statuses), optionally by state or graph."""
        got = self._json("GET", "/api/jobs", query={"state": state, "graph": graph})
        return list(got["jobs"])

    def estimate(self, graph: str, algorithm: str, **params: Any) -> Dict[str, Any]:
        """Memory (``state_bytes``, ``available_bytes``, ``fits``) and a time
        estimate (``seconds``) for a job, without running it."""
        return dict(self._json("POST", "/api/estimate", _job_body(graph, algorithm, None, None, params)))


class RemoteJob:
    """A job on the server: ``id``, and its last seen ``status`` (a dict:
    ``state``, ``superstep``, ``active_vertices``, ``elapsed_seconds``,
    ``state_bytes``, ``error``, ``summary``, ...)."""

    def __init__(self, client: Client, job_id: int, status: Mapping[str, Any]) -> None:
        self.client = client
        self.id = job_id
        self.status: Dict[str, Any] = dict(status)

    def __repr__(self) -> str:
        s = self.status
        return f"<plexus.RemoteJob {self.id} {s.get('algorithm')} on {s.get('graph')}: {s.get('state')}>"

    @property
    def state(self) -> str:
        """The state last seen: queued, running, done, failed or cancelled."""
        return str(self.status.get("state"))

    def refresh(self) -> Dict[str, Any]:
        """Fetches the status now."""
        self.status = dict(self.client._json("GET", f"/api/jobs/{self.id}"))
        return self.status

    def events(self, timeout: Optional[float] = None) -> Iterator[Tuple[str, Dict[str, Any]]]:
        """The job's Server-Sent Events as ``(event, status)``: ``progress``
        each time it changes, then one ``status`` with the final status."""
        resp = self.client._request(
            "GET", f"/api/jobs/{self.id}/events", timeout=timeout or self.client.timeout
        )
        with resp:
            event, data = "message", []  # type: Tuple[str, List[str]]
            for line in resp:
                text = line.decode("utf-8").rstrip("\r\n")
                if text == "":
                    if data:
                        yield event, json.loads("\n".join(data))
                    event, data = "message", []
                elif text.startswith(":"):
                    continue
                elif text.startswith("event:"):
                    event = text[6:].strip()
                elif text.startswith("data:"):
                    data.append(text[5:].lstrip())

    def wait(
        self,
        timeout: Optional[float] = None,
        progress: Optional[Callable[[int, int, float], Any]] = None,
    ) -> Dict[str, Any]:
        """Waits until the job ends (following its event stream) and
        returns the final status. ``TimeoutError`` after ``timeout``
        seconds (the job goes on)."""
        start = time.monotonic()
        while self.state not in ENDED:
            left = None if timeout is None else timeout - (time.monotonic() - start)
            if left is not None and left <= 0:
                raise TimeoutError(f"job {self.id} not finished after {timeout} s (state {self.state})")
            try:
                for event, status in self.events(timeout=left):
                    self.status = status
                    if progress is not None and event == "progress":
                        progress(
                            int(status.get("superstep", 0)),
                            int(status.get("active_vertices", 0)),
                            float(status.get("elapsed_seconds", 0.0)),
                        )
            except (TimeoutError, OSError) as e:
                if timeout is not None and time.monotonic() - start >= timeout:
                    raise TimeoutError(f"job {self.id} not finished after {timeout} s") from e
            if self.state not in ENDED:
                self.refresh()
        return self.status

    def cancel(self) -> None:
        """Cancels the job if unfinished (it ends ``cancelled`` at its next
        superstep); forgets it and its result if finished."""
        self.client._json("DELETE", f"/api/jobs/{self.id}")

    def _raise_if_failed(self) -> None:
        if self.state != "done":
            raise JobFailed(self.id, self.state, str(self.status.get("error") or self.state))

    def result(self, format: Optional[str] = None) -> Any:  # noqa: A002
        """The finished job's :class:`~plexus.Result` (waits for it first).
        ``format`` is the download: ``arrow`` (default when pyarrow is
        installed) or ``json``."""
        from . import Result

        if self.state not in ENDED:
            self.wait()
        self._raise_if_failed()
        fmt = format or ("arrow" if _have_pyarrow() else "json")
        if fmt not in ("arrow", "json"):
            raise ValueError(f"format must be 'arrow' or 'json', got {fmt!r}")
        resp = self.client._request("GET", f"/api/jobs/{self.id}/result", query={"format": fmt})
        with resp:
            names, cols = _read_arrow(resp) if fmt == "arrow" else _read_json(resp)
        graph = _RemoteGraph(str(self.status.get("graph")), cols[0])
        columns, kinds = _internal_columns(names[1:], cols[1:], cols[0])
        summary = dict(self.status.get("summary") or {})
        raw = {
            "columns": columns,
            "kinds": kinds,
            "summary_json": json.dumps(summary),
            "iterations": summary.get("iterations"),
            "compute_seconds": summary.get("compute_seconds"),
            "verified": None,
        }
        return Result(graph, str(self.status.get("algorithm")), raw)  # type: ignore[arg-type]


# ------------------------------------------------------------------ helpers


def _seg(s: str) -> str:
    return urllib.parse.quote(str(s), safe="")


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _job_body(
    graph: str, algorithm: str, deadline: Optional[float], shared: Optional[bool], params: Mapping[str, Any]
) -> Dict[str, Any]:
    body: Dict[str, Any] = {"graph": graph, "algorithm": algorithm, "params": _plain(params)}
    if deadline is not None:
        body["deadline_seconds"] = deadline
    if shared is not None:
        body["shared"] = shared
    return body


def _plain(params: Mapping[str, Any]) -> Dict[str, Any]:
    """Parameters as JSON values (numpy scalars become Python numbers)."""
    out: Dict[str, Any] = {}
    for k, v in params.items():
        if v is None:
            continue
        out[k] = v.item() if isinstance(v, np.generic) else v
    return out


def _send(conn: Any, body: Any) -> None:
    """Writes `body` (bytes, or a file-like `_Body`) to `conn` in 1 MiB pieces."""
    if isinstance(body, bytes):
        conn.send(body)
        return
    while True:
        chunk = body.read(1 << 20)
        if not chunk:
            return
        conn.send(chunk)


def _file_body(path: str) -> Any:
    """A local file as a request body streamed from disk."""
    try:
        f = open(path, "rb")  # noqa: SIM115 (closed when urllib is done)
    except OSError as e:
        raise FileNotFoundError(f"cannot read {path}: {e.strerror}") from None
    return _Body(f, os.fstat(f.fileno()).st_size)


class _Body(io.RawIOBase):
    """A file with a known length, so urllib sends Content-Length."""

    def __init__(self, f: Any, size: int) -> None:
        self._f = f
        self._size = size

    def __len__(self) -> int:
        return self._size

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        if not data:
            self._f.close()
        return bytes(data)

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._f.close()
        super().close()


def _have_pyarrow() -> bool:
    try:
        import pyarrow.ipc  # noqa: F401
    except ImportError:
        return False
    return True


def _read_arrow(resp: Any) -> Tuple[List[str], List[Any]]:
    """An Arrow IPC stream as column names and numpy arrays (None where
    the server sent nulls), ids first."""
    import pyarrow as pa
    import pyarrow.ipc

    table = pyarrow.ipc.open_stream(resp).read_all()
    cols: List[Any] = []
    for c in table.columns:
        if pa.types.is_string(c.type) or pa.types.is_large_string(c.type):
            cols.append(c.to_pylist())
        elif c.null_count:
            cols.append(np.array(c.to_pylist(), dtype=object))
        else:
            cols.append(c.to_numpy())
    return list(table.column_names), cols


def _read_json(resp: Any) -> Tuple[List[str], List[Any]]:
    doc = json.load(resp)
    names = list(doc["columns"])
    rows = doc["rows"]
    cols: List[Any] = []
    for i in range(len(names)):
        vals = [r[i] for r in rows]
        if any(isinstance(v, str) for v in vals):
            cols.append(vals)
        elif any(v is None for v in vals):
            cols.append(np.array(vals, dtype=object))
        else:
            cols.append(np.array(vals))
    return names, cols


#: Columns whose values are vertices (external ids in a download).
_VERTEX_COLUMNS = ("parent", "component", "label")


def _positions(ids: Union[np.ndarray, List[str]], vals: Any) -> np.ndarray:
    """External ids → positions into ``ids`` (UNREACHED for None)."""
    out = np.full(len(vals), UNREACHED, dtype=np.uint32)
    if isinstance(ids, list):
        where = {v: i for i, v in enumerate(ids)}
        for j, v in enumerate(vals):
            if v is not None:
                out[j] = where[v]
        return out
    arr = np.asarray(vals)
    present = np.array([v is not None for v in arr]) if arr.dtype == object else np.ones(len(arr), dtype=bool)
    keys = arr[present].astype(np.int64)
    order = np.argsort(ids, kind="stable")
    slot = np.searchsorted(ids, keys, sorter=order)
    if len(keys) and (slot.max() >= len(ids) or (ids[order[slot]] != keys).any()):
        raise PlexusError("the server's result names a vertex that is not among its ids")
    out[present] = order[slot]
    return out


def _internal_columns(
    names: List[str], cols: List[Any], ids: Union[np.ndarray, List[str]]
) -> Tuple[Dict[str, np.ndarray], Dict[str, str]]:
    """A download's columns in a local Result's terms: vertex columns as
    positions, depths as uint32 with UNREACHED for none."""
    columns: Dict[str, np.ndarray] = {}
    kinds: Dict[str, str] = {}
    for name, col in zip(names, cols):
        if name in _VERTEX_COLUMNS:
            columns[name], kinds[name] = _positions(ids, col), "vertex"
        elif name == "depth":
            columns[name], kinds[name] = _depths(col), "depth"
        else:
            arr = np.asarray(col)
            if arr.dtype == object:  # nulls in a float column: non-finite values in JSON
                arr = np.array([np.inf if v is None else v for v in col], dtype=np.float64)
            kind = {"f": "float", "b": "bool"}.get(arr.dtype.kind, "int")
            columns[name], kinds[name] = arr, kind
    return columns, kinds


def _depths(col: Any) -> np.ndarray:
    """Depths as uint32 with UNREACHED for none (a null, or Graphalytics'
    i64::MAX)."""
    arr = np.asarray(col)
    if arr.dtype == object:
        arr = np.array([UNREACHED if v is None else v for v in arr], dtype=np.int64)
    return np.minimum(arr.astype(np.int64), UNREACHED).astype(np.uint32)
