/**
 * The sandbox's seccomp filter, as the classic BPF program bubblewrap loads with `--seccomp FD`
 * (an array of `struct sock_filter`, 8 bytes each, native byte order — little-endian on the two
 * architectures supported here).
 *
 * What it does, in order:
 * - a system call of another ABI than the native one (i386 on x86-64, the x32 ABI's numbers with
 *   bit 30 set, arm32 on arm64) fails with ENOSYS, so nobody can reach a syscall table the list
 *   below does not cover;
 * - `socket(2)` is allowed for `AF_UNIX` only: IPv4, IPv6, netlink, packet and every other family
 *   fail with EAFNOSUPPORT. With the empty network namespace this is the "no network at all" rule
 *   held twice (the namespace's own loopback cannot even be opened);
 * - a short list of calls that only enlarge the kernel's attack surface or hide memory and disk
 *   from the limits fails with EPERM: SysV shared memory and message queues, POSIX message
 *   queues, `memfd_create`/`memfd_secret`, io_uring (it can open sockets and files bypassing this
 *   filter), `userfaultfd`, `perf_event_open`, `bpf`, keyrings, `ptrace` and cross-process memory
 *   access, file handles, mount and namespace calls, and the host-wide administration calls
 *   (reboot, modules, swap, clock, quota, kexec).
 *
 * Sources: linux/seccomp.h (return values, `struct seccomp_data`: nr at 0, arch at 4, args at 16),
 * linux/audit.h (AUDIT_ARCH_X86_64 = 0xC000003E, AUDIT_ARCH_AARCH64 = 0xC00000B7), the syscall
 * tables asm/unistd_64.h (x86-64) and asm-generic/unistd.h (arm64).
 */

/** Architectures the filter is built for (`process.arch` names). */
export type SeccompArch = "x64" | "arm64";

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;

const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;
const AF_UNIX = 1;

const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

interface ArchTable {
  audit: number;
  /** First number that is not a native syscall of this ABI (x32's bit on x86-64). */
  foreignFrom: number | null;
  socket: number;
  blocked: Record<BlockedCall, number>;
}

type BlockedCall =
  | "shmget" | "msgget" | "mq_open" | "memfd_create" | "memfd_secret"
  | "io_uring_setup" | "io_uring_enter" | "io_uring_register" | "userfaultfd" | "perf_event_open" | "bpf"
  | "keyctl" | "add_key" | "request_key" | "ptrace" | "process_vm_readv" | "process_vm_writev" | "kcmp"
  | "name_to_handle_at" | "open_by_handle_at" | "fanotify_init" | "lookup_dcookie"
  | "mount" | "umount2" | "pivot_root" | "chroot" | "unshare" | "setns"
  | "open_tree" | "move_mount" | "fsopen" | "fsconfig" | "fsmount" | "fspick" | "mount_setattr"
  | "swapon" | "swapoff" | "reboot" | "kexec_load" | "kexec_file_load" | "init_module" | "finit_module" | "delete_module"
  | "acct" | "quotactl" | "syslog" | "clock_settime" | "settimeofday";

/** Numbers added after 4.x are the same on both (the unified table from 403 on). */
const COMMON_NEW = {
  open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433,
  io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, mount_setattr: 442, memfd_secret: 447,
} as const;

const TABLES: Record<SeccompArch, ArchTable> = {
  x64: {
    audit: 0xc000003e,
    foreignFrom: 0x40000000,
    socket: 41,
    blocked: {
      ...COMMON_NEW,
      shmget: 29, msgget: 68, mq_open: 240, memfd_create: 319, userfaultfd: 323, perf_event_open: 298, bpf: 321,
      keyctl: 250, add_key: 248, request_key: 249, ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, kcmp: 312,
      name_to_handle_at: 303, open_by_handle_at: 304, fanotify_init: 300, lookup_dcookie: 212,
      mount: 165, umount2: 166, pivot_root: 155, chroot: 161, unshare: 272, setns: 308,
      swapon: 167, swapoff: 168, reboot: 169, kexec_load: 246, kexec_file_load: 320, init_module: 175, finit_module: 313, delete_module: 176,
      acct: 163, quotactl: 179, syslog: 103, clock_settime: 227, settimeofday: 164,
    },
  },
  arm64: {
    audit: 0xc00000b7,
    foreignFrom: null,
    socket: 198,
    blocked: {
      ...COMMON_NEW,
      shmget: 194, msgget: 186, mq_open: 180, memfd_create: 279, userfaultfd: 282, perf_event_open: 241, bpf: 280,
      keyctl: 219, add_key: 217, request_key: 218, ptrace: 117, process_vm_readv: 270, process_vm_writev: 271, kcmp: 272,
      name_to_handle_at: 264, open_by_handle_at: 265, fanotify_init: 262, lookup_dcookie: 18,
      mount: 40, umount2: 39, pivot_root: 41, chroot: 51, unshare: 97, setns: 268,
      swapon: 224, swapoff: 225, reboot: 142, kexec_load: 104, kexec_file_load: 294, init_module: 105, finit_module: 273, delete_module: 106,
      acct: 89, quotactl: 60, syslog: 116, clock_settime: 112, settimeofday: 170,
    },
  },
};

/** The calls the filter refuses with EPERM (for README and tests). */
export const BLOCKED_SYSCALLS: readonly string[] = Object.keys(TABLES.x64.blocked).sort();

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

const load = (offset: number): Instruction => ({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: offset });
const ret = (value: number): Instruction => ({ code: BPF_RET_K, jt: 0, jf: 0, k: value });
const jeq = (k: number, jt: number, jf: number): Instruction => ({ code: BPF_JEQ_K, jt, jf, k });

/** Whether a filter exists for this architecture (`process.arch`). */
export function seccompSupported(arch: string = process.arch): arch is SeccompArch {
  return arch === "x64" || arch === "arm64";
}

/**
 * The filter program for `arch`, ready to write to bubblewrap's `--seccomp` descriptor.
 * @throws Error for an architecture without a table (see {@link seccompSupported})
 */
export function buildSeccompFilter(arch: string = process.arch): Buffer {
  if (!seccompSupported(arch)) throw new Error(`no seccomp filter for the ${arch} architecture (x64 and arm64 only)`);
  const table = TABLES[arch];
  const program: Instruction[] = [load(OFFSET_ARCH), jeq(table.audit, 1, 0), ret(RET_ERRNO | ENOSYS), load(OFFSET_NR)];
  if (table.foreignFrom !== null) program.push({ code: BPF_JGE_K, jt: 0, jf: 1, k: table.foreignFrom }, ret(RET_ERRNO | ENOSYS));
  // socket(domain, …): allowed for AF_UNIX only. The accumulator is reloaded with nr afterwards.
  program.push(jeq(table.socket, 0, 4), load(OFFSET_ARG0_LOW), jeq(AF_UNIX, 0, 1), ret(RET_ALLOW), ret(RET_ERRNO | EAFNOSUPPORT));
  for (const nr of new Set(Object.values(table.blocked))) program.push(jeq(nr, 0, 1), ret(RET_ERRNO | EPERM));
  program.push(ret(RET_ALLOW));
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach((ins, i) => {
    bytes.writeUInt16LE(ins.code, i * 8);
    bytes.writeUInt8(ins.jt, i * 8 + 2);
    bytes.writeUInt8(ins.jf, i * 8 + 3);
    bytes.writeUInt32LE(ins.k >>> 0, i * 8 + 4);
  });
  return bytes;
}
