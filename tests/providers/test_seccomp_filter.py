"""The setuid filter, run on a small classic-BPF interpreter: what it allows and refuses per call."""
import errno
import struct

import pytest

from desktop_env.providers.local.boot import seccomp


def run(program, arch: int, nr: int, args=(0, 0, 0, 0, 0, 0)) -> int:
    """Evaluates `program` on one seccomp_data {nr, arch, ip, args[6]} (little-endian layout)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        if code == seccomp.LD_W_ABS:
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == seccomp.RET_K:
            return k
        elif code in (seccomp.JEQ_K, seccomp.JGE_K, seccomp.JSET_K):
            taken = {seccomp.JEQ_K: acc == k, seccomp.JGE_K: acc >= k, seccomp.JSET_K: bool(acc & k)}[code]
            pc += jt if taken else jf
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
        pc += 1


X86 = seccomp.ABIS["x86_64"].audit_arch
DENY, ALLOW = seccomp.RET_ERRNO | errno.EPERM, seccomp.RET_ALLOW


@pytest.fixture(scope="module")
def program():
    return seccomp.build_program("x86_64")


@pytest.mark.parametrize("nr,index", sorted(seccomp.ABIS["x86_64"].mode_args.items()))
def test_a_mode_with_setuid_or_setgid_is_refused_for_every_mode_setting_call(program, nr, index):
    for mode, verdict in ((0o4755, DENY), (0o2755, DENY), (0o6644, DENY), (0o755, ALLOW), (0o1777, ALLOW)):
        args = [0] * 6
        args[index] = mode
        assert run(program, X86, nr, args) == verdict, (nr, oct(mode))


def test_other_calls_and_other_arguments_pass(program):
    assert run(program, X86, 0, [0o4755] * 6) == ALLOW          # read(), whatever its arguments
    assert run(program, X86, 257, [0, 0, 0o100, 0o644, 0, 0]) == ALLOW  # openat(O_CREAT, 0644)


def test_other_abis_and_openat2_are_refused_outright(program):
    nosys = seccomp.RET_ERRNO | errno.ENOSYS
    assert run(program, 0x40000003, 15) == nosys                # i386 chmod
    assert run(program, X86, seccomp.X32_SYSCALL_BIT | 90) == nosys
    assert run(program, X86, seccomp.OPENAT2) == nosys


def test_the_compiled_program_is_struct_sock_filter_records():
    data = seccomp.compiled("x86_64")
    assert len(data) == 8 * len(seccomp.build_program("x86_64"))
    with pytest.raises(seccomp.UnsupportedArchitecture):
        seccomp.build_program("sparc")
