"""The lab's exceptions: every bad input ends in one of these, with a message that says
what was wrong and what to do about it."""


class PerflabError(Exception):
    """Base class of every error the lab raises on purpose."""


class NoGPUError(PerflabError):
    """Live measurement was asked for on a machine without a usable CUDA GPU."""


class KernelCompileError(PerflabError):
    """NVRTC rejected a kernel source; the message names the file and line."""


class ConfigError(PerflabError):
    """A kernel configuration (tile sizes, threads) that cannot work, caught before launch.
    `short`, where given, says why in a few words for a figure's label ("needs sm_90
    (wgmma and TMA)"); the message says it in full."""

    def __init__(self, *args, short: str | None = None):
        super().__init__(*args)
        self.short = short


class LaunchConfigError(ConfigError):
    """A launch the device cannot run (threads, shared memory, registers over a limit)."""


class KernelRuntimeError(PerflabError):
    """A CUDA error raised while a kernel ran; the message names the kernel."""


class ResultsError(PerflabError):
    """A results file that is missing, corrupt, hand-edited or stale."""


class UnknownExperimentError(PerflabError):
    """An experiment name that is not registered; the message lists the known ones."""


class HostUnavailableError(PerflabError):
    """This machine cannot run a host source (no cffi, no C compiler, or a CPU without the
    instruction set it is compiled for): replay the recorded rows, or pick another variant."""


class NoCompilerError(HostUnavailableError):
    """No C compiler that runs: $CC, cc, gcc and clang were tried."""


class UnsupportedISAError(HostUnavailableError):
    """The source's flags need an instruction set this CPU lacks (it would die of SIGILL)."""


class HostBuildError(KernelCompileError):
    """The C compiler rejected a host source or its cdef; the message shows its errors."""


def messages(cases) -> list[tuple[str, str]]:
    """(what, message) for each (what, call) of `cases`: the ConfigError the call raises,
    or "(accepted)" when it raises none. Any other exception propagates. For the pages'
    tables of what bad input is told."""
    out = []
    for what, call in cases:
        try:
            call()
            msg = "(accepted)"
        except ConfigError as exc:
            msg = str(exc)
        out.append((what, msg))
    return out


def require(ok, why: str, short: str | None = None) -> None:
    """One rule of a configuration check: ConfigError(`why`, `short`) unless `ok`. `why`
    is built before the rule is tested, so it must not need the rule to hold."""
    if not ok:
        raise ConfigError(why, short=short)


def refusal(check, *args) -> str | None:
    """Why a configuration cannot run: the text of the ConfigError `check(*args)` raises,
    or None where it raises none (for an invalid row, or an explorer's reason)."""
    try:
        check(*args)
    except ConfigError as exc:
        return str(exc)
    return None
