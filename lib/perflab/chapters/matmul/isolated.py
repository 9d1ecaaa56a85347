"""The audit's cases that may lose the CUDA context, in a process of their own:

    python -m perflab.chapters.matmul.isolated KERNEL CASE [CASE ...]

runs each case (perflab.chapters.matmul.audit.ISOLATED) on kernel KERNEL and prints one
line `RESULT {json}` per case, in order. After a case that faulted (the context is lost)
it stops; `audit.run_isolated` starts a new process for the cases that remain."""
from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    from . import audit

    name, cases = argv[0], argv[1:]
    s = audit.get_subject(name)
    env = audit.Env.gpu()
    # Every kernel the subject may launch, compiled (or loaded from the disk cache) first.
    from ...kernels import warm
    warm(s.specs())
    for case in cases:
        _, fn = audit.ISOLATED[case]
        try:
            result = fn(s, env)
        except Exception as exc:            # noqa: BLE001 - reported, never swallowed
            result = audit.Case(case, "fail", f"the audit raised {type(exc).__name__}: {exc}")
        print("RESULT " + json.dumps(result.as_dict()), flush=True)
        if result.outcome in ("fault", "reported"):
            return 0                        # the context is gone: a new process goes on
        env.free()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
