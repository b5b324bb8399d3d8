"""Exceptions raised by clts."""


class CltsError(Exception):
    """Base class of every clts error."""


class DeviceError(CltsError):
    """A device cannot run what was asked (missing capability, unusable driver, no device)."""


class KernelBuildError(CltsError):
    """A rendered kernel template failed to build; the message carries the log and the source."""

    def __init__(self, message, *, template=None, params=None, log=None, source=None):
        super().__init__(message)
        self.template = template
        self.params = params
        self.log = log
        self.source = source


class ProfileError(CltsError, ValueError):
    """A device profile YAML is malformed (unknown key, wrong type); names the file and key."""
