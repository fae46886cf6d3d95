# The in-sandbox side of a session (kramabench.sandbox.session), part of the bootstrap program: the
# bootstrap's source is audit_hook.py, this file and bootstrap.py, one after the other, passed with ``python -c``
# (standard library only; kramabench.sandbox.interpreter.bootstrap_source).
#
# A session runs in a warm sandbox whose fork server (the bootstrap's ``--zygote``, the sandbox's pid 1 on
# the isolated backends) receives {"op": "session", ...} as its first request instead of a run: it then
# serves session requests on its control socket until that socket ends (the harness closed the session),
# and never runs a ``run()`` again. Pid 1 cannot be signalled, ptraced or have its memory read from inside,
# so it is the session's trusted part: it starts and reaps every process of the session, reports the exit
# status of each command on a pipe the command cannot write, kills a call's process group on request, does
# the workspace's file operations (no symlink followed, nothing outside the workspace) and keeps the relays
# of forwarded services alive.
#
# Requests: one message, a JSON object with "op", and descriptors, the last of which is a reply pipe (one
# JSON line). "exec": [stdin, stdout, stderr, status]: the command's status line comes on "status" when pid 1
# reaps it. "kernel": [socket]: a fresh persistent interpreter (forked from pid 1, so the preloaded modules
# are there) that serves python calls on that socket: [code memfd, stdout, stderr, status] per call.
# "kill" / "wait": a call's process group, or the interpreter. "write" / "read" / "list" / "collect": the
# workspace, data through a host memfd or the destination file's descriptor. "stop" (the session's CPU-time
# budget is spent): every other process of the session is killed and no "exec" or "kernel" is served any
# more; the workspace's file operations still are.
# ruff: noqa: F821 - _dumpable, _ipc_clean, _kill_others, _lower_limits, _reseed, _subreaper, _wipe and _write_all are bootstrap.py's, which follows this
# file; _lake_audit is audit_hook.py's, which precedes it
import json
import os
import sys

_S = {}  # the session's state in pid 1


def _session_loop(ctl, cfg, fds):
    import select
    import signal

    _S.update(
        cfg=cfg,
        procs={},  # call id -> pid (process group leader)
        pending={},  # pid -> status fd of an exec call
        exits={},  # pid -> exit code (negative: signal), recent
        kernel=None,
        relays={},  # name -> [pid, listening fd, socket path]
    )
    if cfg.get("subreaper"):
        _subreaper()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_a: None)
    reply = fds[-1] if fds else None
    for f in fds[:-1]:
        os.close(f)
    err = None
    try:
        _wipe(cfg.get("wipe", []))
        for link, target in cfg.get("symlinks", []):
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(target, link)
        for svc in cfg.get("services", []):
            _S["relays"][svc["name"]] = _start_relay(svc)
    except BaseException as e:
        err = f"{type(e).__name__}: {e}"
    _reply(reply, {"ready": err is None, "error": err, "pid": os.getpid()})
    poller = select.poll()  # not select(2): the control socket's number may be above 1023 (unsafe backend)
    for fd in (ctl.fileno(), wake_r):
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    while True:
        try:
            ready = [fd for fd, _ in poller.poll(1000)]
        except InterruptedError:
            continue
        if wake_r in ready:
            try:
                while os.read(wake_r, 4096):
                    pass
            except OSError:
                pass
        _reap()
        if ctl.fileno() not in ready:
            continue
        try:
            msg, rfds, _, _ = socket_recv_fds(ctl)
        except InterruptedError:
            continue
        except OSError:
            msg, rfds = b"", []
        if not msg:
            _session_end()
        try:
            req = json.loads(msg)
            op = req.get("op")
        except BaseException:
            req, op = {}, None
        if op == "stop":
            _session_stop(rfds)
            continue
        if op == "end":
            if _session_reset(rfds):
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.close(wake_r)
                os.close(wake_w)
                _S.clear()
                return  # back to serving runs (and sessions), as a fresh warm sandbox
            continue
        try:
            _dispatch(op, req, rfds)
        except BaseException as e:  # never let a request end pid 1
            if rfds:
                _reply(rfds[-1], {"error": f"{type(e).__name__}: {e}"})
            for f in rfds:
                try:
                    os.close(f)
                except OSError:
                    pass


def socket_recv_fds(ctl):
    import socket

    return socket.recv_fds(ctl, 1 << 20, 8)


def _reply(fd, obj):
    if fd is None:
        return
    try:
        data = json.dumps(obj).encode() + b"\n"
        while data:
            data = data[os.write(fd, data) :]
    except OSError:
        pass
    finally:
        try:
            os.close(fd)
        except OSError:
            pass


def _session_reset(fds):
    """The session is over and its sandbox may serve again (a pool's warm sandbox, isolated backends only):
    kill every other process of the sandbox user, as the supervisor of a run does (orphans, daemons, the
    interpreter; repeated until /proc shows none), empty the scratch folders, reply. False (and a refusal)
    when this session may not be reset or something is left."""

    reply = fds[-1] if fds else None
    for f in fds[:-1]:
        os.close(f)
    if not _S["cfg"].get("reusable") or os.getpid() != 1:
        _reply(reply, {"reset": False})
        return False
    for relay in _S["relays"].values():
        try:
            os.close(relay[1])
        except OSError:
            pass
    left = _kill_others()
    for fd in list(_S["pending"].values()):
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        _wipe(_S["cfg"].get("wipe", []))
        _ipc_clean()
        ok = not left and all(not os.listdir(d) for d in _S["cfg"].get("wipe", []) if os.path.isdir(d))
    except BaseException:
        ok = False
    _reply(reply, {"reset": ok})
    return ok


def _session_end():
    """The harness closed the session (or died): kill every process of the session, then exit."""
    _kill_session()
    os._exit(0)


def _kill_session():
    """Kill every process of the session but this one; True when none is left."""
    import signal
    import time

    relays = list(_S["relays"].values())
    _S["relays"].clear()  # not started again by _reap
    for relay in relays:
        try:
            os.close(relay[1])
        except OSError:
            pass
    for pid in list(_S["procs"].values()) + [_S["kernel"]] + [r[0] for r in relays]:
        if pid:
            _kill_group(pid)
    # orphans (daemons, double forks) were re-parented to this process (pid 1, or a subreaper): kill the
    # children until none is left; as pid 1, every process of the sandbox user (kill(-1) spares pid 1)
    me = os.getpid()
    for _ in range(2000):
        if me == 1:
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
        else:
            for k in _children(me):
                try:
                    os.kill(k, signal.SIGKILL)
                except OSError:
                    pass
        _reap()
        if not (_others() if me == 1 else _children(me)):
            return True
        time.sleep(0.001)
    return False


def _session_stop(fds):
    """The session's CPU-time budget is spent: kill the interpreter, the commands, background processes and
    the relays of forwarded services, and run nothing more (file operations are still served)."""
    reply = fds[-1] if fds else None
    for f in fds[:-1]:
        try:
            os.close(f)
        except OSError:
            pass
    _S["stopped"] = True
    done = _kill_session()
    _S["kernel"] = None
    _reply(reply, {"stopped": done})


def _children(parent):
    out = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/" + name + "/stat", "rb") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent:
            out.append(int(name))
    return out


def _code_of(status):
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _reap():
    while True:
        try:
            pid, status, ru = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if not pid:
            return
        code = _code_of(status)
        exits = _S["exits"]
        exits[pid] = code
        if len(exits) > 1000:
            for old in list(exits)[:500]:
                exits.pop(old, None)
        fd = _S["pending"].pop(pid, None)
        if fd is not None:
            _reply(fd, {"done": code, "cpu": round(ru.ru_utime + ru.ru_stime, 4)})
        for relay in _S["relays"].values():
            if relay[0] == pid:  # killed by the code: start it again on the same listening socket
                relay[0] = _fork_relay(relay[1], relay[2])


def _dispatch(op, req, fds):
    if _S.get("stopped") and op in ("exec", "kernel"):
        raise ValueError("the session's CPU-time budget is spent: nothing more runs in it")
    if op == "exec":
        _op_exec(req, fds)
    elif op == "kernel":
        _op_kernel(req, fds)
    elif op == "kill":
        _op_kill(req, fds)
    elif op == "wait":
        _op_wait(req, fds)
    elif op in ("write", "read", "list", "collect"):
        _op_file(op, req, fds)
    else:
        raise ValueError("unknown request")


def _target_pid(req):
    t = req.get("target")
    return _S["kernel"] if t == "kernel" else _S["procs"].get(str(t))


def _kill_group(pid):
    """SIGKILL to the process group of ``pid`` and to ``pid``; whether either was sent."""
    import signal

    killed = False
    for f in (os.killpg, os.kill):
        try:
            f(pid, signal.SIGKILL)
            killed = True
        except OSError:
            pass
    return killed


def _op_kill(req, fds):
    pid = _target_pid(req)
    _reply(fds[-1], {"killed": _kill_group(pid) if pid else False})


def _op_wait(req, fds):
    import time

    pid = _target_pid(req)
    deadline = time.monotonic() + min(float(req.get("timeout", 2.0)), 10.0)
    code = None
    while pid:
        _reap()
        if pid in _S["exits"]:
            code = _S["exits"][pid]
            break
        if time.monotonic() > deadline:
            break
        time.sleep(0.002)
    _reply(fds[-1], {"code": code, "pid": pid})


def _which(cmd, path):
    if "/" in cmd:
        return cmd if os.path.exists(cmd) else None
    for d in (path or "").split(":"):
        if not d:
            continue
        p = os.path.join(d, cmd)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def _limit_self(cfg):
    """The per-process limits and environment of a session process (pid 1's children), before it runs anything
    of the code (pid 1's own environment is left as it is: a pool's sandbox serves runs after a session)."""
    for key, value in cfg.get("env", {}).items():
        os.environ[str(key)] = str(value)
    _lower_limits(cfg.get("rlimits", {}))


def _op_exec(req, fds):
    cfg = _S["cfg"]
    stdin, out, err, status, reply = fds
    argv = [str(a) for a in req.get("argv", [])]
    path = _which(argv[0], os.environ.get("PATH", "")) if argv else None
    if path is None:
        for f in (stdin, out, err):
            os.close(f)
        _reply(status, {"done": 127, "not_found": True})
        _reply(reply, {"pid": None})
        return
    try:
        pid = os.fork()
    except OSError as e:  # the process limit
        for f in (stdin, out, err):
            os.close(f)
        _reply(status, {"done": None, "error": f"cannot start a process: {e}"})
        _reply(reply, {"pid": None})
        return
    if pid == 0:
        try:
            _dumpable(1)
            os.setsid()
            for i, f in enumerate((stdin, out, err)):
                os.dup2(f, i)
            os.closerange(3, 1 << 16)
            import signal

            for s in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
                signal.signal(s, signal.SIG_DFL)
            signal.set_wakeup_fd(-1)
            _limit_self(cfg)
            os.chdir(cfg["workdir"])
            os.execv(path, argv)
        except BaseException as e:
            try:
                os.write(2, f"kramabench session: cannot run {argv[0]}: {e}\n".encode())
            except BaseException:
                pass
        os._exit(126)
    for f in (stdin, out, err):
        os.close(f)
    _S["procs"][str(req.get("id"))] = pid
    _S["pending"][pid] = status
    if len(_S["procs"]) > 4096:
        for old in list(_S["procs"])[:2048]:
            _S["procs"].pop(old, None)
    _reply(reply, {"pid": pid})


def _op_kernel(req, fds):
    sock, reply = fds
    old = _S["kernel"]
    if old:
        _kill_group(old)
    try:
        pid = os.fork()
    except OSError as e:
        os.close(sock)
        _reply(reply, {"error": f"cannot start the interpreter: {e}"})
        return
    if pid == 0:
        try:
            os.setsid()
            os.close(reply)
            _kernel_main(sock, _S["cfg"])
        except BaseException:
            pass
        os._exit(70)
    os.close(sock)
    _S["kernel"] = pid
    _reply(reply, {"pid": pid})


# -- the workspace's files: every path is walked from the workspace's own descriptor, one component at a
# time, without following a symlink; only regular files on the workspace's own filesystem are read -------
class _Refused(Exception):
    pass


def _parts(rel):
    if not isinstance(rel, str) or "\0" in rel or len(rel) > 4096:
        raise _Refused("not a valid path")
    norm = os.path.normpath(rel)
    parts = [p for p in norm.split("/") if p not in ("", ".")]
    if norm.startswith("/") or ".." in parts:
        raise _Refused("leads outside the workspace")
    return parts


def _walk_dirs(parts, create=False):
    """The descriptor of the folder holding ``parts[-1]`` (a folder of the workspace), and the last name."""
    root = os.open(_S["cfg"]["workdir"], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    fd = root
    try:
        for name in parts[:-1]:
            try:
                nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise _Refused("no such file or folder") from None
                os.mkdir(name, 0o777, dir_fd=fd)
                nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as e:
                import errno

                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _Refused(f"{name!r} on the way is a symlink or not a folder") from None
                raise
            if fd != root:
                os.close(fd)
            fd = nxt
        dev = os.fstat(root).st_dev
    finally:
        if fd != root:
            os.close(root)
    return fd, (parts[-1] if parts else "."), dev


def _kind(mode):
    import stat

    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "other"


def _open_regular(parts, single_link):
    """A descriptor of a regular file of the workspace, or _Refused with the reason."""
    import stat

    if not parts:
        raise _Refused("is the workspace folder itself, not a file")
    dfd, name, dev = _walk_dirs(parts)
    try:
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            raise _Refused("no such file") from None
        if not stat.S_ISREG(st.st_mode):
            kind = _kind(st.st_mode)
            if kind == "dir":
                raise _Refused("is a folder")
            raise _Refused(f"is a {kind}, not a regular file")
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=dfd)
        except OSError as e:
            raise _Refused(f"cannot be opened ({e.strerror})") from None
    finally:
        os.close(dfd)
    st = os.fstat(fd)
    reason = None
    if not stat.S_ISREG(st.st_mode):
        reason = f"is a {_kind(st.st_mode)}, not a regular file"
    elif st.st_dev != dev:
        reason = "is on another filesystem than the workspace (a mount)"
    elif single_link and st.st_nlink != 1:
        reason = f"is a hard link ({st.st_nlink} names for one file)"
    if reason:
        os.close(fd)
        raise _Refused(reason)
    return fd, st


def _copy(src, dst, limit):
    """Copy at most ``limit`` + 1 bytes from ``src`` to ``dst`` (both at their offsets); the bytes copied."""
    n = 0
    while n <= limit:
        chunk = os.read(src, min(1 << 20, limit + 1 - n))
        if not chunk:
            break
        _write_all(dst, chunk)
        n += len(chunk)
    return n


def _copy_holes(src, dst, size, limit):
    """Copy ``src`` (a regular file ``size`` bytes long when it was opened) to ``dst`` as ``_copy`` does (at most
    ``limit`` + 1 bytes; the bytes copied), keeping its holes: only the data of a sparse file is written, the
    copy made as long with ``ftruncate``, so that it takes on the host what it took in the workspace (a file of
    a few blocks that says it is 1 GB long is not 1 GB of zeros). A file system without SEEK_DATA: a plain copy."""
    import errno

    end = min(size, limit + 1)
    off = 0
    try:
        while off < end:
            try:
                start = os.lseek(src, off, os.SEEK_DATA)
            except OSError as e:
                if e.errno == errno.ENXIO:  # only a hole is left
                    break
                raise
            if start >= end:
                break
            stop = min(os.lseek(src, start, os.SEEK_HOLE), end)
            os.lseek(src, start, os.SEEK_SET)
            os.lseek(dst, start, os.SEEK_SET)
            while start < stop:
                chunk = os.read(src, min(1 << 20, stop - start))
                if not chunk:
                    break
                _write_all(dst, chunk)
                start += len(chunk)
            off = stop
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
            raise
        os.lseek(src, 0, os.SEEK_SET)
        os.lseek(dst, 0, os.SEEK_SET)
        return _copy(src, dst, limit)
    n = end = min(end, os.fstat(src).st_size)  # a file cut short meanwhile: what is left of it
    if end <= limit:  # what the file grew by since it was opened counts too
        os.lseek(src, end, os.SEEK_SET)
        os.lseek(dst, end, os.SEEK_SET)
        n += _copy(src, dst, limit - end)
    os.ftruncate(dst, n)
    return n


def _op_file(op, req, fds):
    import stat

    data_fd, reply = fds
    try:
        parts = _parts(req.get("path", "."))
        limit = int(req.get("max", 10_000_000))
        if op == "write":
            if not parts:
                raise _Refused("is the workspace folder itself")
            dfd, name, _dev = _walk_dirs(parts, create=True)
            try:
                try:
                    st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                    if not stat.S_ISREG(st.st_mode):
                        raise _Refused(f"exists and is a {_kind(st.st_mode)}, not a regular file")
                except FileNotFoundError:
                    pass
                fd = os.open(
                    name,
                    os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK,
                    0o666,
                    dir_fd=dfd,
                )
            finally:
                os.close(dfd)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise _Refused("is not a regular file")
                os.lseek(data_fd, 0, os.SEEK_SET)
                n = _copy(data_fd, fd, limit)
            finally:
                os.close(fd)
            _reply(reply, {"bytes": n})
        elif op in ("read", "collect"):
            fd, st = _open_regular(parts, single_link=(op == "collect"))
            try:
                if st.st_size > limit:
                    raise _Refused(f"is too large ({st.st_size:,} bytes; the limit is {limit:,})")
                n = (
                    _copy_holes(fd, data_fd, st.st_size, limit)
                    if op == "collect"
                    else _copy(fd, data_fd, limit)
                )
            finally:
                os.close(fd)
            if n > limit:
                raise _Refused(f"is too large (grew past the limit of {limit:,} bytes while read)")
            _reply(reply, {"bytes": n})
        else:  # list
            entries, truncated = _list(parts, limit)
            data = json.dumps(entries).encode()
            _write_all(data_fd, data)
            _reply(reply, {"entries": len(entries), "truncated": truncated})
    except _Refused as e:
        _reply(reply, {"refused": str(e)})
    except OSError as e:
        _reply(reply, {"refused": e.strerror or str(e)})
    finally:
        os.close(data_fd)


def _list(parts, limit):
    import stat

    if parts:
        dfd, name, _dev = _walk_dirs(parts)
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                os.close(dfd)
                return [[("/".join(parts)), _kind(st.st_mode), st.st_size]], False
            top = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd)
        except FileNotFoundError:
            raise _Refused("no such file or folder") from None
        finally:
            try:
                os.close(dfd)
            except OSError:
                pass
    else:
        top = os.open(_S["cfg"]["workdir"], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    prefix = "/".join(parts)
    out = []
    stack = [(top, prefix)]
    truncated = False
    try:
        while stack:
            fd, rel = stack.pop()
            try:
                with os.scandir(fd) as it:  # a folder of a million files: at most the limit read
                    names = []
                    for e in it:
                        names.append(e.name)
                        if len(names) > limit:
                            truncated = True
                            break
                    names.sort()
            except OSError:
                names = []
            for name in names:
                if len(out) >= limit:
                    truncated = True
                    break
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                path = f"{rel}/{name}" if rel else name
                kind = _kind(st.st_mode)
                out.append([path, kind, st.st_size if kind == "file" else 0])
                if kind == "dir" and len(stack) < 256:
                    try:
                        stack.append(
                            (os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd), path)
                        )
                    except OSError:
                        pass
            os.close(fd)
            if truncated:
                break
    finally:
        for fd, _ in stack:
            try:
                os.close(fd)
            except OSError:
                pass
    out.sort()
    return out, truncated


# -- forwarded services: a relay in the session's network namespace, 127.0.0.1:<port> -> a unix socket ---
def _start_relay(svc):
    import socket

    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        lsock.bind(("127.0.0.1", int(svc["port"])))
    except OSError as e:
        lsock.close()
        raise OSError(
            f"service {svc['name']}: cannot listen on 127.0.0.1:{svc['port']} ({e.strerror})"
        ) from None
    lsock.listen(64)
    fd = lsock.detach()
    return [_fork_relay(fd, svc["path"]), fd, svc["path"]]


def _fork_relay(lfd, path):
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:
        try:
            os.setsid()
            import signal

            for s in (signal.SIGCHLD, signal.SIGPIPE):
                signal.signal(s, signal.SIG_DFL)
            signal.set_wakeup_fd(-1)
            keep = {0, 1, 2, lfd}
            for fd in range(3, 1024):
                if fd not in keep:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            _relay_main(lfd, path)
        except BaseException:
            pass
        os._exit(0)
    return pid


def _relay_main(lfd, path):
    import select
    import socket

    lsock = socket.socket(fileno=lfd)
    pairs = {}  # socket -> its peer
    pending = {}  # socket -> bytes waiting to be written to it
    while True:
        watch_r = [lsock] + [s for s in pairs if len(pending.get(pairs[s], b"")) < (1 << 20)]
        watch_w = [s for s, b in pending.items() if b]
        ready_r, ready_w, _ = select.select(watch_r, watch_w, [], 30)
        for s in ready_w:
            try:
                n = s.send(pending[s])
                pending[s] = pending[s][n:]
            except OSError:
                _relay_drop(s, pairs, pending)
        for s in ready_r:
            if s is lsock:
                try:
                    conn, _ = lsock.accept()
                except OSError:
                    continue
                if len(pairs) >= 128:
                    conn.close()
                    continue
                up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    up.connect(path)
                except OSError:
                    conn.close()
                    up.close()
                    continue
                for x in (conn, up):
                    x.setblocking(False)
                pairs[conn], pairs[up] = up, conn
                pending[conn], pending[up] = b"", b""
                continue
            if s not in pairs:
                continue
            try:
                data = s.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                _relay_drop(s, pairs, pending)
                continue
            pending[pairs[s]] = pending.get(pairs[s], b"") + data


def _relay_drop(s, pairs, pending):
    peer = pairs.pop(s, None)
    pending.pop(s, None)
    s.close()
    if peer is not None:
        left = pending.pop(peer, b"")
        pairs.pop(peer, None)
        try:
            if left:
                peer.setblocking(True)
                peer.settimeout(2)
                peer.sendall(left)
        except OSError:
            pass
        peer.close()


# -- the persistent interpreter -------------------------------------------------------------------------
def _status_line(report, q, write_str, ok_types):
    """The interpreter's report of a call as one JSON line, written with nothing the call's code can rebind
    (``json.dumps``, ``round``, ``repr`` of the builtins): ``q`` quotes a string, ``write_str`` gives a
    number's text, ``ok_types`` are (str, int, float, dict, list)."""
    t_str, t_int, t_float, t_dict, t_list = ok_types

    def val(v):
        if v.__class__ is t_str:
            return q(v)
        if v.__class__ is t_int or v.__class__ is t_float:
            return write_str(v)
        if v.__class__ is t_dict:
            return "{" + ", ".join([q(k) + ": " + val(x) for k, x in v.items()]) + "}"
        if v.__class__ is t_list:
            return "[" + ", ".join([val(x) for x in v]) + "]"
        return "null"

    # a lone surrogate (an exception message of the code's) becomes a JSON escape of it
    return (val(report) + "\n").encode("utf-8", "backslashreplace")


def _kernel_main(sock_fd, cfg):
    import ast
    import builtins
    import io
    import linecache
    import resource
    import signal
    import socket
    import traceback

    for s in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(s, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.set_wakeup_fd(-1)
    # the interpreter's own plumbing, bound now: the code of a call may rebind json.dumps, os.write, a builtin
    # (for its own reasons or by mistake) without the next report waiting out the call's wall limit
    o_read, o_write, o_close, o_dup2, o_open, o_exit = os.read, os.write, os.close, os.dup2, os.open, os._exit
    devnull_path, recv_fds = os.devnull, socket.recv_fds
    getrusage, r_self, r_children = resource.getrusage, resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN
    TextIOWrapper, FileIO = io.TextIOWrapper, io.FileIO
    ast_only, ast_expr, ast_expression = ast.PyCF_ONLY_AST, ast.Expr, ast.Expression
    b_compile, b_exec, b_eval, b_repr, b_str, b_type, b_int = compile, exec, eval, repr, str, type, int
    b_isinstance, b_len, b_list, b_float, b_base_exc = isinstance, len, list, float, BaseException
    status_line = _status_line
    format_exception, line_cache = traceback.format_exception, linecache.cache
    sys_mod = sys
    esc = {i: f"\\u{i:04x}" for i in range(32)}
    esc[0x22], esc[0x5C] = '\\"', "\\\\"

    def q(text):
        return '"' + text.translate(esc) + '"'

    ok_types = (str, int, float, dict, list)

    def quiet():
        devnull = o_open(devnull_path, os.O_RDWR)
        for i in (0, 1, 2):
            o_dup2(devnull, i)
        o_close(devnull)

    quiet()
    # nothing of pid 1 stays open in the code's process: only its own socket (and, during a call, the call's
    # stdout, stderr and status)
    if sock_fd > 3:
        os.closerange(3, sock_fd)
    os.closerange(sock_fd + 1, 1 << 16)
    _dumpable(1)
    _limit_self(cfg)
    workdir = cfg["workdir"]
    os.chdir(workdir)
    sys.argv = [""]
    sys.path[0] = workdir
    sys.dont_write_bytecode = True
    _reseed()
    seen = []

    def found(rel):
        if rel not in seen and len(seen) < 10000:
            seen.append(rel)

    _lake_audit(cfg.get("lake_prefixes", []), workdir, found)
    ns = {"__name__": "__main__", "__builtins__": builtins, "__doc__": None}
    sock = socket.socket(fileno=sock_fd)
    sock.send(b"ready")
    step = 0
    value_cap = int(cfg.get("value_chars", 10000))
    while True:
        try:
            msg, fds, _, _ = recv_fds(sock, 1 << 16, 4)
        except InterruptedError:
            continue
        except b_base_exc:
            o_exit(0)
        if not msg or b_len(fds) != 4:
            o_exit(0)
        code_fd, out_fd, err_fd, status_fd = fds
        try:
            chunks = []
            while True:
                c = o_read(code_fd, 1 << 20)
                if not c:
                    break
                chunks.append(c)
            code = b"".join(chunks).decode("utf-8", "surrogateescape")
        finally:
            o_close(code_fd)
        try:
            o_write(status_fd, b"S")  # the call started (the harness resends a call that never did)
        except OSError:
            pass
        o_dup2(out_fd, 1)
        o_dup2(err_fd, 2)
        o_close(out_fd)
        o_close(err_fd)
        sys_mod.stdout, sys_mod.stderr = (
            TextIOWrapper(
                FileIO(fd, "w", closefd=False),
                encoding="utf-8",
                errors="backslashreplace",
                line_buffering=True,
                write_through=True,
            )
            for fd in (1, 2)
        )
        step += 1
        try:  # {"step": N}, read without json (which the code may have changed)
            step = b_int(msg.split(b":", 1)[1].strip(b" }"))
        except b_base_exc:
            pass
        filename = f"<step {step}>"
        line_cache[filename] = (b_len(code), None, code.splitlines(True), filename)
        del seen[:]
        r0 = getrusage(r_self)
        c0 = getrusage(r_children)
        report = {"done": 0}
        try:
            tree = b_compile(code, filename, "exec", ast_only)
            last = None
            if tree.body and b_isinstance(tree.body[-1], ast_expr):
                last = ast_expression(tree.body.pop().value)
            b_exec(b_compile(tree, filename, "exec"), ns)
            if last is not None:
                value = b_eval(b_compile(last, filename, "eval"), ns)
                if value is not None:
                    try:
                        text = b_repr(value)
                        if b_type(text) is not str:
                            text = "<repr did not give text>"
                    except b_base_exc as e:
                        text = f"<repr failed: {b_type(e).__name__}>"
                    report["value"] = text[:value_cap]
        except b_base_exc as e:
            tb = e.__traceback__
            while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<step "):
                tb = tb.tb_next
            try:
                text = "".join(
                    format_exception(
                        b_type(e), e, tb or (None if b_isinstance(e, SyntaxError) else e.__traceback__)
                    )
                )
            except b_base_exc:
                text = ""
            try:
                message = b_str(e)
            except b_base_exc:
                message = ""
            if b_type(text) is not str:
                text = ""
            if b_type(message) is not str:
                message = ""
            report["error"] = {
                "type": b_type(e).__name__,
                "message": message[:4000],
                "traceback": text[-20000:],
            }
            try:
                sys_mod.stderr.write(text)
            except b_base_exc:
                pass
        for stream in (sys_mod.stdout, sys_mod.stderr):
            try:
                stream.flush()
            except b_base_exc:
                pass
        quiet()
        r1 = getrusage(r_self)
        c1 = getrusage(r_children)
        cpu = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) + (
            c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
        )
        report["cpu"] = b_float(f"{cpu:.4f}")
        report["files"] = b_list(seen)
        try:
            line = status_line(report, q, b_repr, ok_types)
        except b_base_exc:
            line = b'{"done": 0}\n'
        try:
            while line:
                line = line[o_write(status_fd, line) :]
        except OSError:
            pass
        try:
            o_close(status_fd)
        except OSError:
            pass
