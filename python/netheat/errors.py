"""Exceptions raised by netheat.

Every user mistake becomes one of these, with a message that names what is
wrong and where; the CLI prints the message and exits with code 2.
"""

from __future__ import annotations


class NetheatError(Exception):
    """Base class of every netheat error."""

    exit_code = 2


class ConfigError(NetheatError):
    """A config file that cannot be used: names file, line, key and reason."""

    def __init__(
        self,
        message: str,
        file: str = "",
        line: int = 0,
        column: int = 0,
        key: str = "",
        reason: str = "",
    ) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.reason = reason or message


class InputError(NetheatError):
    """Bad input data (a flow file, a host reference, an argument)."""


class MalformedRequest(InputError):
    """A request that is not what the endpoint reads: not JSON, not an object, not its
    schema's shape (HTTP 400 in ``netheat serve``; other bad input is 422)."""


class EngineError(NetheatError):
    """A simulation that cannot run as asked."""


class DataError(NetheatError):
    """A public dataset that is missing, fails its checksum or cannot be parsed."""
