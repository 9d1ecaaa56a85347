"""perflab — the GPU Performance Lab's package.

    import perflab as lab
    df = lab.run("slug.experiment")   # live on a GPU, replayed from results/ without one
                                      # (live: its reader plan; plan="full": the full one)
    lab.caption(df)                   # where the numbers came from

Each chapter's code is a package perflab.chapters.<slug>; CONTRIBUTING.md says how one
is added.
"""
from .device import mode
from .errors import (ConfigError, KernelCompileError, KernelRuntimeError, LaunchConfigError,
                     NoGPUError, PerflabError, ResultsError, UnknownExperimentError)
from .lab import caption, captions, frame, record, replay, run

__all__ = ["run", "replay", "record", "frame", "caption", "captions", "mode", "PerflabError",
           "ConfigError", "KernelCompileError", "KernelRuntimeError", "LaunchConfigError",
           "NoGPUError", "ResultsError", "UnknownExperimentError"]
