"""MCP round-trip latency of ``search`` and ``retrieve``: warm p50/p95, in-process and over stdio.

    PYTHONPATH=src python -m benchmarks.mcp_latency [--repeats 5] [--dataset code-nav-flask]

The dataset's ``corpus.tar.gz`` (shared/datasets/<name>) is unpacked into a temporary folder,
added as a recursive root of a temporary HERMES_HOME and indexed once (keyword mode, the
default config). Then, for each of its queries (``queries.jsonl``):

- **api**: ``Workspace.search`` / ``Workspace.retrieve`` on one open Workspace (the floor: no MCP);
- **in-process**: ``mcp.Client(server)`` on the server object (handshake era: JSON-RPC over
  memory streams, arguments validated, result rendered, a worker thread per call);
- **stdio**: ``mcp.Client(StdioServerParameters(...))`` driving ``python -m hermes_workspace mcp``
  as a subprocess (adds JSON encoding and two pipes).

Each query is called once to warm up, then ``repeats`` times round-robin; p50/p95 are over all
timed calls (``time.perf_counter`` around the awaited call, so the client's own parsing is
included). ``retrieve`` is measured only when the Workspace has it. Also printed: the cost of
``Workspace.open`` + ``close`` and of opening one and running the first search (what a
workspace per call would add). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

REPO = Path(__file__).resolve().parents[1]
DATASETS = Path(os.environ.get("HERMES_BENCH_DATASETS", REPO.parent / "shared" / "datasets"))


def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    """(p50, p95) in ms; p95 by the nearest-rank method."""
    ordered = sorted(samples_ms)
    p95 = ordered[max(0, min(len(ordered) - 1, -(-95 * len(ordered) // 100) - 1))]
    return statistics.median(ordered), p95


def prepare(dataset: str, root: Path) -> tuple[Path, list[str]]:
    source = DATASETS / dataset
    corpus = root / "corpus"
    corpus.mkdir()
    with tarfile.open(source / "corpus.tar.gz") as archive:
        archive.extractall(corpus, filter="data")
    home = root / "home"
    home.mkdir()
    from hermes_workspace import Workspace

    with Workspace.open(home) as ws:
        ws.add_root(corpus, recursive=True)
        ws.index()
    queries = [json.loads(line)["query"] for line in (source / "queries.jsonl").read_text().splitlines() if line]
    return home, queries


def time_sync(call: Callable[[str], Any], queries: list[str], repeats: int) -> list[float]:
    for q in queries:
        call(q)
    samples = []
    for _ in range(repeats):
        for q in queries:
            start = time.perf_counter()
            call(q)
            samples.append((time.perf_counter() - start) * 1000)
    return samples


async def time_async(call: Callable[[str], Awaitable[Any]], queries: list[str], repeats: int) -> list[float]:
    for q in queries:
        result = await call(q)
        if result.is_error:
            raise SystemExit(f"tool error: {result.content[0].text}")
    samples = []
    for _ in range(repeats):
        for q in queries:
            start = time.perf_counter()
            await call(q)
            samples.append((time.perf_counter() - start) * 1000)
    return samples


async def measure_client(client_target: Any, queries: list[str], repeats: int, tools: list[str]) -> dict[str, list[float]]:
    from mcp import Client

    out: dict[str, list[float]] = {}
    async with Client(client_target, mode="legacy") as client:
        for tool in tools:
            out[tool] = await time_async(lambda q, tool=tool: client.call_tool(tool, {"query": q}), queries, repeats)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="code-nav-flask")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from mcp import StdioServerParameters

    from hermes_workspace import Workspace
    from hermes_workspace.entrypoints.mcp_server import build_server, open_pool

    with tempfile.TemporaryDirectory(prefix="mcp-latency-") as tmp:
        home, queries = prepare(args.dataset, Path(tmp))
        rows: list[tuple[str, str, list[float]]] = []

        rows.append(("Workspace.open+close", "-", time_sync(lambda q: Workspace.open(home).close(), queries, args.repeats)))

        def open_and_search(q: str) -> None:
            with Workspace.open(home) as ws:
                ws.search(q)

        rows.append(("open+search+close", "search", time_sync(open_and_search, queries, args.repeats)))

        with Workspace.open(home) as ws:
            tools = ["search"] + (["retrieve"] if callable(getattr(ws, "retrieve", None)) else [])
            for tool in tools:
                rows.append(("api", tool, time_sync(getattr(ws, tool), queries, args.repeats)))

        pool, _ = open_pool(home)
        server = build_server(pool)
        for tool, samples in anyio.run(measure_client, server, queries, args.repeats, tools).items():
            rows.append(("mcp in-process", tool, samples))
        pool.close()

        env = dict(os.environ, HERMES_HOME=str(home), PYTHONPATH=str(REPO / "src"))
        stdio = StdioServerParameters(command=sys.executable, args=["-m", "hermes_workspace", "mcp"], env=env)
        for tool, samples in anyio.run(measure_client, stdio, queries, args.repeats, tools).items():
            rows.append(("mcp stdio", tool, samples))

    print(f"{args.dataset}: {len(queries)} queries x {args.repeats} repeats (warm), ms")
    print(f"{'path':<22} {'tool':<9} {'p50':>8} {'p95':>8}")
    for path, tool, samples in rows:
        p50, p95 = percentiles(samples)
        print(f"{path:<22} {tool:<9} {p50:>8.2f} {p95:>8.2f}")
    if "retrieve" not in tools:
        print("retrieve: not measured (this Workspace has no retrieve yet)")


if __name__ == "__main__":
    main()
