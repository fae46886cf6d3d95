"""The local backend's seccomp filter (kramabench/sandbox/seccomp.py): its program, checked by interpreting
it, and what it does in real bwrap sandboxes (warm runs, cold runs, sessions). The keyring attacks
themselves, on every backend, are in test_adversarial.py and test_session_attacks.py."""

from __future__ import annotations

import errno
import json
import logging
import os
import struct
import textwrap

import pytest

from kramabench.sandbox import Limits
from kramabench.sandbox.seccomp import ARCHES, SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, keyring_filter

DENY = SECCOMP_RET_ERRNO | errno.EPERM
AUDIT_ARCH_I386 = 0x40000003  # EM_386 | __AUDIT_ARCH_LE (linux/audit.h)


def interpret(program: bytes, nr: int, arch: int) -> int:
    """Run a classic-BPF seccomp program over (nr, arch) as the kernel would; only the instructions a
    filter of this kind may use are known (anything else fails the test)."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *([0] * 6))
    insns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    for _ in range(len(insns)):
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code == 0x15:  # jeq k
            pc += 1 + (jt if acc == k else jf)
        elif code == 0x35:  # jge k
            pc += 1 + (jt if acc >= k else jf)
        elif code == 0x06:  # ret k
            return k
        else:
            raise AssertionError(f"unexpected BPF instruction {code:#x}")
    raise AssertionError("the program does not end in a return")


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_program_refuses_the_keyring_calls_and_foreign_abis_only(machine):
    program = keyring_filter(machine)
    assert program is not None and len(program) % 8 == 0 and len(program) // 8 <= 16
    arch, foreign, (add_key, request_key, keyctl) = ARCHES[machine]
    for nr in (add_key, request_key, keyctl):
        assert interpret(program, nr, arch) == DENY
        assert interpret(program, nr, AUDIT_ARCH_I386) == DENY
    for nr in (
        0,
        1,
        39,
        56,
        57,
        59,
        61,
        231,
        add_key - 1,
        keyctl + 1,
        435,
        450,
    ):  # read, write, getpid, clone...
        assert interpret(program, nr, arch) == SECCOMP_RET_ALLOW, nr
        assert interpret(program, nr, AUDIT_ARCH_I386) == DENY, nr  # another ABI: nothing
    if foreign is not None:  # x32 on x86-64: its numbers carry 0x40000000
        for nr in (foreign, foreign + 39, foreign + keyctl, 0x7FFFFFFF):
            assert interpret(program, nr, arch) == DENY, nr


def test_an_unknown_architecture_has_no_program():
    assert keyring_filter("riscv64") is None
    assert keyring_filter("no-such-machine") is None


#: x32's getpid (0x40000000 + 39), i386's getpid through int 0x80 (eax 20) and keyctl, with errno; the
#: descriptors the code holds; the process's seccomp mode (2: filter)
PROBE = textwrap.dedent(r"""
    import ctypes, json, mmap, os, platform
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    def call(nr, *a):
        ctypes.set_errno(0)
        r = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(x) for x in a))
        return [r, ctypes.get_errno() if r < 0 else 0]
    r = {"getpid": call(39 if platform.machine() == "x86_64" else 172)[0] > 0}
    r["keyctl"] = call(250 if platform.machine() == "x86_64" else 219, 0, -4, 1)  # KEYCTL_GET_KEYRING_ID
    if platform.machine() == "x86_64":
        r["x32_getpid"] = call(0x40000000 + 39)
        m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        m.write(b"\xb8\x14\x00\x00\x00\xcd\x80\xc3")  # mov eax, 20; int 0x80; ret
        r["i386_getpid"] = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))()
    fds = {}
    for n in os.listdir("/proc/self/fd"):
        try:
            fds[n] = os.readlink(f"/proc/self/fd/{n}")
        except OSError:
            pass
    r["fds"] = fds
    r["seccomp"] = [l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:")]
    print(json.dumps(r))
""")


def probe_results(sb, planted) -> list[dict]:
    """PROBE in a run and in a session of ``sb``."""
    res = sb.run(PROBE, planted.lake, Limits(wall_timeout_s=60))
    assert res.ok, res
    with sb.session(planted.lake) as s:
        p = s.python(PROBE)
    assert p.ok, p
    return [json.loads(res.stdout.strip().splitlines()[-1]), json.loads(p.stdout.strip().splitlines()[-1])]


@pytest.mark.parametrize("which", ["local", "local_cold"])
def test_every_local_sandbox_runs_under_the_filter(request, which, planted):
    """Warm runs, cold runs and sessions: seccomp mode 2, the keyring and other-ABI calls refused with EPERM,
    ordinary calls allowed, and no descriptor of the filter left to the code (it came through a memfd)."""
    if os.uname().machine not in ARCHES:
        pytest.skip(f"no seccomp filter on {os.uname().machine}")
    sb = request.getfixturevalue(f"{which}_sandbox")
    assert "keyctl" in sb.info()["syscall_filter"]
    for out in probe_results(sb, planted):
        assert out["seccomp"] == ["2"], out
        assert out["getpid"] is True
        assert out["keyctl"] == [-1, errno.EPERM], out
        if os.uname().machine == "x86_64":
            assert out["x32_getpid"] == [-1, errno.EPERM], out
            assert out["i386_getpid"] == -errno.EPERM, out
        assert not any("seccomp" in target for target in out["fds"].values()), out


def test_an_unknown_architecture_is_said_in_one_line_and_the_sandbox_still_works(
    monkeypatch, caplog, planted
):
    """No numbers for this machine: one warning where the sandbox is built, no filter, runs as before (the
    keyrings are then emptied between runs by the bootstrap's clean-up only)."""
    from kramabench.sandbox import local

    monkeypatch.setattr(local, "_machine", lambda: "riscv64")
    with caplog.at_level(logging.WARNING, logger="kramabench.sandbox.local"):
        sb = local.LocalSandbox(fork_server=False)
    try:
        said = [r.getMessage() for r in caplog.records if "seccomp" in r.getMessage()]
        assert len(said) == 1 and "riscv64" in said[0] and "\n" not in said[0], said
        assert sb.info()["syscall_filter"].startswith("none (unknown architecture riscv64)")
        res = sb.run(PROBE, planted.lake, Limits(wall_timeout_s=60))
        assert res.ok, res
        assert json.loads(res.stdout.strip().splitlines()[-1])["seccomp"] == ["0"]
    finally:
        sb.close()
