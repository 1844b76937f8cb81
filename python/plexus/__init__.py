"""Plexus graph analytics from Python.

Graphs come in from the store (:func:`open`), from arrays
(:func:`from_edges`: numpy, pandas or pyarrow, integer or string ids), from
files (:func:`read`) or from NetworkX (:func:`from_networkx`). Every
algorithm of the engine is a method of :class:`Graph`; its per-vertex
results are numpy arrays over memory the engine allocated (no copy),
aligned with :attr:`Result.ids`.

>>> import plexus
>>> g = plexus.from_edges([1, 2, 3], [2, 3, 1])
>>> g
<plexus.Graph: 3 vertices, 3 edges, directed>
>>> r = g.pagerank()
>>> round(float(r.rank.sum()), 6)
1.0
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _plexus
from ._plexus import PlexusError, UNREACHED
from .client import BadRequest, Client, JobFailed, NotFound, RemoteJob, ServerError

__all__ = [
    "Graph",
    "Result",
    "PlexusError",
    "UNREACHED",
    "open",
    "from_edges",
    "read",
    "from_networkx",
    "batch",
    "algorithms",
    "list_graphs",
    "Client",
    "RemoteJob",
    "ServerError",
    "BadRequest",
    "NotFound",
    "JobFailed",
]

__version__ = "0.1.0"

_ALGORITHMS: List[Dict[str, Any]] = json.loads(_plexus.algorithms_json())


def algorithms() -> List[Dict[str, Any]]:
    """The engine's algorithms: name, what it computes, parameters, columns.

    >>> [a["name"] for a in plexus.algorithms()][:3]
    ['bfs', 'sssp', 'pagerank']
    """
    return [dict(a) for a in _ALGORITHMS]


def list_graphs(data_dir: Optional[str] = None) -> List[str]:
    """Names of the graphs stored in ``data_dir`` (default ``$PLEXUS_DATA``
    or ``./plexus-data``).

    >>> plexus.list_graphs("plexus-data")  # doctest: +SKIP
    ['wiki-Vote']
    """
    return _plexus.list_graphs(data_dir)


# ---------------------------------------------------------------- progress

def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


class _Bar:
    """A tqdm bar fed by the engine's superstep reports."""

    def __init__(self, name: str) -> None:
        from tqdm.auto import tqdm

        self._bar = tqdm(desc=name, unit=" supersteps")

    def __call__(self, steps: int, active: int, seconds: float) -> None:
        self._bar.n = steps
        self._bar.set_postfix(active=active, refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        self._bar.close()


def _progress_for(name: str, progress: Any) -> Any:
    """The callback to pass to the engine: the one given, a tqdm bar when
    ``progress`` is True (or None in a notebook with tqdm installed)."""
    if callable(progress):
        return progress
    if progress is True or (progress is None and _in_notebook()):
        try:
            return _Bar(name)
        except ImportError:
            return None
    return None


# ------------------------------------------------------------------ results

_NONE_KINDS = ("depth", "vertex")


class Result:
    """What one algorithm run produced.

    Per-vertex columns (``rank``, ``depth``, ``parent``, ``component``, ...)
    are attributes holding numpy arrays aligned with :attr:`ids`, owned by
    memory the engine allocated (no copy). Columns holding vertices
    (``parent``, ``component``, ``label``) hold *positions* into
    :attr:`ids`; ``UNREACHED`` (2**32 - 1) marks "none" in those and in
    ``depth``. Summary fields (``reached``, ``components``, ``top``, ...)
    are attributes too.

    >>> r = plexus.from_edges([0, 1], [1, 2]).bfs(source=0)
    >>> r.depth.tolist()
    [0, 1, 2]
    >>> r.to_dict()
    {0: 0, 1: 1, 2: 2}
    """

    def __init__(self, graph: "Graph", algorithm: str, raw: Mapping[str, Any]) -> None:
        self.graph = graph
        self.algorithm = algorithm
        self.columns: Dict[str, np.ndarray] = dict(raw["columns"])
        self.kinds: Dict[str, str] = dict(raw["kinds"])
        self.summary: Dict[str, Any] = json.loads(raw["summary_json"])
        self.iterations: Optional[int] = raw["iterations"]
        self.compute_seconds: Optional[float] = raw["compute_seconds"]
        self.verified: Union[None, bool, str] = raw["verified"]

    def __getattr__(self, name: str) -> Any:
        cols = self.__dict__.get("columns", {})
        if name in cols:
            return cols[name]
        summary = self.__dict__.get("summary", {})
        if name in summary:
            return summary[name]
        raise AttributeError(f"{self.algorithm} result has no column or summary field '{name}'")

    def __dir__(self) -> Iterable[str]:
        return list(super().__dir__()) + list(self.columns) + list(self.summary)

    def __repr__(self) -> str:
        cols = ", ".join(self.columns)
        return (
            f"<plexus.Result {self.algorithm} on {self.graph.num_vertices:,} vertices: "
            f"columns [{cols}]>"
        )

    @property
    def ids(self) -> Union[np.ndarray, List[str]]:
        """External ids by position (int64 array, or a list of str)."""
        return self.graph.ids

    @property
    def main(self) -> str:
        """The name of the main column (the first)."""
        return next(iter(self.columns))

    def to_numpy(self, column: Optional[str] = None) -> np.ndarray:
        """The main column (or ``column``) as a numpy array (no copy)."""
        return self.columns[column or self.main]

    def _external(self, positions: np.ndarray) -> Any:
        """External ids of positions (UNREACHED stays a marker for callers)."""
        ids = self.graph.ids
        if isinstance(ids, list):
            arr = np.empty(len(ids), dtype=object)
            arr[:] = ids
            ids = arr
        safe = np.where(positions == UNREACHED, 0, positions)
        return ids[safe]

    def to_pandas(self) -> Any:
        """A pandas DataFrame: ``id`` then every column in external terms
        (vertex columns as ids, "none" as a missing value)."""
        import pandas as pd

        data: Dict[str, Any] = {"id": self.graph.ids}
        for name, col in self.columns.items():
            kind = self.kinds[name]
            if kind in _NONE_KINDS:
                none = col == UNREACHED
                vals = self._external(col) if kind == "vertex" else col.astype(np.int64)
                s = pd.Series(vals)
                if none.any():
                    s = s.astype("Int64" if s.dtype.kind in "iu" else object).mask(none)
                data[name] = s
            else:
                data[name] = col
        return pd.DataFrame(data)

    def to_arrow(self) -> Any:
        """A pyarrow Table: ``id`` then every column (nulls for "none")."""
        import pyarrow as pa

        arrays = [pa.array(self.graph.ids)]
        names = ["id"]
        for name, col in self.columns.items():
            kind = self.kinds[name]
            if kind in _NONE_KINDS:
                mask = col == UNREACHED
                vals = self._external(col) if kind == "vertex" else col.astype(np.int64)
                arrays.append(pa.array(vals, mask=mask))
            else:
                arrays.append(pa.array(col))
            names.append(name)
        return pa.Table.from_arrays(arrays, names=names)

    def to_dict(self, column: Optional[str] = None) -> Dict[Any, Any]:
        """``{id: value}`` of the main column (or ``column``), NetworkX-style:
        vertices with no value (unreached, infinite distance) are left out,
        vertex values are external ids."""
        name = column or self.main
        col = self.columns[name]
        kind = self.kinds[name]
        ids = self.graph.ids
        keep: Optional[np.ndarray] = None
        if kind in _NONE_KINDS:
            keep = col != UNREACHED
        elif kind == "float" and name == "distance":
            keep = np.isfinite(col)
        vals: Any = self._external(col) if kind == "vertex" else col
        idx = np.arange(len(col)) if keep is None else np.flatnonzero(keep)
        id_list = [ids[i] for i in idx] if isinstance(ids, list) else ids[idx].tolist()
        val_list = vals[idx].tolist()
        return dict(zip(id_list, val_list))


# ------------------------------------------------------------------- graphs

_Ids = Union[np.ndarray, List[str]]


class Graph:
    """A graph: stored (memory-mapped) or in memory.

    >>> g = plexus.from_edges(["a", "b"], ["b", "c"], directed=False)
    >>> g.num_vertices, g.num_edges, g.directed
    (3, 2, False)
    """

    def __init__(self, native: Any) -> None:
        self._g = native
        self._ids: Optional[_Ids] = None

    # -- facts
    @property
    def name(self) -> Optional[str]:
        """The stored name, or None for a graph held only in memory."""
        return self._g.name

    @property
    def num_vertices(self) -> int:
        """Number of vertices."""
        return self._g.num_vertices

    @property
    def num_edges(self) -> int:
        """Number of edges (arcs of a directed graph; undirected edges once)."""
        return self._g.num_edges

    @property
    def directed(self) -> bool:
        """Whether the graph is directed."""
        return self._g.directed

    @property
    def weighted(self) -> bool:
        """Whether the edges carry weights."""
        return self._g.weighted

    @property
    def ids(self) -> _Ids:
        """External ids by position: an int64 array, or a list of str."""
        if self._ids is None:
            self._ids = self._g.ids()
        return self._ids

    def __len__(self) -> int:
        return self.num_vertices

    def __repr__(self) -> str:
        name = f" '{self.name}'" if self.name else ""
        kind = "directed" if self.directed else "undirected"
        w = ", weighted" if self.weighted else ""
        return (
            f"<plexus.Graph{name}: {self.num_vertices:,} vertices, "
            f"{self.num_edges:,} edges, {kind}{w}>"
        )

    def position(self, vertex: Union[int, str]) -> Optional[int]:
        """The position (row in every result array) of an external id, or None."""
        return self._g.position(vertex)

    def edges(self) -> tuple:
        """``(src, dst, weights)``: the edges as external-id arrays (weights
        None when unweighted); an undirected edge once."""
        s, d, w = self._g.edges()
        ids = self.ids
        if isinstance(ids, list):
            arr = np.empty(len(ids), dtype=object)
            arr[:] = ids
            return arr[s], arr[d], w
        return ids[s], ids[d], w

    def save(self, name: str, data_dir: Optional[str] = None, replace: bool = False) -> "Graph":
        """Stores the graph as ``name`` and returns the stored graph.

        >>> g.save("tiny", data_dir=tmp)  # doctest: +SKIP
        <plexus.Graph 'tiny': ...>
        """
        return Graph(self._g.save(name, data_dir, replace))

    def to_networkx(self) -> Any:
        """A NetworkX ``DiGraph`` or ``Graph`` with the same ids (edge
        attribute ``weight`` when weighted).

        >>> plexus.from_edges([1], [2]).to_networkx().edges()
        OutEdgeView([(1, 2)])
        """
        import networkx as nx

        G = nx.DiGraph() if self.directed else nx.Graph()
        ids = self.ids
        G.add_nodes_from(ids if isinstance(ids, list) else ids.tolist())
        s, d, w = self.edges()
        s, d = s.tolist(), d.tolist()
        if w is None:
            G.add_edges_from(zip(s, d))
        else:
            G.add_weighted_edges_from(zip(s, d, w.tolist()))
        return G

    # -- algorithms
    def run(
        self,
        algorithm: str,
        *,
        verify: bool = False,
        progress: Any = None,
        executor: Optional[str] = None,
        **params: Any,
    ) -> Result:
        """Runs ``algorithm`` (a name of :func:`algorithms`) with its
        parameters; a bad parameter raises ValueError naming it.

        The computation releases the GIL; Ctrl-C stops it at the next
        superstep with KeyboardInterrupt. ``progress`` is a callable
        ``(supersteps, active_vertices, seconds)`` called a few times a
        second, or True for a tqdm bar (the default in notebooks when tqdm
        is installed). ``verify`` checks the result's defining property
        (``Result.verified`` is True or the failure).

        >>> plexus.from_edges([0, 1], [1, 2]).run("bfs", source=0).reached
        3
        """
        cb = _progress_for(algorithm, progress)
        try:
            raw = self._g.run(algorithm, params, verify, cb, executor)
        finally:
            if isinstance(cb, _Bar):
                cb.close()
        return Result(self, algorithm, raw)

    def bfs(self, source: Any = None, **kw: Any) -> Result:
        """Breadth-first search: ``depth`` (hops) and ``parent`` of every vertex.

        >>> plexus.from_edges([0, 1], [1, 2]).bfs(0).depth.tolist()
        [0, 1, 2]
        """
        return self.run("bfs", source=source, **kw)

    def nhop(self, source: Any = None, hops: Optional[int] = None, **kw: Any) -> Result:
        """Vertices within ``hops`` hops of ``source`` (``depth``).

        >>> plexus.from_edges([0, 1], [1, 2]).nhop(0, hops=1).reached
        2
        """
        return self.run("nhop", source=source, hops=hops, **kw)

    def sssp(self, source: Any = None, delta: Optional[float] = None, **kw: Any) -> Result:
        """Shortest paths by weight (delta-stepping): ``distance`` and ``parent``.

        >>> g = plexus.from_edges([0, 1], [1, 2], weights=[2.0, 0.5])
        >>> g.sssp(0).distance.tolist()
        [0.0, 2.0, 2.5]
        """
        return self.run("sssp", source=source, delta=delta, **kw)

    def pagerank(
        self,
        damping: Optional[float] = None,
        tol: Optional[float] = None,
        iterations: Optional[int] = None,
        **kw: Any,
    ) -> Result:
        """PageRank (``rank``, summing to 1); stops when the L1 change is
        below n·``tol`` (NetworkX's rule; default 1e-6) or after
        ``iterations``.

        >>> r = plexus.from_edges([0, 1, 2], [1, 2, 0]).pagerank(damping=0.85)
        >>> np.round(r.rank, 4).tolist()
        [0.3333, 0.3333, 0.3333]
        """
        kw.setdefault("tolerance", tol)
        return self.run("pagerank", damping=damping, iterations=iterations, **kw)

    def ppr(self, source: Any = None, damping: Optional[float] = None, tol: Optional[float] = None, **kw: Any) -> Result:
        """Personalised PageRank from ``source`` (``rank``).

        >>> r = plexus.from_edges([0, 1], [1, 0]).ppr(0)
        >>> bool(r.rank[0] > r.rank[1])
        True
        """
        kw.setdefault("tolerance", tol)
        return self.run("ppr", source=source, damping=damping, **kw)

    def wcc(self, **kw: Any) -> Result:
        """Weakly connected components: ``component`` (a member's position).

        >>> plexus.from_edges([0, 2], [1, 3]).wcc().components
        2
        """
        return self.run("wcc", **kw)

    def scc(self, **kw: Any) -> Result:
        """Strongly connected components: ``component``.

        >>> plexus.from_edges([0, 1, 1], [1, 0, 2]).scc().components
        2
        """
        return self.run("scc", **kw)

    def betweenness(self, k: Optional[int] = None, seed: Optional[int] = None, **kw: Any) -> Result:
        """Betweenness centrality (``betweenness``), normalised as NetworkX's
        default (by 1/((n-1)(n-2)), twice that for undirected graphs), exact
        or from ``k`` sampled sources drawn by ``seed``.

        >>> plexus.from_edges([0, 1], [1, 2]).betweenness().betweenness.tolist()
        [0.0, 0.5, 0.0]
        """
        return self.run("betweenness", samples=k, seed=seed, **kw)

    def triangles(self, **kw: Any) -> Result:
        """Triangles through each vertex (the ``triangles`` column) and the
        total (``summary["triangles"]``).

        >>> r = plexus.from_edges([0, 1, 2], [1, 2, 0], directed=False).triangles()
        >>> r.triangles.tolist(), r.summary["triangles"]
        ([1, 1, 1], 1)
        """
        return self.run("triangles", **kw)

    def lcc(self, **kw: Any) -> Result:
        """Local clustering coefficient (``lcc``) and its ``average``.

        >>> plexus.from_edges([0, 1, 2], [1, 2, 0], directed=False).lcc().average
        1.0
        """
        return self.run("lcc", **kw)

    def kcore(self, k: Optional[int] = None, **kw: Any) -> Result:
        """Core numbers (``core``); with ``k``, membership of the k-core (``in_k_core``).

        >>> plexus.from_edges([0, 1, 2], [1, 2, 0], directed=False).kcore().max_core
        2
        """
        return self.run("kcore", k=k, **kw)

    def cdlp(self, iterations: Optional[int] = None, **kw: Any) -> Result:
        """Community detection by label propagation (``label``).

        >>> tri = plexus.from_edges([0, 1, 2, 3, 4, 5], [1, 2, 0, 4, 5, 3], directed=False)
        >>> tri.cdlp().communities
        2
        """
        return self.run("cdlp", iterations=iterations, **kw)

    def coloring(self, seed: Optional[int] = None, **kw: Any) -> Result:
        """A proper vertex colouring (``color``) and the number of ``colors``.

        >>> plexus.from_edges([0, 1], [1, 2], directed=False).coloring().colors
        2
        """
        return self.run("coloring", seed=seed, **kw)

    def mis(self, seed: Optional[int] = None, **kw: Any) -> Result:
        """A maximal independent set (``in_set``) and its ``size``.

        >>> int(plexus.from_edges([0, 1], [1, 2], directed=False).mis().in_set.sum()) >= 1
        True
        """
        return self.run("mis", seed=seed, **kw)


# ---------------------------------------------------------------- graphs in

def open(name: str, data_dir: Optional[str] = None) -> Graph:  # noqa: A001
    """Opens the stored graph ``name`` (memory-mapped, O(1); a live graph's
    newest committed version). ``data_dir`` defaults to ``$PLEXUS_DATA``
    or ``./plexus-data``; a missing graph raises FileNotFoundError.

    >>> g = plexus.open("wiki-Vote")  # doctest: +SKIP
    """
    return Graph(_plexus.NativeGraph.open(name, None if data_dir is None else os.fspath(data_dir)))


def _is_dataframe(x: Any) -> bool:
    mod = type(x).__module__
    return (mod.startswith("pandas") and hasattr(x, "columns")) or (
        mod.startswith("pyarrow") and hasattr(x, "column_names")
    )


def _column(table: Any, key: Any) -> Any:
    if hasattr(table, "column_names"):  # pyarrow Table
        return table.column(key) if isinstance(key, str) else table.column(int(key))
    return table[key] if isinstance(key, str) else table.iloc[:, int(key)]


def _ids(x: Any, what: str) -> Union[np.ndarray, List[str]]:
    """An int64 array (no copy when it already is one) or a list of str."""
    mod = type(x).__module__
    if mod.startswith("pyarrow"):
        import pyarrow as pa

        if x.null_count:
            raise ValueError(f"{what} has {x.null_count} missing ids")
        if pa.types.is_integer(x.type):
            if isinstance(x, pa.ChunkedArray):
                x = x.combine_chunks()
            x = x.to_numpy(zero_copy_only=False)
        else:
            return [str(s) for s in x.to_pylist()] if not (
                pa.types.is_string(x.type) or pa.types.is_large_string(x.type)
            ) else x.to_pylist()
    elif mod.startswith("pandas"):
        if x.isna().any():
            raise ValueError(f"{what} has {int(x.isna().sum())} missing ids")
        x = x.to_numpy()
    a = np.asarray(x)
    if a.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {a.shape}")
    if a.dtype.kind == "i":
        return np.ascontiguousarray(a, dtype=np.int64)
    if a.dtype.kind == "u":
        if a.size and a.max() > np.iinfo(np.int64).max:
            raise ValueError(f"{what} has ids above 2**63 - 1")
        return np.ascontiguousarray(a, dtype=np.int64)
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
            raise ValueError(f"{what} holds non-integer numbers; ids are integers or strings")
        return np.ascontiguousarray(a, dtype=np.int64)
    if a.dtype.kind in "USO":
        lst = a.tolist()
        return lst
    if a.dtype.kind == "b":
        raise TypeError(f"{what} holds booleans; ids are integers or strings")
    raise TypeError(f"{what} has dtype {a.dtype}; ids are integers or strings")


def _weights(w: Any) -> Optional[np.ndarray]:
    if w is None:
        return None
    if type(w).__module__.startswith("pyarrow"):
        if w.null_count:
            raise ValueError(f"weights has {w.null_count} missing values")
        w = w.to_numpy(zero_copy_only=False)
    elif type(w).__module__.startswith("pandas"):
        w = w.to_numpy()
    try:
        a = np.ascontiguousarray(w, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"weights must be numbers: {e}") from None
    if a.ndim != 1:
        raise ValueError(f"weights must be one-dimensional, got shape {a.shape}")
    return a


def from_edges(
    src: Any,
    dst: Any = None,
    weights: Any = None,
    directed: bool = True,
    name: Optional[str] = None,
    data_dir: Optional[str] = None,
    nodes: Any = None,
    src_col: Optional[str] = None,
    dst_col: Optional[str] = None,
    self_loops: str = "keep",
    duplicates: str = "keep",
    order: Optional[str] = None,
) -> Graph:
    """A graph from edge arrays: ``src[i] -> dst[i]`` with optional
    ``weights[i]`` (numpy arrays, pandas Series, pyarrow arrays or lists;
    integer or string ids). ``src`` may instead be a pandas DataFrame or
    pyarrow Table, with ``src_col``, ``dst_col`` and ``weights`` naming its
    columns (default: the first two columns, no weights). ``nodes`` adds vertices (isolated
    ones included). Integer arrays are read in place; no Python loop runs
    per edge. ``self_loops`` (keep, drop), ``duplicates`` (keep, drop, min,
    sum) and ``order`` (auto, none, degree, rcm) are ``plexus import``'s
    options of the same names. With ``name`` the graph is stored (and the
    stored graph returned), else it stays in memory.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1, 2], "b": [2, 3], "w": [0.5, 1.5]})
    >>> plexus.from_edges(df, src_col="a", dst_col="b", weights="w")
    <plexus.Graph: 3 vertices, 2 edges, directed, weighted>
    """
    if _is_dataframe(src):
        table = src
        cols = list(table.column_names if hasattr(table, "column_names") else table.columns)
        if dst is not None:
            raise TypeError("with a table as src, name its columns with src_col= and dst_col=")
        keys = [src_col or (cols[0] if cols else None), dst_col or (cols[1] if len(cols) > 1 else None)]
        if isinstance(weights, str):
            keys.append(weights)
        for k in keys:
            if k is None or k not in cols:
                raise ValueError(f"the table has no column {k!r} (it has {', '.join(map(str, cols))})")
        src, dst = _column(table, keys[0]), _column(table, keys[1])
        if isinstance(weights, str):
            weights = _column(table, weights)
    elif dst is None:
        raise TypeError("from_edges needs src and dst (or a table as src)")
    s, d = _ids(src, "src"), _ids(dst, "dst")
    n = None if nodes is None else _ids(nodes, "nodes")
    native = _plexus.NativeGraph.from_arrays(
        s, d, _weights(weights), n, directed, self_loops, duplicates, order
    )
    g = Graph(native)
    if name is not None:
        return g.save(name, data_dir)
    return g


def read(path: Union[str, "os.PathLike[str]"], name: Optional[str] = None, data_dir: Optional[str] = None, **options: Any) -> Graph:
    """Imports a file as ``plexus import`` does (edge lists ``.el``/``.wel``,
    Matrix Market, CSV, Graphalytics; ``.gz``/``.zst`` read on the fly).
    Options by the CLI's names: ``directed``, ``weighted``, ``format``,
    ``self_loops``, ``duplicates``, ``order``, ``src_col``, ``dst_col``,
    ``weight_col``, ``nodes``, ``node_col``, ``no_header``, ``delimiter``,
    ``ids``. With ``name`` the graph is stored.

    >>> g = plexus.read("edges.csv", src_col="from", dst_col="to")  # doctest: +SKIP
    """
    g = Graph(_plexus.NativeGraph.read(os.fspath(path), options))
    if name is not None:
        return g.save(name, data_dir)
    return g


def from_networkx(G: Any, weight: Optional[str] = "weight") -> Graph:
    """A graph from a NetworkX graph whose nodes are all integers or all
    strings (edge attribute ``weight`` as weights when every edge has it).

    >>> import networkx as nx
    >>> plexus.from_networkx(nx.path_graph(3))
    <plexus.Graph: 3 vertices, 2 edges, undirected>
    """
    if G.is_multigraph():
        raise ValueError("from_networkx takes a Graph or DiGraph, not a multigraph")
    nodes = list(G)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in nodes):
        node_ids: Any = np.asarray(nodes, dtype=np.int64)
    elif all(isinstance(v, str) for v in nodes):
        node_ids = nodes
    else:
        bad = next(v for v in nodes if not isinstance(v, (int, str)))
        raise ValueError(f"node {bad!r} is neither an int nor a str; relabel the graph first")
    edges = list(G.edges(data=True))
    src = [u for u, _, _ in edges]
    dst = [v for _, v, _ in edges]
    w = None
    if weight is not None and edges and all(weight in a for _, _, a in edges):
        w = np.asarray([a[weight] for _, _, a in edges], dtype=np.float64)
    if isinstance(node_ids, np.ndarray):
        s: Any = np.asarray(src, dtype=np.int64)
        d: Any = np.asarray(dst, dtype=np.int64)
    else:
        s, d = src, dst
    native = _plexus.NativeGraph.from_arrays(s, d, w, node_ids, G.is_directed())
    return Graph(native)


def batch(jobs: Sequence[Mapping[str, Any]], mode: str = "shared", threads: int = 0) -> Dict[str, Result]:
    """Runs many jobs through the job manager and returns results by job name.

    Each job is a dict: ``algorithm`` (bfs, sssp, pagerank, ppr, wcc or
    cdlp), ``graph`` (a :class:`Graph` or a stored name), optional ``name``
    (default ``job<i>``) and the algorithm's parameters. ``mode`` is
    ``shared`` (one scan of the graph per superstep for all jobs, fused
    where they fit), ``independent`` (side by side) or ``sequential``.
    Every job is checked before any runs.

    >>> g = plexus.from_edges([0, 1], [1, 2])
    >>> rs = plexus.batch([{"algorithm": "bfs", "graph": g, "source": 0},
    ...                    {"algorithm": "pagerank", "graph": g, "name": "pr"}])
    >>> sorted(rs)
    ['job0', 'pr']
    """
    graphs: Dict[Any, Graph] = {}
    plan = []
    for i, job in enumerate(jobs):
        job = dict(job)
        try:
            algorithm = job.pop("algorithm")
        except KeyError:
            raise ValueError(f"job {i} has no 'algorithm'") from None
        g = job.pop("graph", None)
        if g is None:
            raise ValueError(f"job {i} has no 'graph'")
        if not isinstance(g, Graph):
            key = (str(g), job.get("data_dir"))
            if key not in graphs:
                graphs[key] = open(str(g), job.get("data_dir"))
            g = graphs[key]
        job.pop("data_dir", None)
        name = str(job.pop("name", f"job{i}"))
        if "tol" in job:
            job.setdefault("tolerance", job.pop("tol"))
        plan.append((name, g, algorithm, job))
    names = [p[0] for p in plan]
    if len(set(names)) != len(names):
        raise ValueError("job names must be distinct")
    raw, _stats = _plexus.run_batch([(n, g._g, a, p) for n, g, a, p in plan], mode, threads)
    return {n: Result(g, a, raw[n]) for n, g, a, _ in plan}
