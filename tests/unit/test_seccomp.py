"""The default seccomp filter (runtimes/local/sandbox/seccomp.py): its layout, its syscall tables
against the kernel's headers, and its verdicts, found by running the program in a small
classic-BPF interpreter over the `seccomp_data` of a call."""

from __future__ import annotations

import errno
import os
import platform
import re
import struct
from pathlib import Path

import pytest

from lockstep.runtimes.local.sandbox import seccomp
from lockstep.runtimes.local.sandbox.seccomp import (
    AUDIT_ARCH,
    DENIALS,
    RET_ALLOW,
    RET_ERRNO,
    RET_KILL_PROCESS,
    SYSCALL_NUMBERS,
    default_filter,
    denied,
    filter_fd,
)

X86_64_HEADER = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
GENERIC_HEADER = Path("/usr/include/asm-generic/unistd.h")
AUDIT_ARCH_I386 = 0x40000003
EPERM = RET_ERRNO | errno.EPERM
ENOSYS = RET_ERRNO | errno.ENOSYS
INSTRUCTION = struct.Struct("<HBBI")
ARCHES = sorted(SYSCALL_NUMBERS)
ALLOWED = {"x86_64": {"read": 0, "write": 1, "openat": 257}, "aarch64": {"read": 63}}


def instructions(program: bytes) -> list[tuple[int, int, int, int]]:
    return [INSTRUCTION.unpack_from(program, i) for i in range(0, len(program), 8)]


def run(program: bytes, *, arch: int, nr: int, args: tuple[int, ...] = ()) -> int:
    """What the kernel would do with the call: the program's return value."""
    padded = (*args, *[0] * (6 - len(args)))
    data = struct.pack("<IIQ6Q", nr & 0xFFFFFFFF, arch, 0, *padded)
    code = instructions(program)
    pc, a = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        pc += 1
        if op == 0x20:  # ld [k]
            (a,) = struct.unpack_from("<I", data, k)
        elif op == 0x06:  # ret k
            return k
        elif op in (0x15, 0x35, 0x45):  # jeq, jge, jset
            taken = {0x15: a == k, 0x35: a >= k, 0x45: a & k != 0}[op]
            pc += jt if taken else jf
        else:
            raise AssertionError(f"unexpected opcode {op:#x}")


def verdict(arch: str, syscall: str, *args: int, capabilities: tuple[str, ...] = ()) -> int:
    program = default_filter(arch, capabilities=capabilities)
    return run(program, arch=AUDIT_ARCH[arch], nr=SYSCALL_NUMBERS[arch][syscall], args=args)


def header_numbers(header: Path) -> dict[str, int]:
    found = re.findall(r"^#define __NR_(\w+)\s+(\d+)\s*$", header.read_text(), re.MULTILINE)
    return {name: int(number) for name, number in found}


@pytest.mark.parametrize("arch", ARCHES)
def test_the_program_checks_the_architecture_first_and_ends_by_allowing(arch: str) -> None:
    code = instructions(default_filter(arch))
    assert code[0] == (0x20, 0, 0, 4)  # ld seccomp_data.arch
    assert code[1] == (0x15, 1, 0, AUDIT_ARCH[arch])
    assert code[2] == (0x06, 0, 0, RET_KILL_PROCESS)
    assert code[3] == (0x20, 0, 0, 0)  # ld seccomp_data.nr
    assert code[-1] == (0x06, 0, 0, RET_ALLOW)
    assert len(code) < 4096  # BPF_MAXINSNS


@pytest.mark.parametrize("arch", ARCHES)
def test_the_denied_numbers_follow_the_checks_each_once(arch: str) -> None:
    code = instructions(default_filter(arch))
    # After the architecture (and, on x86_64, the x32) checks: one `jeq nr` per denied call,
    # whose false branch skips its verdict, until the final allow.
    pc = 7 if arch == "x86_64" else 4
    compared = []
    while pc < len(code) - 1:
        op, jt, jf, k = code[pc]
        assert (op, jt) == (0x15, 0)
        assert code[pc + jf][0] == 0x06  # the verdict ends in a return
        compared.append(k)
        pc += 1 + jf
    assert pc == len(code) - 1
    numbers = SYSCALL_NUMBERS[arch]
    assert sorted(compared) == sorted(numbers[name] for name in denied(arch))
    assert len(set(compared)) == len(compared)
    assert numbers["unshare"] in compared
    assert numbers["ptrace"] in compared


def test_each_call_has_one_denial_and_is_documented() -> None:
    names = [d.syscall for d in DENIALS]
    assert len(names) == len(set(names))
    doc = seccomp.__doc__ or ""
    for name in names:
        assert f"`{name}`" in doc, name
        assert any(name in table for table in SYSCALL_NUMBERS.values()), name


@pytest.mark.parametrize("arch", ARCHES)
def test_denied_calls_fail_with_eperm_and_clone3_with_enosys(arch: str) -> None:
    for name, denial in denied(arch).items():
        if denial.when is not None:
            continue
        expected = ENOSYS if name == "clone3" else EPERM
        assert verdict(arch, name) == expected, name


@pytest.mark.parametrize("arch", ARCHES)
def test_other_calls_are_allowed(arch: str) -> None:
    for name, number in ALLOWED[arch].items():
        assert run(default_filter(arch), arch=AUDIT_ARCH[arch], nr=number) == RET_ALLOW, name


@pytest.mark.parametrize("arch", ARCHES)
def test_clone_is_denied_only_with_a_namespace_flag(arch: str) -> None:
    sigchld, thread_flags = 17, 0x003D0F00  # CLONE_VM | FS | FILES | SIGHAND | THREAD | ...
    assert verdict(arch, "clone", sigchld) == RET_ALLOW
    assert verdict(arch, "clone", thread_flags) == RET_ALLOW
    for flag in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000):
        assert verdict(arch, "clone", flag | sigchld) == EPERM, hex(flag)
    assert verdict(arch, "clone", 0x40000000) == EPERM
    # The kernel reads only the low 32 bits of the flags: high bits neither deny nor hide.
    assert verdict(arch, "clone", (1 << 40) | sigchld) == RET_ALLOW
    assert verdict(arch, "clone", (1 << 40) | 0x10000000) == EPERM


@pytest.mark.parametrize("arch", ARCHES)
def test_only_the_usual_personas(arch: str) -> None:
    for persona in (0, 8, 0x20000, 0x20008, 0xFFFFFFFF):
        assert verdict(arch, "personality", persona) == RET_ALLOW, hex(persona)
    for persona in (0x0040000, 0x0400000, 0x0040008):  # ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC
        assert verdict(arch, "personality", persona) == EPERM, hex(persona)


@pytest.mark.parametrize("arch", ARCHES)
def test_sockets_but_vsock(arch: str) -> None:
    assert verdict(arch, "socket", 2) == RET_ALLOW  # AF_INET
    assert verdict(arch, "socket", 1) == RET_ALLOW  # AF_UNIX
    assert verdict(arch, "socket", 40) == EPERM  # AF_VSOCK


@pytest.mark.parametrize("arch", ARCHES)
def test_a_foreign_abi_is_killed(arch: str) -> None:
    program = default_filter(arch)
    other = next(a for name, a in AUDIT_ARCH.items() if name != arch)
    assert run(program, arch=AUDIT_ARCH_I386, nr=20) == RET_KILL_PROCESS
    assert run(program, arch=other, nr=0) == RET_KILL_PROCESS


def test_x32_calls_are_killed_on_x86_64_but_no_call_passes() -> None:
    program = default_filter("x86_64")
    x86_64 = AUDIT_ARCH["x86_64"]
    assert run(program, arch=x86_64, nr=0x40000000 | 39) == RET_KILL_PROCESS  # x32 getpid
    assert run(program, arch=x86_64, nr=0x40000000 | 272) == RET_KILL_PROCESS  # x32 unshare
    assert run(program, arch=x86_64, nr=0xFFFFFFFF) == RET_ALLOW  # -1: the kernel says ENOSYS


def test_a_kept_capability_lifts_the_calls_it_governs() -> None:
    assert verdict("x86_64", "ptrace", capabilities=("SYS_PTRACE",)) == RET_ALLOW
    assert verdict("x86_64", "process_vm_readv", capabilities=("cap_sys_ptrace",)) == RET_ALLOW
    assert verdict("x86_64", "mount", capabilities=("SYS_PTRACE",)) == EPERM
    admin = ("CAP_SYS_ADMIN",)
    assert verdict("x86_64", "clone", 0x10000000, capabilities=admin) == RET_ALLOW
    assert verdict("x86_64", "clone3", capabilities=admin) == RET_ALLOW
    assert verdict("x86_64", "unshare", capabilities=admin) == RET_ALLOW
    assert verdict("aarch64", "bpf", capabilities=("BPF",)) == RET_ALLOW
    assert verdict("x86_64", "settimeofday", capabilities=("SYS_TIME",)) == RET_ALLOW
    # Some calls no capability lifts.
    everything = ("SYS_ADMIN", "SYS_PTRACE", "SYS_MODULE", "SYS_BOOT", "DAC_READ_SEARCH")
    for name in ("keyctl", "kexec_load", "swapon", "pivot_root", "userfaultfd"):
        assert verdict("x86_64", name, capabilities=everything) == EPERM, name
    assert verdict("x86_64", "personality", 0x0040000, capabilities=everything) == EPERM
    assert default_filter("x86_64", capabilities=("NO_SUCH_CAP",)) == default_filter("x86_64")


def test_the_architecture_defaults_to_this_machines() -> None:
    assert default_filter() == default_filter(platform.machine())
    assert default_filter("AMD64") == default_filter("x86_64")
    assert default_filter("arm64") == default_filter("aarch64")


def test_an_unknown_architecture_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'riscv64'"):
        default_filter("riscv64")
    with pytest.raises(ValueError, match="'armv7l'"):
        denied("armv7l")


def test_calls_missing_on_an_architecture_are_not_compared() -> None:
    assert "iopl" in denied("x86_64")
    assert "iopl" not in denied("aarch64")
    assert "ustat" not in denied("aarch64")


@pytest.mark.skipif(not X86_64_HEADER.exists(), reason="no <asm/unistd_64.h> here")
def test_x86_64_numbers_are_the_kernels() -> None:
    kernel = header_numbers(X86_64_HEADER)
    assert kernel["read"] == 0
    assert SYSCALL_NUMBERS["x86_64"] == {name: kernel[name] for name in SYSCALL_NUMBERS["x86_64"]}
    named = {d.syscall for d in DENIALS}
    assert {name for name in named if name in kernel} == set(SYSCALL_NUMBERS["x86_64"])


@pytest.mark.skipif(not GENERIC_HEADER.exists(), reason="no <asm-generic/unistd.h> here")
def test_aarch64_numbers_are_the_generic_tables() -> None:
    kernel = header_numbers(GENERIC_HEADER)
    assert kernel["read"] == 63
    assert SYSCALL_NUMBERS["aarch64"] == {name: kernel[name] for name in SYSCALL_NUMBERS["aarch64"]}
    # The obsolete x86 calls are absent from arm64, as the generic table leaves them out.
    absent = set(SYSCALL_NUMBERS["x86_64"]) - set(SYSCALL_NUMBERS["aarch64"])
    assert absent == {name for name in absent if name not in kernel}


def test_the_fd_holds_the_program_from_its_start_and_is_not_inherited() -> None:
    program = default_filter()
    fd = filter_fd(program)
    try:
        assert not os.get_inheritable(fd)
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        assert b"".join(chunks) == program
    finally:
        os.close(fd)


def test_only_whole_programs_go_into_an_fd() -> None:
    with pytest.raises(ValueError, match="8-byte"):
        filter_fd(b"")
    with pytest.raises(ValueError, match="12 bytes"):
        filter_fd(b"\0" * 12)
