"""The benchmark harness of hermes-workspace.

Run it with ``make bench`` (full) or ``make bench-quick``, or ``python -m benchmarks --quick|--full
[--only quality,workspace_qa,speed,latency,scaling,freshness,history]``. Each part writes ``benchmarks/results/<part>.json``;
``benchmarks/results/REPORT.md`` and the PNG plots beside it are rebuilt from those files.

Parts (one module each):

- :mod:`benchmarks.quality`: nDCG@10, recall@10 and MRR@10 on the BEIR sets of
  ``shared/datasets``, ours against bm25s, with ablations that explain the difference.
- :mod:`benchmarks.workspace_qa`: top-1/3/10 and hit spans on whole-repository sets with
  line-level gold, ours (keyword; hybrid in full mode) against two baselines
  (:mod:`benchmarks.qa_baselines`: bm25s over structural units, a ripgrep proxy).
- :mod:`benchmarks.speed`: cold, unchanged and 1%-changed ``index`` runs on real corpora (the
  machine's standard library, the Django sdist, the datasets), each a separate process, against a
  raw FTS5 floor (:mod:`benchmarks.floor`).
- :mod:`benchmarks.latency`: in-process search p50/p95, whole-process CLI search, ripgrep.
- :mod:`benchmarks.scaling`: 1x..8x copies of the standard library.
- :mod:`benchmarks.freshness`: with ``hermes-workspace watch`` running on 10,000 files, seconds
  from a write to the change being searchable, a 500-file branch switch, the watcher's idle CPU.
- :mod:`benchmarks.history`: project-history recall on a synthetic host session store of
  100,000 messages: fixture, first and incremental sync, keyword (and hybrid) search p50/p95
  against the host's naive ``LIKE`` scan and its own FTS5 table, project isolation.

Only the public API (:class:`hermes_workspace.Workspace`) and the ``hermes-workspace`` CLI are
measured. The index file is opened directly (read-only, its documented schema) only for
bookkeeping (which files were indexed) and for the FTS5 ablations of the quality part; the history
part also times its history index's keyword query alone (a breakdown) and reads the synthetic
host store read-only for its baselines and isolation check.
"""
