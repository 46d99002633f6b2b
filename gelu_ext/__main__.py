"""``python -m gelu_ext [demo|bench|moons|bert|config] [options]``.

Without a command it runs the demo.  Each job lives in its own module and is
imported only when asked for, so a missing optional extra only affects it.
"""
import os
import sys

_JOBS = {
    "demo": ("gelu_ext.jobs.demo", "the article's values, GELU's minimum and a quick speed check"),
    "bench": ("gelu_ext.jobs.bench", "throughput and accuracy tables against NumPy and the peers"),
    "moons": ("gelu_ext.jobs.moons", "ReLU vs GELU on make_moons over many seeds"),
    "bert": ("gelu_ext.jobs.bert", "a pretrained BERT with GELU, tanh-GELU and ReLU"),
    "config": ("gelu_ext._config", "build and run-time configuration"),
}


def _usage():
    lines = ["usage: python -m gelu_ext [command] [options]", "", "commands:"]
    lines += [f"  {name:<7} {what}" for name, (_, what) in _JOBS.items()]
    lines += ["", "python -m gelu_ext COMMAND --help for a command's options"]
    return "\n".join(lines)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print(_usage())
        return 0
    name = argv.pop(0) if argv and not argv[0].startswith("-") else "demo"
    if name not in _JOBS:
        print(_usage(), file=sys.stderr)
        print(f"\nerror: unknown command {name!r}", file=sys.stderr)
        return 2
    from gelu_ext.jobs import _common
    # Ctrl-C anywhere in the job: "gelu_ext: interrupted" and exit status 130
    # (the guard ends the process itself; _common says why).
    with _common.ctrl_c_exits("gelu_ext: interrupted"):
        job = _common.import_module(_JOBS[name][0])
        try:
            rc = job.main(argv) or 0
            sys.stdout.flush()           # a pipe's buffered output, written here
            return rc
        except BrokenPipeError:
            # the reader left (`python -m gelu_ext config | head`): stop
            # quietly, as a shell tool killed by SIGPIPE does; stdout goes to
            # devnull so the flush at exit cannot raise again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141


if __name__ == "__main__":
    sys.exit(main())
