"""A seccomp filter for the desktop: no setuid or setgid bit on any file it makes.

The desktop's files live on the host's disk (its home), owned by the desktop's host
uid. A setuid bit there would let anyone who can reach the file run code as that uid;
nothing a desktop app does needs one. So every call that sets a file mode (chmod and
its variants, and the file-creating calls with a mode) fails with EPERM when the mode
carries S_ISUID or S_ISGID. Calls of another ABI (i386 or x32 on x86_64), whose numbers
this filter does not check, fail with ENOSYS: the desktop runs 64-bit programs only.

The program is classic BPF, as `bwrap --seccomp FD` takes it: an array of
struct sock_filter {u16 code; u8 jt; u8 jf; u32 k} in the machine's byte order.
"""
from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

from ....errors import ProviderError

# BPF opcodes (linux/filter.h, linux/bpf_common.h)
LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06

RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000

SECCOMP_DATA_NR = 0
SECCOMP_DATA_ARCH = 4
SECCOMP_DATA_ARGS = 16

SPECIAL_BITS = 0o6000  # S_ISUID | S_ISGID
X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True)
class Abi:
    audit_arch: int
    # syscall number -> index of its mode argument
    mode_args: dict[int, int]
    reject_from: int | None = None  # numbers at or above this belong to another ABI


ABIS = {
    "x86_64": Abi(0xC000003E, {
        90: 1,    # chmod(path, mode)
        91: 1,    # fchmod(fd, mode)
        268: 2,   # fchmodat(dirfd, path, mode)
        452: 2,   # fchmodat2(dirfd, path, mode, flags)
        2: 2,     # open(path, flags, mode)
        85: 1,    # creat(path, mode)
        257: 3,   # openat(dirfd, path, flags, mode)
        133: 1,   # mknod(path, mode, dev)
        259: 2,   # mknodat(dirfd, path, mode, dev)
    }, reject_from=X32_SYSCALL_BIT),
    "aarch64": Abi(0xC00000B7, {
        52: 1,    # fchmod
        53: 2,    # fchmodat
        452: 2,   # fchmodat2
        56: 3,    # openat
        33: 2,    # mknodat
    }),
}
OPENAT2 = 437  # its mode sits in a struct the filter cannot read: refused, callers fall back to openat


class UnsupportedArchitecture(ProviderError):
    """A machine this filter has no syscall numbers for."""


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> tuple[int, int, int, int]:
    return code, jt, jf, k


def build_program(machine: str | None = None) -> list[tuple[int, int, int, int]]:
    machine = machine or platform.machine()
    abi = ABIS.get(machine)
    if abi is None:
        raise UnsupportedArchitecture(f"no seccomp filter for {machine}; known: {', '.join(ABIS)}")
    deny = _insn(RET_K, RET_ERRNO | errno.EPERM)
    allow = _insn(RET_K, RET_ALLOW)
    nosys = _insn(RET_K, RET_ERRNO | errno.ENOSYS)
    program = [_insn(LD_W_ABS, SECCOMP_DATA_ARCH),
               _insn(JEQ_K, abi.audit_arch, jt=1, jf=0),
               nosys,
               _insn(LD_W_ABS, SECCOMP_DATA_NR)]
    if abi.reject_from is not None:
        program += [_insn(JGE_K, abi.reject_from, jt=0, jf=1), nosys]
    program += [_insn(JEQ_K, OPENAT2, jt=0, jf=1), nosys]
    # One block per call: jeq (not this call: skip the 4 below), load its mode, jset (a
    # special bit: fall to deny; none: skip to allow), deny, allow.
    for number, index in abi.mode_args.items():
        program += [_insn(JEQ_K, number, jt=0, jf=4),
                    _insn(LD_W_ABS, SECCOMP_DATA_ARGS + 8 * index + (0 if _little_endian() else 4)),
                    _insn(JSET_K, SPECIAL_BITS, jt=0, jf=1),
                    deny,
                    allow]
    return program + [allow]


def _little_endian() -> bool:
    return struct.pack("=H", 1) == b"\x01\x00"


def compiled(machine: str | None = None) -> bytes:
    return b"".join(struct.pack("=HBBI", *insn) for insn in build_program(machine))


def filter_fd() -> int:
    """A readable fd holding the program, for `bwrap --seccomp FD` (the caller closes it)."""
    data = compiled()
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, data)  # a few hundred bytes: well within a pipe's buffer
    finally:
        os.close(write_fd)
    return read_fd
