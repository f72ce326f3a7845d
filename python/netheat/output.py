"""Where netheat writes: the one output rule of every command.

**Directories** (``--out DIR`` of ``simulate``, ``analyze``, ``experiment
run``, ``reproduce``, ``demo``):

- a missing directory is created (with its parents);
- an existing one is used only if it is empty or netheat wrote it (it holds
  the marker file :data:`MARKER`); any other directory is refused with
  exit 2 naming it and ``--force``;
- with ``--force`` netheat writes its files into such a directory too, but
  still never removes or replaces a file it did not write (a name clash is
  an error);
- a path that exists and is not a directory (a file, a device such as
  ``/dev/null``, a socket, a FIFO) is refused, ``--force`` or not;
- while a command writes, it holds an exclusive lock on ``DIR/.netheat.lock``:
  a second command on the same directory exits 2 at once naming the
  holder's pid;
- results are written into a staging directory inside ``DIR`` and moved
  into place when complete; the marker lists the files of every completed
  write (by group), and a group's files from an earlier run that the new
  run does not write again are removed (they were netheat's). While files
  are being moved the marker says ``"complete": false``; an interrupted
  commit leaves that flag, and the next run redoes it.

**Files** (``-o FILE`` of ``workload generate`` and ``topo draw``): a
missing file is created (parents too); an existing regular file is replaced
only if netheat wrote it (Parquet files carry ``netheat_version`` in their
metadata, PNG files a ``Software: netheat`` text chunk) or with
``--force``; a path that is not a regular file is refused, ``--force`` or
not. The new content is written to a temporary file in the same directory
and renamed over the old one, so readers see the old or the new file.

Every file and directory netheat creates gets the permissions the process
umask allows (``0666``/``0777`` masked), like any other program's output.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from netheat import __version__
from netheat.errors import InputError

MARKER = ".netheat.json"
"""The file that marks a directory as written by netheat (and lists what it wrote)."""

LOCK = ".netheat.lock"
"""The lock file a command holds while it writes a directory."""

TMP_PREFIX = ".netheat-tmp-"
"""Prefix of every temporary file or staging directory netheat creates."""

PathArg = str | os.PathLike[str]


def umask() -> int:
    """The process umask (read without changing it where Linux allows)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    return "not a regular file"


def _check_text(path: PathArg, flag: str) -> Path:
    text = os.fspath(path)
    if not text.strip():
        raise InputError(f"{flag}: an empty path; give a directory or file name")
    if "\x00" in text:
        raise InputError(f"{flag}: the path contains a NUL character")
    return Path(text)


def _os_error(e: OSError, what: str, path: Path) -> InputError:
    reason = e.strerror or str(e)
    if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        reason = "permission denied" if e.errno != errno.EROFS else "read-only file system"
    return InputError(f"cannot {what} {path}: {reason}")


def new_temp_file(directory: Path, suffix: str = "") -> Path:
    """A new, empty temporary file in ``directory`` with umask permissions (unique per process)."""
    fd, name = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=suffix, dir=directory)
    try:
        os.fchmod(fd, 0o666 & ~umask())
    finally:
        os.close(fd)
    return Path(name)


def new_temp_dir(directory: Path) -> Path:
    """A new temporary directory in ``directory`` with umask permissions."""
    d = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=directory))
    d.chmod(0o777 & ~umask())
    return d


def mkdirs(path: Path) -> None:
    """``mkdir -p`` with umask permissions (``Path.mkdir`` already applies the umask)."""
    path.mkdir(parents=True, exist_ok=True)


# ---------------------------------------------------------------------------------------------
# Single files


def _written_by_netheat(path: Path) -> bool:
    """Whether a regular file carries netheat's tag (Parquet metadata or a PNG text chunk)."""
    try:
        with path.open("rb") as f:
            head = f.read(8)
            if head.startswith(b"\x89PNG"):
                chunk = f.read(1 << 16)
                return b"tEXtSoftware\x00netheat" in chunk
            if head.startswith(b"<?xml"):
                return b"netheat " in f.read(1 << 12)
            if head.startswith(b"PAR1"):
                import pyarrow.parquet as pq

                meta = pq.read_schema(path).metadata or {}
                return b"netheat_version" in meta
    except Exception:  # OSError, or pyarrow's own errors for a damaged footer: not recognizably ours
        return False
    return False


def output_file(path: PathArg, force: bool = False, flag: str = "--output") -> Path:
    """Check a single-file output against the output rule; returns the path to write.

    Raises :class:`InputError` (exit 2) for an empty path, a path that is not
    a regular file, or an existing file netheat did not write (without
    ``force``). A symbolic link to a regular file is followed: its target is
    replaced, the link stays.
    """
    p = _check_text(path, flag)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return p
    except OSError as e:
        raise _os_error(e, "inspect", p) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(
            f"{flag} {p}: is {_kind(st.st_mode)}; netheat writes a regular file there and never replaces "
            "anything else (with --force or not); give a file name"
        )
    target = Path(os.path.realpath(p))
    if not force and not _written_by_netheat(target):
        raise InputError(
            f"{flag} {p}: the file exists and netheat did not write it (or cannot tell: CSV files carry no "
            "tag); pass --force to replace it, or choose another name"
        )
    return target


def save_figure(fig: Any, path: Path, fmt: str = "png", dpi: int = 100) -> Path:
    """``fig.savefig(path)`` with netheat's tag in the image metadata (so the output rule knows it)."""
    key = "Software" if fmt == "png" else "Creator"
    fig.savefig(path, format=fmt, dpi=dpi, metadata={key: f"netheat {__version__}"})
    return path


def save_png(fig: Any, path: Path, dpi: int = 100) -> Path:
    """Save a matplotlib figure as a tagged PNG, atomically (see :func:`atomic_write`)."""
    return atomic_write(path, lambda tmp: save_figure(fig, tmp, "png", dpi))


def atomic_write(path: Path, write: Callable[[Path], Any], suffix: str = "") -> Path:
    """Write ``path`` through ``write(tmp)`` on a temporary file in the same directory, then rename.

    The parent directory is created. An interrupted write leaves the old
    file (or none) and no temporary file. If ``path`` is inside an open
    :class:`OutputDir`, a file there that netheat did not write is refused
    (:meth:`OutputDir.check_replaceable`) and the new file is recorded as
    netheat's in its marker.
    """
    parent = path.parent
    # Inside an open output directory, a file netheat did not write is never replaced.
    for od in _OPEN:
        rel = od.relative(path)
        if rel is not None:
            od.check_replaceable(rel)
    try:
        mkdirs(parent)
        tmp = new_temp_file(parent, suffix=suffix or path.suffix)
    except OSError as e:
        raise _os_error(e, "write into", parent) from None
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    for od in _OPEN:
        od.record(path)
    return path


# ---------------------------------------------------------------------------------------------
# Directories

_OPEN: list[OutputDir] = []
"""Output directories open in this process (innermost last)."""


FINGERPRINT_BYTES = 1 << 20
"""Bytes read from each end of a file for its fingerprint."""


def fingerprint(path: Path) -> str:
    """SHA-256 of a file's size, first MiB and last MiB: cheap, and changes with any edit in practice."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        h.update(str(size).encode())
        h.update(f.read(FINGERPRINT_BYTES))
        if size > FINGERPRINT_BYTES:
            f.seek(max(FINGERPRINT_BYTES, size - FINGERPRINT_BYTES))
            h.update(f.read(FINGERPRINT_BYTES))
    return h.hexdigest()[:32]


def _read_marker(path: Path) -> dict[str, Any] | None:
    try:
        raw = json.loads((path / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, dict) else None


def _lock_holder(lock: Path) -> str:
    try:
        info = json.loads(lock.read_text() or "{}")
        return f"pid {info.get('pid', '?')}, `netheat {info.get('command', '?')}`"
    except (OSError, ValueError):
        return "another process"


class OutputDir:
    """An output directory opened under the output rule (see the module docs).

    Use as a context manager: :meth:`open` checks the path, creates the
    directory if missing and takes the lock; leaving the ``with`` block
    releases it. :meth:`transaction` stages a group of files and moves them
    into place.
    """

    def __init__(self, path: Path, command: str, force: bool) -> None:
        self.path = path
        self.command = command
        self.force = force
        self._lock_fd: int | None = None
        self.marker: dict[str, Any] = {}
        self._new_marker = False
        self._new_lock = False
        self._committed = False
        self.created_root: Path | None = None
        """The top directory this open created (None if the output existed)."""

    # -- opening

    @classmethod
    def open(cls, path: PathArg, command: str, force: bool = False, flag: str = "--out") -> OutputDir:
        """Check ``path`` against the rule, create it if missing and lock it."""
        p = _check_text(path, flag)
        try:
            st: os.stat_result | None = os.stat(p)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise _os_error(e, "inspect", p) from None
        if st is not None and not stat.S_ISDIR(st.st_mode):
            raise InputError(
                f"{flag} {p}: is {_kind(st.st_mode)}, not a directory; netheat writes a directory there "
                "and never replaces a file, device or socket (with --force or not)"
            )
        created = st is None
        created_root: Path | None = None
        if created:
            created_root = p
            while not created_root.parent.exists() and created_root.parent != created_root:
                created_root = created_root.parent
            try:
                mkdirs(p)
            except OSError as e:
                raise _os_error(e, "create the output directory", p) from None
        od = cls(p, command, force)
        od.created_root = created_root
        if not created:
            od._check_ownership(flag)  # before the lock file is created in it
        od._lock()
        try:
            od._clean_stale()
            marker = _read_marker(p)
            od.marker = marker or {}
            od.marker.setdefault("files", {})
            if marker is None:
                od._write_marker()  # a new (or foreign, with --force) directory becomes netheat's
                od._new_marker = True
        except BaseException:
            od._undo_create()
            od.close()
            raise
        return od

    def _lock(self) -> None:
        lock = self.path / LOCK
        self._new_lock = not os.path.lexists(lock)
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666 & ~umask())
        except OSError as e:
            raise _os_error(e, "write into", self.path) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise InputError(
                    f"{self.path} is in use by another netheat run ({_lock_holder(lock)}); wait for it to "
                    "finish or choose another output directory"
                ) from None
            raise _os_error(e, "lock", lock) from None
        info = json.dumps({"pid": os.getpid(), "command": self.command}).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, info, 0)
        self._lock_fd = fd

    def _check_ownership(self, flag: str) -> None:
        # The lock and netheat's own temporaries (a run that is writing its
        # marker right now holds both) do not make a directory foreign.
        entries = sorted(e for e in os.listdir(self.path) if e != LOCK and not e.startswith(TMP_PREFIX))
        if not entries or MARKER in entries or self.force:
            return
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        noun = "entry" if len(entries) == 1 else "entries"
        raise InputError(
            f"{flag} {self.path}: the directory is not empty ({len(entries)} {noun}: {shown}) and netheat "
            "did not write it; choose a new or empty directory, or pass --force to write netheat's files "
            "into it (nothing already in it is removed or replaced)"
        )

    def _clean_stale(self) -> None:
        """Remove temporary files and staging directories of interrupted runs (we hold the lock)."""
        for root in (self.path, self.path / "points"):
            if not root.is_dir():
                continue
            for e in root.iterdir():
                if e.name.startswith(TMP_PREFIX):
                    if e.is_dir() and not e.is_symlink():
                        shutil.rmtree(e, ignore_errors=True)
                    else:
                        with contextlib.suppress(OSError):
                            e.unlink()

    # -- marker

    def files(self) -> dict[str, dict[str, str]]:
        """The marker's files: relative path -> ``{"group": ..., "fingerprint": ...}``."""
        files = self.marker.setdefault("files", {})
        assert isinstance(files, dict)
        return files

    def ours(self, rel: str) -> bool:
        """Whether ``rel`` is a file netheat wrote and nobody changed since (by its fingerprint)."""
        entry = self.files().get(rel)
        if not isinstance(entry, dict):
            return False
        try:
            return fingerprint(self.path / rel) == entry.get("fingerprint")
        except OSError:
            return False

    def _write_marker(self, complete: bool = True) -> None:
        self.marker.update(
            netheat_version=__version__,
            command=self.command,
            complete=complete,
            updated=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        )
        text = json.dumps(self.marker, indent=1, sort_keys=True) + "\n"
        tmp = new_temp_file(self.path, ".json")
        try:
            tmp.write_text(text)
            os.replace(tmp, self.path / MARKER)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise

    def relative(self, path: Path) -> str | None:
        """``path`` relative to this directory, or None when it lies outside it or is staged
        (inside a transaction's directory: recorded when the transaction commits)."""
        try:
            rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(self.path))
        except ValueError:
            return None
        if any(part.startswith(TMP_PREFIX) for part in rel.parts):
            return None
        return str(rel)

    def record(self, path: Path, group: str = "files") -> None:
        """Record ``path`` (just written by netheat) in the marker if it lies inside this directory."""
        rel = self.relative(path)
        if rel is None:
            return
        self.files()[rel] = {"group": group, "fingerprint": fingerprint(path)}
        self._write_marker()

    def check_replaceable(self, rel: str) -> None:
        """Raise :class:`InputError` if ``rel`` exists and is not a file netheat wrote (unchanged)."""
        dest = self.path / rel
        if not os.path.lexists(dest):
            return
        st = os.lstat(dest)
        if stat.S_ISREG(st.st_mode) and self.ours(rel):
            return
        what = _kind(st.st_mode) if not stat.S_ISREG(st.st_mode) else "a file netheat did not write"
        if stat.S_ISREG(st.st_mode) and rel in self.files():
            what = "a file netheat wrote but that changed since"
        raise InputError(
            f"{dest} is {what}; netheat would write its result there and does not replace it; "
            "move it away or choose another output directory"
        )

    # -- writing

    @contextlib.contextmanager
    def transaction(self, group: str) -> Iterator[Path]:
        """Stage a group of files and move them into place when the block completes.

        Yields a staging directory to write into, laid out like the output
        directory. On success every file staged is moved over its final
        name; files the group had before and did not write again are
        removed (they were netheat's, and are left alone if they changed
        since); the marker lists the group's new files. On an exception
        nothing in the output changes.
        """
        stage = new_temp_dir(self.path)
        try:
            yield stage
            self._commit(stage, group)
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def _commit(self, stage: Path, group: str) -> None:
        new = sorted(
            str(p.relative_to(stage)) for p in stage.rglob("*") if p.is_file() and not p.is_symlink()
        )
        for rel in new:
            self.check_replaceable(rel)
        files = self.files()
        old = [rel for rel, e in files.items() if isinstance(e, dict) and e.get("group") == group]
        stale = [rel for rel in old if rel not in new and self.ours(rel)]
        for rel in new:
            files[rel] = {"group": group, "fingerprint": fingerprint(stage / rel)}
        self._write_marker(complete=False)
        for rel in new:
            dest = self.path / rel
            mkdirs(dest.parent)
            os.replace(stage / rel, dest)
        for rel in stale:
            with contextlib.suppress(OSError):
                (self.path / rel).unlink()
            self._prune(Path(rel).parent)
        for rel in old:
            if rel not in new:
                del files[rel]
        self._write_marker(complete=True)
        self._committed = True

    def _prune(self, rel_dir: Path) -> None:
        """Remove directories left empty by removing netheat's own files (never the output itself)."""
        while rel_dir != Path("."):
            with contextlib.suppress(OSError):
                (self.path / rel_dir).rmdir()
            rel_dir = rel_dir.parent

    # -- closing

    def close(self) -> None:
        """Release the lock."""
        if self in _OPEN:
            _OPEN.remove(self)
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> OutputDir:
        _OPEN.append(self)
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:
            self._undo_create()
        self.close()

    def _undo_create(self) -> None:
        """After a failure that wrote no result, remove what this open added: the directory it created,
        or the marker and lock it put in an existing directory."""
        if self.created_root is None:
            if not self._committed:
                for name, new in ((MARKER, self._new_marker), (LOCK, self._new_lock)):
                    if new:
                        with contextlib.suppress(OSError):
                            (self.path / name).unlink()
            return
        try:
            if set(os.listdir(self.path)) - {MARKER, LOCK}:
                return
            for name in (MARKER, LOCK):
                with contextlib.suppress(FileNotFoundError):
                    (self.path / name).unlink()
            d = self.path
            while True:
                d.rmdir()
                if d == self.created_root or d.parent == d:
                    break
                d = d.parent
        except OSError:
            pass


def is_complete(path: PathArg) -> bool | None:
    """Whether the netheat directory ``path`` has no interrupted write (``None``: not netheat's)."""
    m = _read_marker(Path(path))
    return None if m is None else bool(m.get("complete", False))


FORCE_DIR_HELP = (
    "also write into an existing directory netheat did not write (nothing already in it is removed or "
    "replaced); a path that is not a directory is refused regardless"
)
FORCE_FILE_HELP = (
    "replace an existing regular file netheat did not write; a path that is not a regular file is "
    "refused regardless"
)


def add_force(parser: Any, file: bool = False) -> None:
    """Add ``--force`` with the output rule's help to an argparse parser."""
    parser.add_argument("--force", action="store_true", help=FORCE_FILE_HELP if file else FORCE_DIR_HELP)
