"""Safe writes: the one way kramabench writes a file whole, and opens one for appending.

:func:`write_file` writes ``data`` to ``path`` according to what is there:

* nothing, or a regular file: written to a temporary file beside it, synced, then renamed over the target
  (readers see the old file or the new one, never half of one); the old file's permission bits are kept;
  a failure (a full disk) removes the temporary file and leaves the old file as it was;
* a symbolic link to a regular file: the file it leads to is replaced the same way; the link stays;
* ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``, ``/proc/self/fd/N``: written to that open descriptor
  (a shell's redirection keeps its meaning, ``>>`` included);
* a FIFO or a character device (``/dev/null``, a terminal), directly or through a link: written through,
  never replaced; a FIFO nobody reads is refused at once instead of blocking;
* anything else (a folder, a socket, a block device, a link to nothing): refused.

Every refusal or failure is a :class:`~kramabench.files.read.FileRefused` whose ``str()`` is one line.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from pathlib import Path

from kramabench.files.read import FileRefused, kind_of

#: paths that name an already open descriptor of this process
_FD_PATH = re.compile(r"^/(?:dev/fd|proc/self/fd|proc/thread-self/fd)/(\d+)$")
_STD = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def _reason(e: OSError) -> str:
    if e.errno == errno.ENOSPC:
        return "no space left on the device"
    if e.errno == errno.EDQUOT:
        return "disk quota exceeded"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if e.errno == errno.EROFS:
        return "read-only file system"
    return str(e.strerror or e)


def fd_of(path: Path | str) -> int | None:
    """The descriptor number a path such as ``/dev/stdout`` or ``/proc/self/fd/3`` names, else None."""
    text = os.fspath(path)
    if text in _STD:
        return _STD[text]
    m = _FD_PATH.match(text)
    return int(m.group(1)) if m else None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _write_through(path: Path, data: bytes, mode: int) -> str:
    if stat.S_ISFIFO(mode):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            if e.errno == errno.ENXIO:
                raise FileRefused(
                    path, "is a FIFO (named pipe) that nobody reads; not written", errno.ENXIO
                ) from None
            raise FileRefused(path, f"cannot write: {_reason(e)}", e.errno or errno.EIO) from None
        os.set_blocking(fd, True)
    else:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
        except OSError as e:
            raise FileRefused(path, f"cannot write: {_reason(e)}", e.errno or errno.EIO) from None
    try:
        _write_all(fd, data)
    except BrokenPipeError:
        pass  # the reader went away (``| head``): what it wanted it got
    except OSError as e:
        raise FileRefused(path, f"cannot write: {_reason(e)}", e.errno or errno.EIO) from None
    finally:
        os.close(fd)
    return "through"


def _write_fd(path: Path, fd: int, data: bytes) -> str:
    try:
        dup = os.dup(fd)
    except OSError:
        raise FileRefused(path, f"descriptor {fd} is not open; not written", errno.EBADF) from None
    try:
        _write_all(dup, data)
    except BrokenPipeError:
        pass
    except OSError as e:
        raise FileRefused(path, f"cannot write: {_reason(e)}", e.errno or errno.EIO) from None
    finally:
        os.close(dup)
    return "through"


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def temp_path(target: Path) -> Path:
    """The temporary file :func:`write_file` writes beside ``target`` (hidden, unique, ``.tmp``)."""
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def _replace(target: Path, data: bytes, old_mode: int | None, shown: Path) -> str:
    tmp = temp_path(target)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except OSError as e:
        raise FileRefused(shown, f"cannot write: {_reason(e)}", e.errno or errno.EIO) from None
    try:
        try:
            if old_mode is not None:
                os.fchmod(fd, stat.S_IMODE(old_mode))
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        kept = " (the file there is unchanged)" if old_mode is not None else ""
        raise FileRefused(
            shown, f"cannot write: {_reason(e)}; nothing written{kept}", e.errno or errno.EIO
        ) from None
    _fsync_dir(target.parent)
    return "replaced"


def write_file(path: Path | str, data: bytes | str, *, mkdir: bool = True, regular_only: bool = False) -> str:
    """Write ``data`` (str: UTF-8) to ``path`` as the module describes. Returns ``"replaced"`` (atomic) or
    ``"through"`` (a device, pipe or open descriptor); raises :class:`FileRefused` (one line) otherwise.

    ``regular_only``: for the files kramabench keeps (a manifest, a cache): only nothing or a regular file
    may be there; a link, a device or a pipe is refused (never followed, never replaced)."""
    path = Path(path)
    blob = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    fd = None if regular_only else fd_of(path)
    if fd is not None:
        return _write_fd(path, fd, blob)
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        lst = None
    except NotADirectoryError:
        raise FileRefused(
            path, "cannot write: a parent of it is a file, not a folder", errno.ENOTDIR
        ) from None
    except OSError as e:
        raise FileRefused(path, f"cannot write: {_reason(e)}", e.errno or errno.EIO) from None
    if lst is None:
        parent = path.parent
        if mkdir:
            try:
                parent.mkdir(parents=True, exist_ok=True)
            except FileExistsError:
                raise FileRefused(
                    path, f"cannot write: {parent} is a file, not a folder", errno.ENOTDIR
                ) from None
            except OSError as e:
                raise FileRefused(
                    path, f"cannot create its folder {parent}: {_reason(e)}", e.errno or errno.EIO
                ) from None
        elif not parent.is_dir():
            raise FileRefused(path, f"cannot write: no folder {parent}", errno.ENOENT)
        return _replace(path, blob, None, path)
    mode = lst.st_mode
    if stat.S_ISREG(mode):
        return _replace(path, blob, mode, path)
    if regular_only:
        raise FileRefused(path, f"is {kind_of(mode)}, not a regular file; not written", errno.EINVAL)
    if stat.S_ISLNK(mode):
        try:
            st = os.stat(path)
        except OSError:
            raise FileRefused(
                path, "is a symbolic link to nothing; not written (give the file's own path)", errno.ENOENT
            ) from None
        if stat.S_ISREG(st.st_mode):
            return _replace(Path(os.path.realpath(path)), blob, st.st_mode, path)
        mode = st.st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return _write_through(path, blob, mode)
    raise FileRefused(
        path,
        f"is {kind_of(mode)}; not written (give a file path)",
        errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
    )


def open_append(path: Path | str, *, mode: int = 0o644, follow: bool = True) -> int:
    """A descriptor of ``path`` opened for appending (created when missing), which must be a regular file
    (a FIFO, a device or a folder there is refused: appended lines would be lost, or block). ``follow=False``
    (the files of a run folder): a symbolic link there is refused too, never followed."""
    path = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | os.O_CLOEXEC
    if not follow:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, mode)
    except IsADirectoryError:
        raise FileRefused(path, "is a folder, not a file; cannot append to it", errno.EISDIR) from None
    except OSError as e:
        if e.errno == errno.ENXIO:  # a FIFO nobody reads
            raise FileRefused(
                path, "is a FIFO (named pipe), not a regular file; cannot append to it"
            ) from None
        if e.errno == errno.ELOOP and not follow:
            raise FileRefused(
                path, "is a symbolic link; a run folder's files are its own: not followed"
            ) from None
        raise FileRefused(path, f"cannot write: {_reason(e)}", e.errno or errno.EIO) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise FileRefused(path, f"is {kind_of(st.st_mode)}, not a regular file; cannot append to it")
    os.set_blocking(fd, True)
    return fd


def ensure_dir(path: Path | str, *, what: str = "folder") -> Path:
    """``path`` as a folder (made with its parents when missing); a file there, or a folder that cannot be
    made, is a :class:`FileRefused` naming ``what`` (e.g. "results folder")."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise FileRefused(path, f"is a file, not a {what}", errno.ENOTDIR) from None
    except NotADirectoryError:
        raise FileRefused(path, f"cannot make the {what}: a parent of it is a file", errno.ENOTDIR) from None
    except OSError as e:
        raise FileRefused(path, f"cannot make the {what}: {_reason(e)}", e.errno or errno.EIO) from None
    if not path.is_dir():
        raise FileRefused(path, f"is not a {what}", errno.ENOTDIR)
    return path


def check_writable_dir(path: Path | str, *, what: str = "folder") -> Path:
    """That ``path`` is a folder this process can write in, or can be made as one, without making anything:
    a file there or above it, a folder without write permission, a read-only file system are a
    :class:`FileRefused` naming ``what`` (e.g. "results folder")."""
    path = Path(path)
    probe = path
    while True:
        try:
            st = os.stat(probe)
            break
        except FileNotFoundError:
            if probe.parent == probe:
                raise FileRefused(
                    path, f"cannot make the {what}: no folder above it exists", errno.ENOENT
                ) from None
            probe = probe.parent
        except NotADirectoryError:
            probe = probe.parent
        except OSError as e:
            raise FileRefused(path, f"cannot use the {what}: {_reason(e)}", e.errno or errno.EIO) from None
    if not stat.S_ISDIR(st.st_mode):
        where = "it" if probe == path else str(probe)
        raise FileRefused(
            path,
            f"cannot use it as the {what}: {where} is {kind_of(st.st_mode)}, not a folder",
            errno.ENOTDIR,
        )
    if not os.access(probe, os.W_OK | os.X_OK):
        where = "" if probe == path else f" ({probe}, where it would be made)"
        raise FileRefused(path, f"the {what} is not writable{where}: permission denied", errno.EACCES)
    try:
        if os.statvfs(probe).f_flag & os.ST_RDONLY:
            raise FileRefused(path, f"the {what} is on a read-only file system", errno.EROFS)
    except OSError as e:
        if isinstance(e, FileRefused):
            raise
    return path


def replace_dir(new: Path | str, target: Path | str) -> Path:
    """Move the folder ``new`` to ``target`` (a rename: same file system) so that readers see the old folder or
    the new one: an older ``target`` is moved aside first (``.old-<name>-<pid>``), put back should the move
    fail, and removed after. Returns ``target``."""
    import shutil

    new, target = Path(new), Path(target)
    old: Path | None = None
    if target.exists():
        old = target.with_name(f".old-{target.name}-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        if old is not None:
            os.replace(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return target


def publish_dir(new: Path | str, target: Path | str) -> bool:
    """Move the folder ``new`` to ``target`` (a rename: same file system) unless a folder is there already (a
    content-addressed folder another process published meanwhile: the same content). Whether ``new`` was
    moved; when not, ``new`` is the caller's to remove. An ``OSError`` when the move fails otherwise."""
    try:
        os.replace(new, target)
    except OSError:
        if not Path(target).is_dir():
            raise
        return False
    return True


def copy_keeping_holes(src: str | Path, dst: str | Path) -> str:
    """Copy the regular file ``src`` to ``dst`` (its bytes and mode) keeping its holes: only the data of a sparse
    file is written and the copy made as long with ``ftruncate``, so that it takes on disk what the original did
    (``shutil.copyfile`` would write a 1 GB file of a few blocks as 1 GB of zeros). The ``copy_function`` of
    ``shutil.move``/``copytree``; a file system without ``SEEK_DATA``: a plain copy. Returns ``dst``."""
    import shutil

    with open(src, "rb") as fi, open(dst, "wb") as fo:
        i, o = fi.fileno(), fo.fileno()
        size = os.fstat(i).st_size
        off = 0
        try:
            while off < size:
                try:
                    start = os.lseek(i, off, os.SEEK_DATA)
                except OSError as e:
                    if e.errno == errno.ENXIO:  # only a hole is left
                        break
                    raise
                stop = min(os.lseek(i, start, os.SEEK_HOLE), size)
                os.lseek(i, start, os.SEEK_SET)
                os.lseek(o, start, os.SEEK_SET)
                while start < stop:
                    chunk = os.read(i, min(1 << 20, stop - start))
                    if not chunk:
                        break
                    _write_all(o, chunk)
                    start += len(chunk)
                off = stop
        except OSError as e:
            if e.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
                raise
            fi.seek(0)
            fo.seek(0)
            fo.truncate()
            shutil.copyfileobj(fi, fo, 1 << 20)
        else:
            os.ftruncate(o, size)
    shutil.copymode(src, dst)
    return str(dst)


__all__ = [
    "check_writable_dir",
    "copy_keeping_holes",
    "ensure_dir",
    "fd_of",
    "open_append",
    "publish_dir",
    "replace_dir",
    "temp_path",
    "write_file",
]
