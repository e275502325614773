"""Where a log directory is: a local path, or a URI of object storage or HDFS read through
``pyarrow.fs``.

Every read-side command takes either. :func:`as_path` turns what the user gave into a
:class:`pathlib.Path` (a local path; ``file://`` URIs too) or a :class:`RemotePath`
(``s3://``, ``gs://``, ``abfs://``/``abfss://``, ``hdfs://``, ``viewfs://``: the
filesystems pyarrow has, configured the standard way: ``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_PROFILE`` and ``~/.aws``,
``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_STORAGE_ACCOUNT_KEY``, Hadoop's
``CLASSPATH``/``HADOOP_HOME``; options pyarrow accepts in the URI's query string, such
as ``?endpoint_override=...``, are passed on). A :class:`RemotePath` answers the part of
``pathlib.Path`` the readers use (``/``, ``name``, ``parent``, ``suffix``, ``exists``,
``is_dir``, ``iterdir``, ``stat().st_size``, ``read_bytes``, ``open``); it has no
``__fspath__``, so it can never reach ``open()`` or ``os`` by mistake. The bytes of a
segment are opened in one place, :func:`kafkalog_cli.storage.segment.open_view` /
:meth:`~kafkalog_cli.storage.segment.LogSegment.records`, with ranged reads.

Writing is local only: Kafka's on-disk layout needs files that are appended to, renamed
atomically, fsynced and locked (``.lock``), which object stores do not offer;
:func:`require_local` refuses a remote log directory for every writing command.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import InvalidArgumentError, NotRegularFileError, UnreadableError
from .fileio import not_regular

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: schemes read through pyarrow.fs (``file://`` is a local path)
REMOTE_SCHEMES = ("s3", "s3a", "gs", "gcs", "abfs", "abfss", "hdfs", "viewfs")


def is_uri(path) -> bool:
    """Whether ``path`` is a URI (``scheme://...``), a :class:`RemotePath` included."""
    return isinstance(path, RemotePath) or (isinstance(path, str) and bool(_URI.match(path)))


def is_remote(path) -> bool:
    """Whether ``path`` names something :func:`as_path` reads through ``pyarrow.fs``."""
    if isinstance(path, RemotePath):
        return True
    return is_uri(path) and not str(path).lower().startswith("file://")


def as_path(path):
    """``path`` as a :class:`pathlib.Path` (local, ``file://`` included) or a
    :class:`RemotePath`; Path and RemotePath objects are returned as they are.

    Raises:
        InvalidArgumentError: a URI of a scheme pyarrow cannot read, or pyarrow is not
            installed.
        UnreadableError: the filesystem of the URI cannot be reached (credentials,
            network, a missing Hadoop client).
    """
    if isinstance(path, (Path, RemotePath)):
        return path
    s = os.fspath(path)
    if not _URI.match(s):
        return Path(s)
    scheme = s.split(":", 1)[0].lower()
    if scheme == "file":
        return Path(urlsplit(s).path)
    if scheme not in REMOTE_SCHEMES:
        raise InvalidArgumentError(
            f"{s}: unknown URI scheme {scheme}:// (kafkalog reads local paths and "
            f"{', '.join(x + '://' for x in REMOTE_SCHEMES)} through pyarrow.fs)")
    return RemotePath.from_uri(s)


def read_bytes_if_exists(path, *, limit: int, too_large) -> bytes | None:
    """The bytes of a local or remote regular file (:func:`as_path`, :func:`open_regular`),
    None when it does not exist (the broker's optional files: checkpoints,
    ``.kafka_cleanshutdown``, ...): at most ``limit`` bytes, whatever its size claims (an
    object whose listed size lies is read no further than ``limit`` + 1 bytes).

    ``too_large(size)`` builds the error raised for a larger file (``size``: its size, or
    the bytes read when the claimed size lied).

    Raises:
        NotRegularFileError: it is a FIFO, a device, a socket or a directory.
        UnreadableError: it exists but cannot be read (permissions, I/O).
    """
    try:
        f = open_regular(path)
    except FileNotFoundError:
        return None
    with f:
        size = opened_size(f, path)
        if size > limit:
            raise too_large(size)
        data = read_up_to(f, limit + 1, path)
    if len(data) > limit:
        raise too_large(len(data))
    return data


# -- regular files: the one way a file whose bytes kafkalog reads is opened -----------------

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: bytes read at a time by the streaming readers (text lines, snapshots, .txnindex)
READ_CHUNK = 64 << 10


def stat_regular(path):
    """``stat`` of ``path``, which must be a regular file: a local path is followed through
    symbolic links (kafkalog reads through them as the broker does; it never writes
    through them, :mod:`.fileio`) and must end at a regular file; a
    :class:`RemotePath` must be a file (object stores have no other kind).

    Raises:
        FileNotFoundError: it does not exist.
        NotRegularFileError: a FIFO, a device, a socket, a directory.
        UnreadableError: any other failure of ``stat``.
    """
    if isinstance(path, RemotePath):
        st = path.stat()
        if path.is_dir():
            raise NotRegularFileError("a directory", file=path)
        return st
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=path) from e
    if not stat.S_ISREG(st.st_mode):
        raise not_regular(path, st.st_mode)
    return st


def open_regular(path):
    """A binary file object reading ``path``, which must be a regular file (see
    :func:`stat_regular`): a local path is opened ``O_NONBLOCK`` (a FIFO never waits for
    a writer; a socket cannot be opened at all), then checked with ``fstat``, so what is
    read is what was checked; a :class:`RemotePath` is opened as a ``pyarrow`` random
    access file (``read``, ``read_at``, ``size``). The caller closes it.

    Raises:
        FileNotFoundError: it does not exist (the caller decides whether that is an error).
        NotRegularFileError: a FIFO, a device, a socket, a directory.
        UnreadableError: any other failure (permissions, I/O).
    """
    if isinstance(path, RemotePath):
        if path.is_dir():
            raise NotRegularFileError("a directory", file=path)
        try:
            return path.open()
        except FileNotFoundError:
            raise
        except OSError as e:
            raise UnreadableError(e.strerror or str(e), file=path) from e
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as e:
        if e.errno == errno.ENXIO:   # a socket (or a device without its driver)
            try:
                mode = os.stat(path).st_mode
            except OSError:
                mode = None
            if mode is not None and not stat.S_ISREG(mode):
                raise not_regular(path, mode) from None
        raise UnreadableError(e.strerror or str(e), file=path) from e
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(path, mode)
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def opened_size(f, path=None) -> int:
    """The size in bytes of a file from :func:`open_regular` (``fstat``; a remote
    object's listed size, which may lie: read with a bound whatever it says)."""
    try:
        return f.size() if hasattr(f, "size") else os.fstat(f.fileno()).st_size
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=path) from e


def read_up_to(f, n: int, path=None) -> bytes:
    """At most ``n`` bytes from the current position of a file from
    :func:`open_regular` (fewer at its end).

    Raises:
        UnreadableError: an I/O error.
    """
    parts = []
    left = n
    try:
        while left > 0:
            b = f.read(min(left, 8 << 20))
            if not b:
                break
            parts.append(b)
            left -= len(b)
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=path) from e
    return parts[0] if len(parts) == 1 else b"".join(parts)


def resolve(path) -> str:
    """``path`` made absolute, as a string (a URI stays as it is): what a plan ships to
    other processes and machines, whose working directory is not this one's."""
    if is_uri(path):
        return str(path)
    return os.path.abspath(os.fspath(path))


def join(directory: str, name: str) -> str:
    """``directory/name`` for a local path or a URI, as a string."""
    if is_uri(directory):
        bare, sep, query = str(directory).partition("?")
        return bare.rstrip("/") + "/" + name + sep + query
    return os.path.join(directory, name)


def require_local(path, command: str) -> Path:
    """``path`` as a local :class:`Path` for a command that writes into it.

    Raises:
        InvalidArgumentError: ``path`` is a URI of object storage or HDFS.
    """
    if is_remote(path):
        raise InvalidArgumentError(
            f"{path}: {command} writes into a log directory, which must be on a local "
            "(POSIX) filesystem: Kafka's on-disk layout needs files that are appended to, "
            "renamed atomically, fsynced and locked (.lock), which object storage does "
            "not offer. Copy the log directory to a local disk first; the read commands "
            "(export, audit, describe, dump-segment, read, verify-index) read URIs")
    return as_path(path)


# -- remote paths --------------------------------------------------------------------------

@dataclass(frozen=True)
class RemoteStat:
    """What :meth:`RemotePath.stat` answers (``os.stat_result``'s names)."""

    st_size: int
    st_mtime_ns: int


class RemotePath:
    """A file or directory of a ``pyarrow.fs`` filesystem, named by its URI.

    Attributes:
        fs: the ``pyarrow.fs.FileSystem``.
        path: the path inside ``fs`` (``bucket/dir/file`` for object stores).
        root: what ``str()`` puts before ``path`` (``s3://``, ``hdfs://namenode:8020``).
        query: the URI's query string (pyarrow's options, ``endpoint_override=...``),
            kept in ``str()`` so that a path shipped to another process (a Spark
            executor) reaches the same filesystem; "" when none.
    """

    __slots__ = ("fs", "path", "root", "query", "_info")

    def __init__(self, fs, path: str, root: str, info=None, query: str = ""):
        self.fs = fs
        self.path = path.rstrip("/") or path
        self.root = root
        self.query = query
        self._info = info

    @classmethod
    def from_uri(cls, uri: str) -> RemotePath:
        """Raises as :func:`as_path`."""
        try:
            import pyarrow.fs as pafs
        except ImportError:
            raise InvalidArgumentError(
                f"{uri}: reading URIs needs pyarrow; install it with: "
                "pip install 'kafkalog[spark]'") from None
        bare, _, query = uri.partition("?")
        parts = urlsplit(bare)
        try:
            # one filesystem per scheme, authority (an S3 bucket: its region) and options,
            # made once per process: making one may cost a request (S3's region lookup)
            fs = _filesystem(pafs, f"{parts.scheme.lower()}://{parts.netloc}", query)
        except (OSError, ValueError) as e:
            raise UnreadableError(_one_line(e), file=uri) from None
        inner = _inner_path(parts)
        bare = bare.rstrip("/")
        root = bare[:len(bare) - len(inner.rstrip("/"))] if bare.endswith(
            inner.rstrip("/")) else bare.split("://", 1)[0] + "://"
        return cls(fs, inner, root, query=query)

    # -- names -------------------------------------------------------------------------------

    def __str__(self) -> str:
        return self.root + self.path + (f"?{self.query}" if self.query else "")

    def __repr__(self) -> str:
        return f"RemotePath({str(self)!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, RemotePath) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __lt__(self, other) -> bool:
        return str(self) < str(other)

    def __truediv__(self, name) -> RemotePath:
        return RemotePath(self.fs, f"{self.path.rstrip('/')}/{os.fspath(name)}", self.root,
                          query=self.query)

    def joinpath(self, *names) -> RemotePath:
        p = self
        for n in names:
            p = p / n
        return p

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def parent(self) -> RemotePath:
        p = self.path
        if "/" in p.strip("/"):
            head = p.rsplit("/", 1)[0] or "/"
        else:   # a bucket (its own parent) or a top-level HDFS directory (/x -> /)
            head = "/" if p.startswith("/") else p
        return RemotePath(self.fs, head, self.root, query=self.query)

    @property
    def suffix(self) -> str:
        return Path(self.name).suffix

    @property
    def stem(self) -> str:
        return Path(self.name).stem

    def with_name(self, name: str) -> RemotePath:
        return self.parent / name

    def with_suffix(self, suffix: str) -> RemotePath:
        return self.parent / (self.stem + suffix)

    def absolute(self) -> RemotePath:
        return self

    resolve = absolute

    def is_absolute(self) -> bool:
        return True

    # -- metadata ----------------------------------------------------------------------------

    def _file_info(self):
        if self._info is None:
            try:
                self._info = self.fs.get_file_info(self.path)
            except OSError as e:
                raise UnreadableError(_one_line(e), file=str(self)) from None
        return self._info

    def exists(self) -> bool:
        import pyarrow.fs as pafs

        return self._file_info().type != pafs.FileType.NotFound

    def is_dir(self) -> bool:
        import pyarrow.fs as pafs

        return self._file_info().type == pafs.FileType.Directory

    def is_file(self) -> bool:
        import pyarrow.fs as pafs

        return self._file_info().type == pafs.FileType.File

    def is_symlink(self) -> bool:
        return False

    def stat(self) -> RemoteStat:
        """Raises FileNotFoundError when missing (as ``os.stat``)."""
        info = self._file_info()
        if not self.exists():
            raise FileNotFoundError(2, "No such file or directory", str(self))
        mtime = info.mtime_ns if info.mtime_ns is not None else 0
        return RemoteStat(info.size or 0, mtime)

    def iterdir(self):
        """The children (each carrying its metadata: no further request for ``is_dir`` or
        ``stat``). Raises FileNotFoundError / NotADirectoryError / OSError as ``os``."""
        import pyarrow.fs as pafs

        if self._info is not None and not self.is_dir():
            raise NotADirectoryError(20, "Not a directory", str(self))
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(self.path, recursive=False))
        except FileNotFoundError:
            raise FileNotFoundError(2, "No such file or directory", str(self)) from None
        except OSError as e:
            self._info = None
            if self.is_file():
                raise NotADirectoryError(20, "Not a directory", str(self)) from None
            raise OSError(5, _one_line(e), str(self)) from None
        for info in sorted(infos, key=lambda i: i.path):
            yield RemotePath(self.fs, info.path, self.root, info, self.query)

    # -- bytes -------------------------------------------------------------------------------

    def open(self, mode: str = "rb"):
        """A ``pyarrow`` random-access file (``read``, ``read_at``, ``seek``, ``size``);
        read-only."""
        if mode != "rb":
            raise InvalidArgumentError(f"{self}: kafkalog only reads from remote storage")
        try:
            return self.fs.open_input_file(self.path)
        except FileNotFoundError:
            raise FileNotFoundError(2, "No such file or directory", str(self)) from None
        except OSError as e:
            raise OSError(5, _one_line(e), str(self)) from None

    def read_bytes(self) -> bytes:
        with self.open() as f:
            return f.read()

    def read_text(self, encoding: str = "utf-8") -> str:
        return self.read_bytes().decode(encoding)


_FILESYSTEMS: dict = {}


def _filesystem(pafs, authority: str, query: str):
    """The pyarrow filesystem of ``scheme://authority?query``, made on first use
    (``FileSystem.from_uri``, which reads the standard variables and files:
    ``AWS_ENDPOINT_URL``, ``AWS_PROFILE``, ``~/.aws``, ...)."""
    key = (authority, query)
    fs = _FILESYSTEMS.get(key)
    if fs is None:
        uri = authority + "/" + (f"?{query}" if query else "")
        if uri[:6].lower() == "s3a://":
            uri = "s3://" + uri[6:]
        fs = _FILESYSTEMS[key] = pafs.FileSystem.from_uri(uri)[0]
    return fs


def _inner_path(parts) -> str:
    """The path inside the filesystem, as ``FileSystem.from_uri`` gives it: with the
    bucket or container for object stores, absolute for HDFS."""
    scheme = parts.scheme.lower()
    if scheme in ("hdfs", "viewfs"):
        return parts.path or "/"
    if scheme in ("abfs", "abfss"):
        container = parts.netloc.split("@", 1)[0]
        return (container + parts.path).rstrip("/") or container
    bucket = parts.netloc.rsplit("@", 1)[-1]      # s3://key:secret@bucket/...
    return (bucket + parts.path).rstrip("/") or bucket


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text or type(e).__name__


# -- listing, for local and remote directories alike ---------------------------------------

def listdir(path) -> list[str]:
    """The names in directory ``path`` (``os.listdir``; raises OSError as it does)."""
    if isinstance(path, RemotePath):
        return [c.name for c in path.iterdir()]
    return os.listdir(path)


def children(path) -> dict:
    """``{name: path}`` of the entries of directory ``path``; a remote child carries its
    metadata (``stat``/``is_dir`` cost no request). Raises OSError as ``os.listdir``."""
    if isinstance(path, RemotePath):
        return {c.name: c for c in path.iterdir()}
    return {n: path / n for n in os.listdir(path)}


def walk(top):
    """``os.walk`` (top-down, ``dirnames`` may be pruned in place) for either kind of
    path; yields ``(dirpath, dirnames, filenames)`` with ``dirpath`` a Path or
    RemotePath. Symbolic links to directories are not followed (``os.walk``'s default)."""
    top = as_path(top)
    if not isinstance(top, RemotePath):
        for dirpath, dirnames, filenames in os.walk(top):
            yield Path(dirpath), dirnames, filenames
        return
    try:
        children = list(top.iterdir())
    except OSError:
        return
    dirnames = [c.name for c in children if c.is_dir()]
    filenames = [c.name for c in children if not c.is_dir()]
    yield top, dirnames, filenames
    for d in dirnames:
        yield from walk(top / d)


def has_magic(path) -> bool:
    """Whether ``path`` is a glob pattern (a URI's query string, after ``?``, is not)."""
    import glob as _glob

    s = str(path)
    return _glob.has_magic(s.partition("?")[0] if is_uri(s) else s)


def glob(pattern: str) -> list:
    """Paths matching ``pattern`` (``*``, ``?``, ``[...]`` within one name; no ``**``),
    sorted: :func:`glob.glob` for local paths, one listing per wildcard level for URIs."""
    import glob as _glob

    if not is_remote(pattern):
        return [as_path(p) for p in sorted(_glob.glob(pattern))]
    base = as_path(pattern)   # the query string, if any, is not part of the pattern
    parts = base.path.split("/")
    first = next((i for i, part in enumerate(parts) if _glob.has_magic(part)), None)
    if first is None:
        return [base] if base.exists() else []
    found = [RemotePath(base.fs, "/".join(parts[:first]), base.root, query=base.query)]
    for part in parts[first:]:
        nxt = []
        for d in found:
            if _glob.has_magic(part):
                try:
                    nxt.extend(c for c in d.iterdir() if fnmatch.fnmatchcase(c.name, part))
                except OSError:
                    continue
            else:
                c = d / part
                if c.exists():
                    nxt.append(c)
        found = nxt
    return sorted(found)


__all__ = ["READ_CHUNK", "REMOTE_SCHEMES", "RemotePath", "RemoteStat", "as_path", "children",
           "glob", "has_magic", "is_remote", "is_uri", "join", "listdir",
           "open_regular", "opened_size", "read_bytes_if_exists", "read_up_to",
           "require_local", "resolve", "stat_regular", "walk"]
