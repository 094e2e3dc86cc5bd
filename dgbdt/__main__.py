"""Command line entry point: ``dgbdt <command>`` / ``python -m dgbdt <command>``."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

USAGE = """usage: dgbdt <command> [options]

commands:
  demo      train on generated HIGGS-like data and report (see --help)
  train     train on a CSV/TSV/LibSVM file: dgbdt train data=FILE [key=value ...] [config=FILE]
  predict   dgbdt predict data=FILE input_model=MODEL [output_result=FILE]
  convert_model  dgbdt convert_model input_model=MODEL convert_model=OUT [model_format=...]
  save_binary    dgbdt save_binary data=FILE [valid_data=FILES]  (writes FILE.bin)
  refit     dgbdt refit data=FILE input_model=MODEL [output_model=FILE] [refit_decay_rate=0.9]
  (LightGBM style: `dgbdt config=train.conf` with task=train|predict in the file also works)
"""


def main(argv: Sequence[str] | None = None) -> int:
    """The exit status; a closed pipe (141), Ctrl-C (130) or a failed write to
    stdout (1) end without a traceback.  Under mpiexec they end every rank."""
    try:
        return _main(argv)
    except BrokenPipeError:
        # `dgbdt --help | head`: the reader left.  Point stdout at /dev/null so
        # that the interpreter's final flush does not raise again (Python's
        # advice), and exit as a process killed by SIGPIPE would (128 + 13).
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # stdout without a file descriptor
            pass
        return _end_others(141)
    except KeyboardInterrupt:
        sys.stderr.write("dgbdt: interrupted\n")
        return _end_others(130)
    except OSError as exc:  # e.g. dgbdt --help > /dev/full
        sys.stderr.write(f"dgbdt: error: {exc}\n")
        return _end_others(1)


def _end_others(code: int) -> int:
    from .distributed import comm  # noqa: PLC0415 - the command's modules load only when it runs

    comm.abort_world(code)  # the other ranks may be waiting in a collective
    return code


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        from .cli.commands import help_text  # noqa: PLC0415 - the command's modules load only when it runs

        print(USAGE)
        print(help_text() if argv else "dgbdt --help lists every key and parameter.")
        return 0
    command, rest = argv[0], argv[1:]
    if command == "demo":
        from .cli.demo import run_demo  # noqa: PLC0415 - the command's modules load only when it runs

        return run_demo(rest)
    if command in ("train", "predict", "convert_model", "save_binary", "refit") or "=" in command:
        from .cli.commands import run  # noqa: PLC0415 - the command's modules load only when it runs

        return run(argv)
    print(f"dgbdt: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
