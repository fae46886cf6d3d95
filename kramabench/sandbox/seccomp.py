"""The local backend's seccomp filter: the kernel keyring system calls refused, as docker refuses them.

A classic-BPF program (an array of ``struct sock_filter``: u16 code, u8 jt, u8 jf, u32 k, in the host's
byte order) that bubblewrap loads with ``--seccomp FD`` before it starts the sandbox's first process. It
makes ``add_key``, ``request_key`` and ``keyctl`` fail with EPERM, as docker's default seccomp profile does,
and allows every other system call. A system call of another ABI than the host's (x86-64's i386 ``int 0x80``
and x32 calls, whose numbers differ) fails with EPERM too: no interpreter of the sandbox needs them, and
they would be a way around the numbers checked.

Why: the keyrings of the sandbox user outlive the processes that fill them (like IPC objects), and code can
take away the permissions that the bootstrap's clean-up between runs needs to empty them, so a key would
reach the next run of a warm sandbox. The clean-up stays as it is (a second line, and the only one on an
architecture whose numbers are not known here).

Numbers from the kernel's uapi headers: ``linux/audit.h`` (``AUDIT_ARCH_*`` = ``EM_*`` | 64-bit | little
endian), ``asm/unistd_64.h`` (x86-64) and ``asm-generic/unistd.h`` (arm64), ``asm/unistd.h``
(``__X32_SYSCALL_BIT``), ``linux/seccomp.h`` and ``linux/filter.h``.
"""

from __future__ import annotations

import errno
import os
import platform
import struct

# linux/filter.h, linux/bpf_common.h
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS: A = the 32-bit word at offset k of seccomp_data
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K (unsigned)
_RET_K = 0x06  # BPF_RET | BPF_K

# linux/seccomp.h
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
#: offsets in struct seccomp_data {int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6];}
_NR, _ARCH = 0, 4

#: per ``platform.machine()``: (AUDIT_ARCH of the host's ABI, the lowest number of another ABI sharing that
#: arch value or None, the numbers of add_key, request_key, keyctl)
ARCHES: dict[str, tuple[int, int | None, tuple[int, int, int]]] = {
    "x86_64": (0xC000003E, 0x40000000, (248, 249, 250)),  # AUDIT_ARCH_X86_64; x32: __X32_SYSCALL_BIT
    "aarch64": (0xC00000B7, None, (217, 218, 219)),  # AUDIT_ARCH_AARCH64
}
ARCHES["amd64"] = ARCHES["x86_64"]
ARCHES["arm64"] = ARCHES["aarch64"]

#: the system calls refused, by name (what the docs and the backend's info() say)
REFUSED = ("add_key", "request_key", "keyctl")


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def keyring_filter(machine: str | None = None) -> bytes | None:
    """The compiled filter for ``machine`` (default: this host's), or None when its numbers are not known."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    audit_arch, foreign_from, numbers = arch
    deny = SECCOMP_RET_ERRNO | errno.EPERM
    body: list[tuple[int, int, int, int]] = []  # each jump's jt/jf below is relative to the next instruction
    if foreign_from is not None:
        body.append((_JGE_K, 0, 0, foreign_from))  # another ABI's numbers: refused
    body += [(_JEQ_K, 0, 0, nr) for nr in numbers]
    # layout: ld arch; jeq arch (else deny); ld nr; body...; ret allow; ret deny
    prog = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, 0, 0, audit_arch),
        (_LD_W_ABS, 0, 0, _NR),
        *body,
        (_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        (_RET_K, 0, 0, deny),
    ]
    deny_at = len(prog) - 1
    out = []
    for i, (code, jt, jf, k) in enumerate(prog):
        if i == 1:  # the arch check: on to the next instruction, else deny
            jt, jf = 0, deny_at - i - 1
        elif code in (_JEQ_K, _JGE_K):  # a refused number: deny, else on
            jt, jf = deny_at - i - 1, 0
        out.append(_insn(code, jt, jf, k))
    return b"".join(out)


def filter_fd(program: bytes) -> int:
    """A file descriptor (a memfd, no file anywhere) holding ``program`` read from its start, for one bwrap
    (``--seccomp FD``; bwrap reads it to the end, so each bwrap needs its own). Not inheritable: pass it with
    ``pass_fds``. The caller closes it once bwrap has started."""
    fd = os.memfd_create("kramabench-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


__all__ = ["ARCHES", "REFUSED", "filter_fd", "keyring_filter"]
