"""Reading a small text config file (TOML) the way every netheat reader does.

One rule for experiment files, port maps and other TOML inputs read in
Python: at most :data:`MAX_FILE_BYTES`, UTF-8 (an error names the line and
the byte), a leading byte-order mark ignored, no NUL bytes. Errors are
:class:`netheat.errors.ConfigError` (exit 2).
"""

from __future__ import annotations

from pathlib import Path

from netheat.errors import ConfigError

MAX_FILE_BYTES = 16 << 20
"""Largest config file read (16 MiB; real ones are a few KiB)."""


def read_config_text(path: Path, what: str) -> str:
    """The text of the config file ``path`` (``what`` names its kind in messages, e.g. "a port map")."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigError(
                f"{path}: {size:,} bytes is too large for {what} (at most {MAX_FILE_BYTES:,}); "
                "is this the right file?",
                file=str(path),
            )
        raw = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read {what}: {e.strerror or e}", file=str(path)) from None
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}:{line}: not a UTF-8 text file (byte 0x{raw[e.start]:02x} at offset {e.start}); "
            f"{what} is TOML text",
            file=str(path),
            line=line,
        ) from None
    if "\x00" in text:
        raise ConfigError(f"{path}: contains NUL bytes; {what} is TOML text", file=str(path))
    return text
