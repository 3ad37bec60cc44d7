"""A small seccomp deny-list for the sandbox, handed to bubblewrap as a compiled BPF program
(``bwrap --seccomp FD``), written here with ``struct``: no libseccomp, no new dependency.

Namespaces and a dropped uid already keep the code from most of the kernel; these calls are
refused (EPERM) on top because they are the usual first step of a kernel exploit or an escape and
no grader needs them: new namespaces (a user namespace would give the code capabilities in it),
mounts, ptrace and reading other processes' memory, BPF and perf, io_uring (which bypasses
seccomp for the calls it runs), keyrings, userfaultfd, modules and kexec, file handles.
A call from another architecture's ABI (x32, i386 on x86_64) kills the process: the numbers below
would not mean the same calls there. On an architecture not listed no filter is applied.
"""

from __future__ import annotations

import contextlib
import os
import platform
import struct
from collections.abc import Iterator

# Numbers from the kernel's headers: asm/unistd_64.h (x86_64) and asm-generic/unistd.h (aarch64).
DENIED: dict[str, tuple[int, int]] = {
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "unshare": (272, 97),
    "setns": (308, 268),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsmount": (432, 432),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "userfaultfd": (323, 282),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "reboot": (169, 142),
    "acct": (163, 89),
    "syslog": (103, 116),
    "quotactl": (179, 60),
}
ARCHITECTURES = {"x86_64": (0, 0xC000003E), "aarch64": (1, 0xC00000B7)}
"""machine → (column in DENIED, AUDIT_ARCH_* value)."""

# Classic BPF as seccomp reads it: struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}.
LOAD_WORD = 0x00 | 0x00 | 0x20  # BPF_LD | BPF_W | BPF_ABS
JUMP_IF_EQUAL = 0x05 | 0x10  # BPF_JMP | BPF_JEQ | BPF_K
JUMP_IF_AT_LEAST = 0x05 | 0x30  # BPF_JMP | BPF_JGE | BPF_K
RETURN = 0x06  # BPF_RET | BPF_K
ALLOW, KILL_PROCESS, ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
EPERM = 1
SYSCALL_NUMBER, ARCHITECTURE = 0, 4  # offsets in struct seccomp_data
X32_BIT = 0x40000000


def _instruction(code: int, k: int, jump_true: int = 0, jump_false: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jump_true, jump_false, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for this machine's architecture, or None where it has no table here."""
    found = ARCHITECTURES.get(machine or platform.machine())
    if found is None:
        return None
    column, audit_arch = found
    refuse = _instruction(RETURN, ERRNO | EPERM)
    code = [
        _instruction(LOAD_WORD, ARCHITECTURE),
        _instruction(JUMP_IF_EQUAL, audit_arch, 1, 0),
        _instruction(RETURN, KILL_PROCESS),
        _instruction(LOAD_WORD, SYSCALL_NUMBER),
    ]
    if column == 0:  # x86_64: the x32 ABI shares the architecture value, its numbers carry this bit
        code += [_instruction(JUMP_IF_AT_LEAST, X32_BIT, 0, 1), _instruction(RETURN, KILL_PROCESS)]
    for numbers in DENIED.values():
        code += [_instruction(JUMP_IF_EQUAL, numbers[column], 0, 1), refuse]
    code.append(_instruction(RETURN, ALLOW))
    return b"".join(code)


@contextlib.contextmanager
def filter_fd() -> Iterator[int | None]:
    """A readable descriptor holding the program (for ``bwrap --seccomp FD``), closed after;
    None where there is no filter for this architecture."""
    compiled = program()
    if compiled is None:
        yield None
        return
    read, write = os.pipe()  # a few hundred bytes: the pipe's buffer holds them all
    try:
        os.write(write, compiled)
    finally:
        os.close(write)
    try:
        yield read
    finally:
        os.close(read)
