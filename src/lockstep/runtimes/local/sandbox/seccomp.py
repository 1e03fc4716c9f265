"""The seccomp filter of a local pod whose security context asks for `seccompProfileType:
RuntimeDefault`: a classic BPF program for `bwrap --seccomp FD`, built here without libseccomp.

On Kubernetes, RuntimeDefault means the container runtime's own profile (Docker's or
containerd's). This machine has no container runtime, so this is **lockstep's own list**.
It follows those profiles' intent: deny the calls that reach past the pod into the machine,
or that only a privileged workload needs, and allow everything else. It is a deny-list, not
Docker's allow-list, so new kernel calls stay usable. `default_filter` builds the program and
`filter_fd` hands it to bwrap. The local runtime's sandbox (`sandbox.py`, `command(...,
seccomp_fd=...)`) calls them for every pod whose spec asks for seccomp.

What the program does, in order:

1. **Architecture.** If `seccomp_data.arch` is not the ABI the filter was built for
   (AUDIT_ARCH_X86_64 or AUDIT_ARCH_AARCH64), the process is killed (SECCOMP_RET_KILL_PROCESS,
   SIGSYS). This catches 32-bit calls: `int 0x80` on x86_64, AArch32 on arm64. Their syscall
   numbers mean other calls, so a filter written for one ABI must not judge them. Denying
   every call with an errno would leave such a process unable even to exit. On x86_64, x32
   calls (numbers with bit 0x40000000) are killed the same way; they would otherwise be a
   second number for each call that the checks below don't compare. The number -1
   (0xffffffff) is let through: the kernel answers it with ENOSYS, as libseccomp does.
2. **Denials.** Each denied call fails with EPERM, except clone3, which fails with ENOSYS so
   that glibc falls back to clone (threads, `subprocess` and `fork` keep working). Only
   calls that exist on the architecture are checked. Arguments are compared on their low 32
   bits, which is all the kernel reads of the arguments checked here.
3. **Everything else is allowed** (SECCOMP_RET_ALLOW).

Denied always, whatever capabilities the pod keeps:

- `kexec_load`, `kexec_file_load`: boot another kernel.
- `swapon`, `swapoff`: the machine's swap.
- `pivot_root`: the sandbox's root is bwrap's to arrange, never the pod's.
- `add_key`, `keyctl`, `request_key`: the kernel keyrings are not namespaced; a pod could
  read or fill keys of other workloads of the same user.
- `userfaultfd`: lets a process stall the kernel's page-fault handling at will (a staple of
  kernel exploits' race windows); training code has no use for it.
- `create_module`, `get_kernel_syms`, `query_module`, `nfsservctl`, `uselib`, `ustat`,
  `sysfs`, `_sysctl`: obsolete interfaces (most return ENOSYS today). Denied so that no
  kernel that still has them gives them to a pod.
- `socket` for AF_VSOCK (40): a channel to the hypervisor when the machine is a VM.
- `personality` other than PER_LINUX (0), PER_LINUX32 (8), UNAME26 (0x20000), PER_LINUX32 |
  UNAME26 (0x20008) and the query 0xffffffff. Other flags such as ADDR_NO_RANDOMIZE
  (turns off ASLR) and READ_IMPLIES_EXEC weaken the process and its children.

Denied unless the pod keeps one of the named capabilities. As in Docker's profile, a
capability the pod was granted also grants the calls it governs; the kernel still checks
the capability itself:

- SYS_ADMIN: `mount`, `umount2`, `move_mount`, `open_tree`, `fsopen`, `fsconfig`,
  `fsmount`, `fspick`, `mount_setattr` (the mount table: the pod's mounts are the
  sandbox's); `unshare`, `setns`, and `clone` with any namespace flag (CLONE_NEWNS, NEWUTS,
  NEWIPC, NEWUSER, NEWPID, NEWNET, NEWCGROUP). New namespaces, user namespaces above all, open
  up kernel code an unprivileged process can't otherwise reach, and could undo the sandbox's
  view. Also `clone3` (ENOSYS, above): its flags are in memory that a seccomp filter cannot
  read. Also `quotactl`, `quotactl_fd`, `lookup_dcookie`, `fanotify_init`, and `sethostname`
  and `setdomainname`: pods share the machine's UTS namespace, so these would rename the
  machine.
- SYS_ADMIN or BPF: `bpf`. SYS_ADMIN or PERFMON: `perf_event_open`. SYS_ADMIN or SYSLOG:
  `syslog` (the kernel log). These are large kernel attack surfaces, or leak kernel memory
  layout.
- SYS_MODULE: `init_module`, `finit_module`, `delete_module`.
- SYS_BOOT: `reboot`. SYS_PACCT: `acct`. SYS_TTY_CONFIG: `vhangup`.
- SYS_RAWIO: `iopl`, `ioperm` (x86_64 only): raw I/O ports.
- SYS_TIME: `settimeofday`, `clock_settime`, `clock_adjtime`, `adjtimex`. The clocks are
  the machine's. This is stricter than Docker, which lets the kernel refuse the changes;
  reading the NTP state is all these calls would give a pod without the capability.
- SYS_PTRACE: `ptrace`, `process_vm_readv`, `process_vm_writev`, `kcmp`, `pidfd_getfd`,
  `process_madvise`. Docker allows ptrace and process_vm_* because each container has its
  own pid namespace. Local pods don't: they share the machine's pids (see `sandbox.py`) and
  often lockstep's own user. So these calls would reach other pods' processes and lockstep
  itself: read or write their memory, take their file descriptors.
- DAC_READ_SEARCH: `open_by_handle_at` (opens any file of a mounted file system by its
  handle, past the sandbox's mounts: the "shocker" escape) and `name_to_handle_at`, which
  only serves it.

Allowed, though Docker denies them to pods without SYS_NICE: `mbind`, `set_mempolicy`,
`get_mempolicy`, `set_mempolicy_home_node`, `move_pages`, `migrate_pages`. NUMA placement is
part of training (hwloc in MPI, numactl, data loaders), and the kernel already requires
SYS_NICE to move another process's pages.
`ioctl(TIOCSTI)`, which bwrap's manual warns about, needs a terminal, and pods have none:
their session is new and their stdin is /dev/null.

Syscall numbers: x86_64 from the kernel's `arch/x86/entry/syscalls/syscall_64.tbl` (as in
`<asm/unistd_64.h>`), aarch64 from `<asm-generic/unistd.h>`, which arm64 uses. The unit
tests check them against the headers where those are installed.

With kernel 5.11 or newer, the kernel caches the answer for every call whose verdict
doesn't depend on its arguments, so almost no call runs this program at all.
"""

from __future__ import annotations

import errno
import platform
import struct
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from lockstep.runtimes.local.sandbox.memory_file import memory_file

# Classic BPF opcodes (<linux/bpf_common.h>), as the kernel's seccomp filters use them.
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS: A = 32-bit word at offset k of seccomp_data
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K: A == k
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K: A >= k (unsigned)
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K: A & k != 0
_RET = 0x06  # BPF_RET | BPF_K: return k

RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
"""Or'd with the errno (in the low 16 bits) the call returns."""
RET_ALLOW = 0x7FFF0000

# Offsets in struct seccomp_data {int nr; u32 arch; u64 instruction_pointer; u64 args[6];}.
_NR = 0
_ARCH = 4
_ARGS = 16

_X32_SYSCALL_BIT = 0x40000000
_NO_SYSCALL = 0xFFFFFFFF
"""nr -1: no call at all (the kernel answers ENOSYS); not an x32 call."""

_MAX_JUMP = 0xFF
_INSTRUCTION = struct.Struct("<HBBI")
"""struct sock_filter {u16 code; u8 jt; u8 jf; u32 k;}, little-endian like both supported ABIs
(AUDIT_ARCH_X86_64 and AUDIT_ARCH_AARCH64 both carry __AUDIT_ARCH_LE)."""

INSTRUCTION_SIZE = _INSTRUCTION.size

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
"""AUDIT_ARCH_X86_64 and AUDIT_ARCH_AARCH64: EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE."""

_MACHINE_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}

SYSCALL_NUMBERS: Mapping[str, Mapping[str, int]] = {
    "x86_64": {
        "_sysctl": 156,
        "acct": 163,
        "add_key": 248,
        "adjtimex": 159,
        "bpf": 321,
        "clock_adjtime": 305,
        "clock_settime": 227,
        "clone": 56,
        "clone3": 435,
        "create_module": 174,
        "delete_module": 176,
        "fanotify_init": 300,
        "finit_module": 313,
        "fsconfig": 431,
        "fsmount": 432,
        "fsopen": 430,
        "fspick": 433,
        "get_kernel_syms": 177,
        "init_module": 175,
        "ioperm": 173,
        "iopl": 172,
        "kcmp": 312,
        "kexec_file_load": 320,
        "kexec_load": 246,
        "keyctl": 250,
        "lookup_dcookie": 212,
        "mount": 165,
        "mount_setattr": 442,
        "move_mount": 429,
        "name_to_handle_at": 303,
        "nfsservctl": 180,
        "open_by_handle_at": 304,
        "open_tree": 428,
        "perf_event_open": 298,
        "personality": 135,
        "pidfd_getfd": 438,
        "pivot_root": 155,
        "process_madvise": 440,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "ptrace": 101,
        "query_module": 178,
        "quotactl": 179,
        "quotactl_fd": 443,
        "reboot": 169,
        "request_key": 249,
        "setdomainname": 171,
        "sethostname": 170,
        "setns": 308,
        "settimeofday": 164,
        "socket": 41,
        "swapoff": 168,
        "swapon": 167,
        "sysfs": 139,
        "syslog": 103,
        "umount2": 166,
        "unshare": 272,
        "uselib": 134,
        "userfaultfd": 323,
        "ustat": 136,
        "vhangup": 153,
    },
    "aarch64": {
        "acct": 89,
        "add_key": 217,
        "adjtimex": 171,
        "bpf": 280,
        "clock_adjtime": 266,
        "clock_settime": 112,
        "clone": 220,
        "clone3": 435,
        "delete_module": 106,
        "fanotify_init": 262,
        "finit_module": 273,
        "fsconfig": 431,
        "fsmount": 432,
        "fsopen": 430,
        "fspick": 433,
        "init_module": 105,
        "kcmp": 272,
        "kexec_file_load": 294,
        "kexec_load": 104,
        "keyctl": 219,
        "lookup_dcookie": 18,
        "mount": 40,
        "mount_setattr": 442,
        "move_mount": 429,
        "name_to_handle_at": 264,
        "nfsservctl": 42,
        "open_by_handle_at": 265,
        "open_tree": 428,
        "perf_event_open": 241,
        "personality": 92,
        "pidfd_getfd": 438,
        "pivot_root": 41,
        "process_madvise": 440,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "ptrace": 117,
        "quotactl": 60,
        "quotactl_fd": 443,
        "reboot": 142,
        "request_key": 218,
        "setdomainname": 162,
        "sethostname": 161,
        "setns": 268,
        "settimeofday": 170,
        "socket": 198,
        "swapoff": 225,
        "swapon": 224,
        "syslog": 116,
        "umount2": 39,
        "unshare": 97,
        "userfaultfd": 282,
        "vhangup": 58,
    },
}
"""The numbers of the calls this filter looks at, per architecture (only those that exist there)."""

SUPPORTED_ARCHES = tuple(SYSCALL_NUMBERS)


@dataclass(frozen=True, slots=True)
class AnyBits:
    """Holds when the argument has any of `mask`'s bits set."""

    index: int
    mask: int


@dataclass(frozen=True, slots=True)
class OneOf:
    """Holds when the argument is one of `values`."""

    index: int
    values: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class NoneOf:
    """Holds when the argument is none of `values`."""

    index: int
    values: tuple[int, ...]


Condition = AnyBits | OneOf | NoneOf
"""A test on the low 32 bits of one of the call's arguments."""


@dataclass(frozen=True, slots=True)
class Denial:
    """A call the filter refuses with `errno`: whenever `when` holds (always when None),
    unless the pod keeps one of the capabilities in `unless`."""

    syscall: str
    unless: frozenset[str] = frozenset()
    when: Condition | None = None
    errno: int = errno.EPERM


_NAMESPACE_FLAGS = 0x7E020000
"""CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET."""
_AF_VSOCK = 40
_USUAL_PERSONAS = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)
"""PER_LINUX, PER_LINUX32, UNAME26, PER_LINUX32 | UNAME26, and the query."""


def _denials(names: Iterable[str], *unless: str) -> tuple[Denial, ...]:
    return tuple(Denial(name, unless=frozenset(unless)) for name in names)


DENIALS: tuple[Denial, ...] = (
    *_denials(("kexec_load", "kexec_file_load", "swapon", "swapoff", "pivot_root")),
    *_denials(("add_key", "keyctl", "request_key", "userfaultfd")),
    *_denials(("create_module", "get_kernel_syms", "query_module", "nfsservctl")),
    *_denials(("uselib", "ustat", "sysfs", "_sysctl")),
    Denial("socket", when=OneOf(0, (_AF_VSOCK,))),
    Denial("personality", when=NoneOf(0, _USUAL_PERSONAS)),
    *_denials(
        ("mount", "umount2", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount"),
        "SYS_ADMIN",
    ),
    *_denials(("fspick", "mount_setattr", "unshare", "setns"), "SYS_ADMIN"),
    Denial("clone", unless=frozenset({"SYS_ADMIN"}), when=AnyBits(0, _NAMESPACE_FLAGS)),
    Denial("clone3", unless=frozenset({"SYS_ADMIN"}), errno=errno.ENOSYS),
    *_denials(("quotactl", "quotactl_fd", "lookup_dcookie", "fanotify_init"), "SYS_ADMIN"),
    *_denials(("sethostname", "setdomainname"), "SYS_ADMIN"),
    Denial("bpf", unless=frozenset({"SYS_ADMIN", "BPF"})),
    Denial("perf_event_open", unless=frozenset({"SYS_ADMIN", "PERFMON"})),
    Denial("syslog", unless=frozenset({"SYS_ADMIN", "SYSLOG"})),
    *_denials(("init_module", "finit_module", "delete_module"), "SYS_MODULE"),
    Denial("reboot", unless=frozenset({"SYS_BOOT"})),
    Denial("acct", unless=frozenset({"SYS_PACCT"})),
    Denial("vhangup", unless=frozenset({"SYS_TTY_CONFIG"})),
    *_denials(("iopl", "ioperm"), "SYS_RAWIO"),
    *_denials(("settimeofday", "clock_settime", "clock_adjtime", "adjtimex"), "SYS_TIME"),
    *_denials(("ptrace", "process_vm_readv", "process_vm_writev"), "SYS_PTRACE"),
    *_denials(("kcmp", "pidfd_getfd", "process_madvise"), "SYS_PTRACE"),
    *_denials(("open_by_handle_at", "name_to_handle_at"), "DAC_READ_SEARCH"),
)
"""Every call the filter may deny, each once; see the module's docstring for why."""


def machine(arch: str | None = None) -> str:
    """The architecture's name as the tables spell it (`arch`, or this machine's).

    Raises ValueError naming an architecture lockstep has no syscall table for."""
    name = platform.machine() if arch is None else arch
    name = _MACHINE_ALIASES.get(name.lower(), name.lower())
    if name not in SYSCALL_NUMBERS:
        supported = ", ".join(SUPPORTED_ARCHES)
        raise ValueError(
            f"no seccomp filter for the architecture {name!r}: lockstep knows {supported}"
        )
    return name


def denied(arch: str | None = None, *, capabilities: Collection[str] = ()) -> dict[str, Denial]:
    """The denials that apply on `arch` to a pod keeping `capabilities`, by call name."""
    numbers = SYSCALL_NUMBERS[machine(arch)]
    kept = {_capability(name) for name in capabilities}
    return {d.syscall: d for d in DENIALS if d.syscall in numbers and not (d.unless & kept)}


def default_filter(arch: str | None = None, *, capabilities: Collection[str] = ()) -> bytes:
    """The filter for `arch` (this machine's when None) as the raw `struct sock_filter[]`
    that `bwrap --seccomp FD` reads, for a pod that keeps `capabilities`.

    `capabilities` are names such as SYS_PTRACE or CAP_SYS_PTRACE, in any case; a kept one
    lifts the denials it governs (see the module's docstring). The default lifts none.
    Names that govern no call are ignored, so a misspelling only makes the filter stricter.
    Raises ValueError for an architecture without a syscall table."""
    name = machine(arch)
    numbers = SYSCALL_NUMBERS[name]
    program = [
        _load(_ARCH),
        _jump(_JEQ, AUDIT_ARCH[name], 1, 0),
        _ret(RET_KILL_PROCESS),
        _load(_NR),
    ]
    if name == "x86_64":
        program += [
            _jump(_JGE, _X32_SYSCALL_BIT, 0, 2),
            _jump(_JEQ, _NO_SYSCALL, 1, 0),
            _ret(RET_KILL_PROCESS),
        ]
    for denial in denied(name, capabilities=capabilities).values():
        verdict = _verdict(denial)
        program += [_jump(_JEQ, numbers[denial.syscall], 0, len(verdict)), *verdict]
    program.append(_ret(RET_ALLOW))
    return b"".join(program)


def filter_fd(program: bytes) -> int:
    """A file descriptor from which one bwrap reads `program`: a memfd holding it, positioned
    at its start.

    Ownership: the caller owns the descriptor and closes it as soon as the child that gets it
    has been started. It is close-on-exec, so it reaches only the child it is handed to:
    `subprocess` with `pass_fds=(fd,)`, or `os.posix_spawn` with a
    `(os.POSIX_SPAWN_DUP2, fd, fd)` file action. That child then runs `bwrap --seccomp
    <fd>`. bwrap reads its inherited copy to the end and closes it before the pod's command
    runs, so the pod never holds it. The read position is shared with the caller's copy, so
    one descriptor serves exactly one bwrap: make a new one for each pod."""
    if not program or len(program) % INSTRUCTION_SIZE:
        raise ValueError(
            f"a BPF program is a non-empty run of {INSTRUCTION_SIZE}-byte instructions, "
            f"not {len(program)} bytes"
        )
    return memory_file("lockstep-seccomp", program)


def _capability(name: str) -> str:
    return name.upper().removeprefix("CAP_")


def _verdict(denial: Denial) -> list[bytes]:
    """The instructions that answer a call once its number matched `denial`'s; all end in a
    return, so whatever they load into the accumulator no later check sees."""
    refuse = _ret(RET_ERRNO | denial.errno)
    allow = _ret(RET_ALLOW)
    match denial.when:
        case None:
            return [refuse]
        case AnyBits(index, mask):
            return [_load(_arg(index)), _jump(_JSET, mask, 0, 1), refuse, allow]
        case OneOf(index, values):
            # A match jumps over the remaining comparisons and the allow, to the refusal.
            tests = [_jump(_JEQ, v, len(values) - i, 0) for i, v in enumerate(values)]
            return [_load(_arg(index)), *tests, allow, refuse]
        case NoneOf(index, values):
            tests = [_jump(_JEQ, v, len(values) - i, 0) for i, v in enumerate(values)]
            return [_load(_arg(index)), *tests, refuse, allow]


def _arg(index: int) -> int:
    """The offset of the argument's low 32 bits (both supported ABIs are little-endian)."""
    if not 0 <= index < 6:
        raise ValueError(f"a system call has arguments 0 to 5, not {index}")
    return _ARGS + 8 * index


def _load(offset: int) -> bytes:
    return _INSTRUCTION.pack(_LD_W_ABS, 0, 0, offset)


def _jump(code: int, k: int, jt: int, jf: int) -> bytes:
    if not (0 <= jt <= _MAX_JUMP and 0 <= jf <= _MAX_JUMP):
        raise ValueError(f"a conditional jump reaches at most {_MAX_JUMP} instructions")
    return _INSTRUCTION.pack(code, jt, jf, k)


def _ret(k: int) -> bytes:
    return _INSTRUCTION.pack(_RET, 0, 0, k)
