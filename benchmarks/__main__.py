"""``python -m benchmarks [--quick|--full] [--only quality,semantic,workspace_qa,speed,latency,scaling,incremental,freshness,history] [--report-only]``

Runs the chosen parts in order, each writing ``benchmarks/results/<part>.json``, then rebuilds
``benchmarks/results/REPORT.md`` and the plots from whatever result files exist. A part that fails
is reported and the others still run; the exit code is 1 if any part failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import traceback

from benchmarks import common

PARTS = ("quality", "semantic", "workspace_qa", "speed", "latency", "scaling", "scoping", "incremental",
         "freshness", "history")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[1])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_const", dest="mode", const="quick",
                       help="a few minutes: quality on every set, workspace QA in keyword mode, speed on the stdlib, scaling 1x-2x "
                            "(default)")
    group.add_argument("--full", action="store_const", dest="mode", const="full",
                       help="everything: workspace QA also in hybrid mode, speed on stdlib, Django and the datasets, scaling 1x-8x")
    parser.add_argument("--only", default=",".join(PARTS),
                        help=f"comma-separated parts to run (default: all of {','.join(PARTS)})")
    parser.add_argument("--report-only", action="store_true", help="only rebuild REPORT.md and the plots")
    parser.add_argument("--scales", default=None,
                        help="comma-separated copies of the standard library for scaling (e.g. 1,8), instead of the mode's")
    parser.add_argument("--keep", action="store_true", help="keep the temporary homes under benchmarks/work/tmp")
    args = parser.parse_args(argv)
    mode = common.MODES[args.mode or "quick"]
    if args.scales:
        try:
            scales = tuple(sorted({int(x) for x in args.scales.split(",") if x.strip()}))
        except ValueError:
            parser.error(f"--scales takes whole numbers separated by commas, got {args.scales!r}")
        if not scales or scales[0] < 1:
            parser.error("--scales takes copies from 1 up")
        mode = dataclasses.replace(mode, scales=scales)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown part(s): {', '.join(unknown)} (choose from {', '.join(PARTS)})")

    failed: list[str] = []
    if not args.report_only:
        common.log(f"mode {mode.name}: {', '.join(parts)}")
        if common.ripgrep() is None:
            common.log("ripgrep (rg) not found: the ripgrep comparisons are skipped (apt-get install -y ripgrep); "
                       "the workspace QA ripgrep proxy scans lines in Python")
        for part in PARTS:
            if part not in parts:
                continue
            module = __import__(f"benchmarks.{part}", fromlist=["run"])
            start = time.perf_counter()
            try:
                module.run(mode, keep=args.keep)
            except Exception:  # noqa: BLE001 - one broken part must not lose the others
                failed.append(part)
                common.log(f"{part} FAILED:\n{traceback.format_exc()}")
                common.save_result(part, mode, {"failed": traceback.format_exc()})
            common.log(f"{part} done in {time.perf_counter() - start:.0f}s")

    from benchmarks import report

    path = report.write()
    common.log(f"report: {path.relative_to(common.REPO_DIR)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
