/**
 * Child of the escapes test: a Familiar-like process that inherited descriptor 9 (a file with a
 * secret) from its parent without close-on-exec, as a service manager's socket or a log pipe
 * would be. It runs one sandbox that reads every descriptor it holds and prints what it read.
 * argv: dataDir workspaceRoot
 */
import { detectSandbox } from "../../../sandbox/exec/probe.js";

const [dataDir, workspaceRoot] = process.argv.slice(2) as [string, string];
const status = await detectSandbox({ dataDir });
if (!status.available) throw new Error(status.reason);
const code = `
import os
for fd in sorted(int(n) for n in os.listdir("/proc/self/fd")):
    try:
        print(fd, os.readlink(f"/proc/self/fd/{fd}"), os.pread(fd, 200, 0))
    except Exception as e:
        print(fd, type(e).__name__)
`;
const result = await status.runner.run({ workspaceRoot, quotaBytes: 1024 * 1024, program: { kind: "code", language: "python", code } });
process.stdout.write(JSON.stringify({ stdout: result.stdout.text, stderr: result.stderr.text }));
