"""fastgelu (or python -m fastgelu) info | check | bench [--quick] [--plot FILE] [--models] [--instructions]"""
import argparse
import sys

import fastgelu


def cmd_info(args):
    fastgelu.show_config()
    return 0


def cmd_check(args):
    from . import _check
    ok = _check.run()
    print("all bounds hold" if ok else "SOME BOUNDS EXCEEDED")
    return 0 if ok else 1


def cmd_bench(args):
    from .bench import cli
    return cli.run(args)


def main(argv=None):
    p = argparse.ArgumentParser(prog="fastgelu", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("info", help="version, ISA, OpenMP and thread count")
    sub.add_parser("check", help="accuracy self-test; exit 1 if a bound is exceeded")
    b = sub.add_parser("bench", help="throughput against NumPy/SciPy, PyTorch and ONNX Runtime")
    b.add_argument("--quick", action="store_true", help="smaller sizes, under a minute")
    b.add_argument("--plot", metavar="FILE", help="write a PNG bar chart (needs matplotlib)")
    b.add_argument("--models", action="store_true",
                   help="whole transformers models (random-init), stock vs fastgelu.torch.patch (needs transformers)")
    b.add_argument("--instructions", action="store_true",
                   help="instructions per element of every kernel under Valgrind's callgrind (AVX2 and baseline "
                        "builds), compared with the baseline file; exit 1 on a change of more than 1%%")
    b.add_argument("--baseline", metavar="FILE", default="benches/instructions.json",
                   help="the instruction-count baseline (default: %(default)s, in a checkout)")
    b.add_argument("--update-baseline", action="store_true", help="with --instructions: rewrite the baseline")
    args = p.parse_args(argv)
    return {"info": cmd_info, "check": cmd_check, "bench": cmd_bench}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
