"""perflab — the GPU Performance Lab's package.

    import perflab as lab
    df = lab.run("slug.experiment")   # live on a GPU, replayed from results/ without one
                                      # (live: its reader plan; plan="full": the full one)
    lab.caption(df)                   # where the numbers came from
    lab.beside(df)                    # [df], or live on another GPU [df, the recorded frame]

Each chapter's code is a package perflab.chapters.<slug>; CONTRIBUTING.md says how one
is added.
"""
from .device import mode
from .errors import (ConfigError, KernelCompileError, KernelRuntimeError, LaunchConfigError,
                     NoGPUError, PerflabError, ResultsError, UnknownExperimentError)
from .lab import caption, captions, frame, record, replay, run
from .sidebyside import beside, fill_not_run, reference

__all__ = ["run", "replay", "record", "frame", "caption", "captions", "beside", "reference",
           "fill_not_run", "mode", "PerflabError",
           "ConfigError", "KernelCompileError", "KernelRuntimeError", "LaunchConfigError",
           "NoGPUError", "ResultsError", "UnknownExperimentError"]
