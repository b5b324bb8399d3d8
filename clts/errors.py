"""Exceptions raised by clts."""


class CltsError(Exception):
    """Base class of every clts error.

    Examples
    --------
    >>> import clts
    >>> issubclass(clts.DeviceError, clts.CltsError)
    True
    """


class DeviceError(CltsError):
    """A device cannot run what was asked (missing capability, unusable driver, no device).

    The message names the device and the missing capability, e.g. float64 data on a device
    without ``cl_khr_fp64``.

    Examples
    --------
    >>> import clts
    >>> try:
    ...     clts.get_device("no such device")
    ... except clts.DeviceError as e:
    ...     print("DeviceError")
    DeviceError
    """


class KernelBuildError(CltsError):
    """A rendered kernel template failed to build.

    The message carries the driver's log and the rendered source around the failing line.

    Attributes
    ----------
    template : str
        The template's path under ``clts/templates``.
    params : dict
        The parameters it was rendered with.
    log : str
        The driver's build log.
    source : str
        The rendered source (``CLTS_DUMP_SOURCES=DIR`` writes every source to ``DIR``).
    """

    def __init__(self, message, *, template=None, params=None, log=None, source=None):
        super().__init__(message)
        self.template = template
        self.params = params
        self.log = log
        self.source = source


class ProfileError(CltsError, ValueError):
    """A device profile YAML is malformed (unknown key, wrong type); names the file and key.

    Also a ``ValueError``, so ``except ValueError`` catches it.

    Examples
    --------
    >>> import clts
    >>> issubclass(clts.ProfileError, ValueError)
    True
    """


def warn_caller(message, category=UserWarning) -> None:
    """``warnings.warn`` at the user's line: the first frame outside the clts package, however
    deep inside it the warning is raised (wrappers such as ``vocabulary.renamed`` and helpers
    add frames that a fixed ``stacklevel`` would count wrongly)."""
    import os
    import sys
    import warnings
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(here):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level + 1)
