"""Run processing passes from the command line, as a worker process would:

    python -m targets.worker --once          one pass, prints its summary
    python -m targets.worker --until-idle    passes until nothing is due
    python -m targets.worker --interval 60   a pass every 60 s until interrupted

Settings come from the environment, exactly as for the `tick` target."""

from __future__ import annotations

import argparse
import json
import time

from core.runtime import runtime_for
from core.settings import Settings
from processor.one_pass import until_idle
from targets.kinds import run_pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m targets.worker", description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--once", action="store_true")
    mode.add_argument("--until-idle", action="store_true")
    mode.add_argument("--interval", type=float, metavar="SECONDS")
    args = parser.parse_args(argv)
    rt = runtime_for(Settings.from_env())
    if args.until_idle:
        for summary in until_idle(rt, run_pass):
            print(json.dumps({"tick": summary}, sort_keys=True), flush=True)
        return 0
    while True:
        summary = run_pass(rt)
        print(json.dumps({"tick": summary}, sort_keys=True), flush=True)
        if args.once:
            return 0
        time.sleep(args.interval)


if __name__ == "__main__":
    raise SystemExit(main())
