"""``draw-bench``: run a benchmark suite, or aggregate the cells a benchmark folder holds.

    draw-bench --config configs/bench/reduced.yaml [--address HEAD:6379] [--output DIR]
    draw-bench --report DIR

The suite is :mod:`train.bench.suite`; the docs page "Benchmark" (``docs/benchmark.md``) describes it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from draw_env.commands import check_extras, reported_errors


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="draw-bench", description=__doc__.splitlines()[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--config", help="a benchmark suite's YAML config (configs/bench/*.yaml)")
    what.add_argument("--report", metavar="DIR", help="aggregate the cells of the benchmark folder DIR, run nothing")
    parser.add_argument("--address", help="run the cells as tasks of the Ray cluster at this address "
                        "(HEAD:6379, auto on a cluster node, or local: a Ray instance on this machine, a cell per core); "
                        "left out, they run here one after the other")
    parser.add_argument("--output", metavar="DIR", help="the benchmark folder (overrides output_dir)")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="config overrides (seeds=[0,1], panel.matches=50)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    check_extras("draw-bench")
    parser = build_parser()
    args = parser.parse_args(argv)
    with reported_errors(parser):
        if args.report is not None:
            if args.address is not None or args.output is not None or args.overrides:
                raise ValueError("--report takes no --address, --output or overrides")
            from train.bench.report import report
            from train.run_dir import MARKER, RunMarker, check_entries, read_run_file

            folder = Path(args.report)
            if not (folder / MARKER).is_file():
                raise ValueError(f"--report: {str(folder)!r} is no benchmark folder (no {MARKER})")
            check_entries(folder)  # the report writes summary.md, summary.json, report/: never through a link
            marker: RunMarker = read_run_file(folder / MARKER, RunMarker)
            found = marker.pipeline
            if found != "bench":
                raise ValueError(f"--report: {str(folder)!r} holds a run of pipeline: {found}, not a benchmark")
            summary = report(folder)
            print(summary["table"])
            print(f"Summary: {summary['markdown']}")
            return 0
        from train.bench.config import BenchConfig
        from train.bench.suite import bench_main
        from train.config import load

        overrides = [*args.overrides, *([f"output_dir={args.output}"] if args.output is not None else [])]
        config = load(BenchConfig, args.config, overrides)
        args.command = shlex.join(["draw-bench", *(sys.argv[1:] if argv is None else argv)])
        try:
            return bench_main(config, args)
        except KeyboardInterrupt:
            return 130
    return 0  # pragma: no cover - reported_errors exits


if __name__ == "__main__":
    sys.exit(main())
