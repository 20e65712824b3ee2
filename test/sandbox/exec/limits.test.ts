/**
 * The limits the escape list does not cover, each enforced in real bubblewrap and named in the
 * result: memory (one big allocation refused; many processes together killed), CPU time (one
 * process, and several summed), open files, files deleted while open still counting against the
 * quota, the size of /tmp and /dev/shm, the read-only system, and the kernel surface the seccomp
 * filter closes.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../../helpers/wait.js";
import { liveSandboxProcesses, sandboxWorld, type SandboxWorld } from "./helpers.js";

/** Whether a process runs with exactly this command line (read from /proc). */
function running(...argv: string[]): boolean {
  const wanted = `${argv.join("\0")}\0`;
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .some((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8") === wanted;
      } catch {
        return false;
      }
    });
}

let world: SandboxWorld;
let fingerprint: string;

beforeAll(async () => {
  world = await sandboxWorld({ memoryBytes: 256 * 1024 * 1024, cpuSeconds: 1, openFiles: 64 });
});
afterAll(() => world.cleanup());
beforeEach(() => {
  world.reset();
  fingerprint = world.outsideFingerprint();
});
afterEach(() => {
  expect(world.outsideFingerprint()).toBe(fingerprint);
  expect(liveSandboxProcesses(world.uid)).toBe(0);
});

describe("limits", () => {
  it("memory: one allocation over the limit is refused and named", async () => {
    const result = await world.run("a = bytearray(10 * 1024**3)", { language: "python" });
    expect(result.limit).toMatchObject({ limit: "memory", by: "refused" });
    expect(result.stderr.text).toContain("MemoryError");
  });

  it("memory: many processes each under the limit are killed together when they hold more", async () => {
    const result = await world.run(
      "import os, time\nfor i in range(8):\n    if os.fork() == 0:\n        a = bytearray(100 * 1024 * 1024)\n        time.sleep(30)\n        os._exit(0)\ntime.sleep(30)",
      { language: "python", wallSeconds: 30 },
    );
    expect(result.limit).toMatchObject({ limit: "memory", by: "killed" });
    expect(result.durationMs).toBeLessThan(20_000);
  });

  it("CPU time: a busy loop and busy processes together are killed at the CPU limit", async () => {
    const one = await world.run("while True: pass", { language: "python", wallSeconds: 60 });
    expect(one.limit?.limit).toBe("cpu_time");
    const many = await world.run("import os\nfor i in range(3):\n    os.fork()\nwhile True: pass", { language: "python", wallSeconds: 60 });
    expect(many.limit?.limit).toBe("cpu_time");
    expect(many.cpuMs).toBeGreaterThanOrEqual(900);
  });

  it("open files: a process cannot hold more than the limit", async () => {
    const result = await world.run("fs = [open('/dev/null') for i in range(1000)]", { language: "python" });
    expect(result.limit?.limit).toBe("open_files");
    expect(result.stderr.text).toContain("Too many open files");
  });

  it("a file deleted while still open still counts against the quota", async () => {
    const result = await world.run(
      "import os, time\nheld = []\nfor i in range(6):\n    f = open(f'f{i}', 'wb'); f.write(b'x' * 1024 * 1024); f.flush(); os.unlink(f'f{i}'); held.append(f)\ntime.sleep(10)",
      { language: "python", quotaBytes: 3 * 1024 * 1024, wallSeconds: 20 },
    );
    expect(result.limit).toMatchObject({ limit: "workspace_quota", by: "killed" });
    expect(result.durationMs).toBeLessThan(8000);
  });

  it("/tmp and /dev/shm are small tmpfs; the rest of the system is read-only", async () => {
    const result = await world.run(
      `dd if=/dev/zero of=/tmp/fill bs=1M count=200 2>&1 | head -1
dd if=/dev/zero of=/dev/shm/fill bs=1M count=200 2>&1 | head -1
touch /rootfile 2>&1; touch /usr/bin/x 2>&1; touch /etc/x 2>&1; touch /dev/x 2>&1
echo done`,
      { language: "shell" },
    );
    expect(result.stdout.text).toMatch(/No space left on device[\s\S]*No space left on device/);
    expect(result.stdout.text.match(/Read-only file system/g)?.length).toBe(4);
    expect(result.stdout.text).toContain("done");
  });

  it("the kernel surface stays closed: nested namespaces, mounts, ptrace, SysV memory, io_uring", async () => {
    const result = await world.run(
      `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def check(name, rc):
    print(name, "OK" if rc != -1 else "REFUSED", os.strerror(ctypes.get_errno()))
check("unshare-user", libc.unshare(0x10000000))
check("mount", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
check("ptrace", libc.ptrace(16, 1, 0, 0))
check("shmget", libc.shmget(0, 4096, 0o1600))
check("io_uring", libc.syscall(425, 8, ctypes.create_string_buffer(120)))
check("chroot", libc.chroot(b"/tmp"))
`,
      { language: "python" },
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout.text).not.toContain(" OK ");
    expect(result.stdout.text.match(/REFUSED/g)?.length).toBe(6);
  });
});

describe("a workspace removed from the host while a run goes on", () => {
  it("ends the run with the reason, and nothing is left unhandled", async () => {
    const scratch = join(world.dataDir, "persons", "per_gone", "workspace");
    mkdirSync(scratch, { recursive: true });
    const started = Date.now();
    const run = world.runner.run({ workspaceRoot: scratch, quotaBytes: 1024 * 1024, program: { kind: "command", command: "/bin/sleep", args: ["20"] }, wallSeconds: 30 });
    // The program runs (its process exists) before the workspace goes.
    await waitFor(() => running("/bin/sleep", "20"), "the sandboxed /bin/sleep to start", 15_000);
    rmSync(join(world.dataDir, "persons", "per_gone"), { recursive: true, force: true });
    await expect(run).rejects.toMatchObject({ name: "ExecError", code: "workspace_refused", message: expect.stringContaining("quota could not be held") });
    expect(Date.now() - started).toBeLessThan(15_000);
    fingerprint = world.outsideFingerprint();
  });
});
