/**
 * Every escape attempt issue 23 lists, in real bubblewrap: another person's workspace, DATA_DIR
 * (the store), the vault, /proc/1/environ, the host's /etc/shadow, a loopback listener, a
 * symlink and a hardlink planted in the workspace, a fork bomb, a 10 GB file, endless output,
 * `sleep 1000`, changing the quota from inside. Each must fail, name the limit where one applies,
 * write nothing outside the workspace, and leave Familiar (this process) able to run the next
 * program with no sandbox process left behind.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, linkSync, openSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { formatResult } from "../../../sandbox/exec/format.js";
import { SECRETS, leaks, liveSandboxProcesses, sandboxWorld, shown, type SandboxWorld } from "./helpers.js";

let world: SandboxWorld;
let fingerprint: string;

beforeAll(async () => {
  world = await sandboxWorld({ fileBytes: 32 * 1024 * 1024, outputBytes: 2 * 1024 * 1024 });
});
afterAll(() => world.cleanup());
beforeEach(() => {
  world.reset();
  fingerprint = world.outsideFingerprint();
});
afterEach(async () => {
  expect(world.outsideFingerprint()).toBe(fingerprint);
  expect(readFileSync(world.outsideFile, "utf8")).toBe(SECRETS.outside);
  const next = await world.run("echo alive");
  expect(next.stdout.text).toBe("alive\n");
  expect(liveSandboxProcesses(world.uid)).toBe(0);
});

/** Python that tries to read each path and prints what it got or why not. */
function tryRead(paths: string[]): string {
  return `
for p in ${JSON.stringify(paths)}:
    try:
        with open(p) as f:
            print("READ", p, f.read())
    except Exception as e:
        print("REFUSED", p, type(e).__name__)
`;
}

/** Python that looks for the planted files' names anywhere it can see (except /proc). */
const SEARCH = `
import os
found = []
for root, dirs, files in os.walk("/"):
    if root == "/proc":
        dirs[:] = []
        continue
    for name in files:
        if name in ("diary.txt", "vault.json", "familiar.db", "Cookies", "victim.txt", "shadow"):
            found.append(os.path.join(root, name))
print("FOUND", found)
`;

describe("escape attempts from the sandbox", () => {
  it("cannot read another person's workspace, by any path", async () => {
    const host = join(world.otherWorkspace, "diary.txt");
    const result = await world.run(
      tryRead([host, "/workspace/../per_two/workspace/diary.txt", "../per_two/workspace/diary.txt", `/proc/1/root${host}`, `/proc/self/root${host}`, "/persons/per_two/workspace/diary.txt"]) + SEARCH,
      { language: "python" },
    );
    expect(result.exitCode).toBe(0);
    expect(shown(result)).not.toContain("READ");
    expect(shown(result)).toContain("FOUND []");
    expect(leaks(shown(result))).toEqual([]);
  });

  it("cannot read DATA_DIR's store, the vault or the browser profile", async () => {
    const d = world.dataDir;
    const result = await world.run(tryRead([join(d, "familiar.db"), join(d, "vault.json"), join(d, "persons/per_one/browser/Cookies"), "/workspace/../browser/Cookies", "/data/vault.json", "/workspace/../../../vault.json"]) + SEARCH, {
      language: "python",
    });
    expect(shown(result)).not.toContain("READ");
    expect(shown(result)).toContain("FOUND []");
    expect(leaks(shown(result))).toEqual([]);
  });

  it("sees an empty environment: /proc/1/environ, every /proc/*/environ and its own hold no secret", async () => {
    const result = await world.run("cat /proc/1/environ; echo; for f in /proc/[0-9]*/environ; do cat $f; echo; done; env; cat /proc/1/cmdline", { language: "shell" });
    expect(result.exitCode).toBe(0);
    expect(leaks(shown(result))).toEqual([]);
    expect(shown(result)).not.toContain(world.dataDir);
    const names = result.stdout.text.split("\n").filter((l) => /^[A-Z_]+=/.test(l)).map((l) => l.split("=")[0]);
    expect(new Set(names)).toEqual(new Set(["PATH", "HOME", "TMPDIR", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PWD"]));
  });

  it("gets no descriptor Familiar inherited from its own parent (they are /dev/null inside)", async () => {
    const secretFd = openSync(join(world.dataDir, "vault.json"), "r");
    try {
      const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "inherited-fd-child.ts"), world.dataDir, world.workspace], {
        stdio: ["ignore", "pipe", "inherit", "ignore", "ignore", "ignore", "ignore", "ignore", "ignore", secretFd],
      });
      let text = "";
      child.stdout?.on("data", (chunk: Buffer) => (text += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
      expect(code).toBe(0);
      const { stdout } = JSON.parse(text) as { stdout: string };
      expect(leaks(stdout)).toEqual([]);
      // Beyond stdin, stdout and stderr only /dev/null (and the listing's own, already closed, descriptor).
      const open = stdout.trim().split("\n").filter((line) => Number(line.split(" ")[0]) > 2 && !line.endsWith("FileNotFoundError"));
      expect(open.every((line) => / \/dev\/null b''$/.test(line))).toBe(true);
    } finally {
      closeSync(secretFd);
    }
  });

  it("cannot read the host's /etc/shadow (nor see /etc beyond what the interpreters need)", async () => {
    expect(existsSync("/etc/shadow")).toBe(true);
    const result = await world.run("cat /etc/shadow; ls /etc; cat /etc/passwd; ls /root /home /var /run", { language: "shell" });
    expect(result.stderr.text).toMatch(/shadow: No such file/);
    expect(result.stdout.text.trim().split("\n").sort()).toEqual(["alternatives", "ld.so.cache"]);
    expect(shown(result)).not.toMatch(/^root:/m);
  });

  it("cannot connect to a loopback listener (no network at all: even the socket is refused)", async () => {
    let hits = 0;
    const server = http.createServer((_req, res) => {
      hits++;
      res.end("hello");
    });
    server.on("connection", () => hits++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const python = await world.run(
        `
import socket, urllib.request
for target in [("127.0.0.1", ${port}), ("localhost", ${port}), ("::1", ${port})]:
    try:
        socket.create_connection(target, timeout=2); print("CONNECTED", target)
    except Exception as e:
        print("REFUSED", target, e)
for fam, kind in [(socket.AF_INET, socket.SOCK_DGRAM), (socket.AF_INET6, socket.SOCK_STREAM), (socket.AF_NETLINK, socket.SOCK_RAW), (socket.AF_PACKET, socket.SOCK_RAW)]:
    try:
        socket.socket(fam, kind); print("SOCKET", fam)
    except Exception as e:
        print("REFUSED", fam, e)
try:
    urllib.request.urlopen("http://127.0.0.1:${port}/", timeout=2); print("CONNECTED url")
except Exception as e:
    print("REFUSED url", e)
`,
        { language: "python" },
      );
      expect(python.stdout.text).not.toMatch(/CONNECTED|SOCKET/);
      expect(python.stdout.text).toMatch(/Address family not supported/);
      const node = await world.run(
        `fetch("http://127.0.0.1:${port}/").then(() => console.log("CONNECTED"), (e) => console.log("REFUSED", e.cause?.code ?? e.message));
         require("net").connect(${port}, "127.0.0.1").on("connect", () => console.log("CONNECTED net")).on("error", (e) => console.log("REFUSED net", e.code));`,
        { language: "javascript" },
      );
      expect(node.stdout.text).not.toContain("CONNECTED");
      expect(node.stdout.text).toContain("REFUSED net");
      expect(hits).toBe(0);
    } finally {
      server.close();
    }
  });

  it("names the sandbox's wall a failed program met: no network, the read-only system, a path outside the workspace", async () => {
    let hits = 0;
    const server = http.createServer((_req, res) => res.end("hello"));
    server.on("connection", () => hits++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const walls = async (program: Parameters<SandboxWorld["run"]>[0], language?: "python" | "javascript" | "shell") => (await world.run(program, language && { language })).boundaries.map((b) => b.boundary);
      expect(await walls({ kind: "command", command: "curl", args: ["-sS", "-m", "5", `http://127.0.0.1:${port}/exfil`] })).toEqual(["network"]);
      expect(await walls({ kind: "command", command: "wget", args: ["-O-", `http://localhost:${port}/exfil`] })).toEqual(["network"]);
      expect(await walls(`import urllib.request\nurllib.request.urlopen("http://127.0.0.1:${port}/")`, "python")).toEqual(["network"]);
      expect(await walls(`await fetch("http://127.0.0.1:${port}/")`, "javascript")).toEqual(["network"]);
      expect(await walls("echo x > /etc/pwned; echo x > ../../../pwned", "shell")).toEqual(["read_only"]);
      expect(await walls({ kind: "command", command: "cat", args: ["../../per_two/workspace/diary.txt"] })).toEqual(["outside_workspace"]);
      expect(await walls("open('../../../vault.json').read()", "python")).toEqual(["outside_workspace"]);
      // A program's own failures inside the workspace are not the sandbox's walls.
      expect(await walls("open('missing.txt').read()", "python")).toEqual([]);
      expect(await walls("cat nothing-here; exit 1", "shell")).toEqual([]);
      expect(await walls("echo fine", "shell")).toEqual([]);
      expect(hits).toBe(0);
      const text = formatResult(await world.run({ kind: "command", command: "curl", args: ["-sS", `http://127.0.0.1:${port}/`] }));
      expect(text).toContain("Refused by the sandbox (network): the sandbox has no network at all");
    } finally {
      server.close();
    }
  });

  it("a symlink planted in the workspace never leads out (read and write through it fail)", async () => {
    symlinkSync(world.outsideFile, join(world.workspace, "abs-link"));
    symlinkSync("../../../outside/victim.txt", join(world.workspace, "rel-link"));
    symlinkSync(world.dataDir, join(world.workspace, "dir-link"));
    const result = await world.run(
      tryRead(["abs-link", "rel-link", "dir-link/vault.json", "dir-link/persons/per_two/workspace/diary.txt"]) +
        `
for p in ["abs-link", "rel-link", "dir-link/outside/victim.txt"]:
    try:
        with open(p, "w") as f:
            f.write("PWNED")
        print("WROTE", p)
    except Exception as e:
        print("REFUSED", p, type(e).__name__)
`,
      { language: "python" },
    );
    expect(shown(result)).not.toContain("READ");
    expect(leaks(shown(result))).toEqual([]);
    expect(readFileSync(world.outsideFile, "utf8")).toBe(SECRETS.outside);
  });

  it("a hardlink planted in the workspace is taken out before the run; the outside file stays untouched", async () => {
    linkSync(world.outsideFile, join(world.workspace, "hard.txt"));
    writeFileSync(join(world.workspace, "mine.txt"), "my own file");
    const result = await world.run(tryRead(["hard.txt", "mine.txt"]) + `\nopen("hard.txt", "w").write("PWNED")\nprint("WROTE")`, { language: "python" });
    expect(result.unlinked).toEqual(["hard.txt"]);
    expect(result.stdout.text).toContain("REFUSED hard.txt FileNotFoundError");
    expect(result.stdout.text).toContain("READ mine.txt my own file");
    expect(leaks(shown(result))).toEqual([]);
    expect(readFileSync(world.outsideFile, "utf8")).toBe(SECRETS.outside);
    expect(statSync(world.outsideFile).nlink).toBe(1);
    // What the run wrote is a new file of the workspace, not the outside inode.
    expect(readFileSync(join(world.workspace, "hard.txt"), "utf8")).toBe("PWNED");
  });

  it("a fork bomb is stopped at the process limit (Python and shell), the tree killed", async () => {
    const python = await world.run("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", { language: "python", wallSeconds: 20 });
    expect(python.limit?.limit).toBe("processes");
    expect(python.outcome).toBe("limit");
    expect(python.durationMs).toBeLessThan(15_000);
    expect(liveSandboxProcesses(world.uid)).toBe(0);
    const shell = await world.run("f() { f | f & }; f; sleep 5", { language: "shell", wallSeconds: 20 });
    expect(shell.limit?.limit).toBe("processes");
  });

  it("a 10 GB file stops at the file size limit (written, truncated or sparse)", async () => {
    const dd = await world.run("dd if=/dev/zero of=big bs=1M count=10240", { language: "shell", wallSeconds: 60 });
    expect(dd.limit?.limit).toBe("file_size");
    expect(statSync(join(world.workspace, "big")).size).toBeLessThanOrEqual(32 * 1024 * 1024);
    const sparse = await world.run("f = open('sparse', 'wb')\nf.truncate(10 * 1024**3)", { language: "python" });
    expect(sparse.limit?.limit).toBe("file_size");
    expect(statSync(join(world.workspace, "sparse")).size).toBe(0);
  });

  it("endless output is cut visibly and stopped at the output limit", async () => {
    const result = await world.run("yes 'endless output'", { language: "shell", wallSeconds: 30 });
    expect(result.limit?.limit).toBe("output");
    expect(result.stdout.cut).toBe(true);
    expect(result.stdout.text).toMatch(/\[… [\d,]+ bytes cut …\]/);
    expect(result.stdout.text.length).toBeLessThan(20_000);
    expect(result.stdout.bytes).toBeGreaterThan(2 * 1024 * 1024);
  });

  it("sleep 1000 is killed at the wall time it was given", async () => {
    const result = await world.run("sleep 1000 & sleep 1000", { language: "shell", wallSeconds: 2 });
    expect(result.limit?.limit).toBe("wall_time");
    expect(result.outcome).toBe("limit");
    expect(result.durationMs).toBeLessThan(10_000);
  });

  it("cannot change the workspace quota from inside: raising limits fails and going over is stopped", async () => {
    const quota = 4 * 1024 * 1024;
    const result = await world.run(
      `ulimit -f unlimited && echo RAISED-ULIMIT
prlimit --pid $$ --fsize=unlimited:unlimited && echo RAISED-PRLIMIT
echo 999999999999 > .quota
for i in 1 2 3 4 5 6 7 8 9 10; do dd if=/dev/zero of=fill-$i bs=1M count=1 2>/dev/null; done
python3 -c "import resource; resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY)); print('RAISED-PY')"
sleep 2`,
      { language: "shell", quotaBytes: quota, wallSeconds: 20 },
    );
    expect(result.stdout.text).not.toContain("RAISED");
    expect(result.limit?.limit).toBe("workspace_quota");
    const after = await world.run("du -sb --apparent-size . | cut -f1", { language: "shell" });
    expect(Number(after.stdout.text.trim())).toBeLessThanOrEqual(quota);
  });
});
