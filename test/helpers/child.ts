import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** A Familiar process started as a child (`node --import tsx <entry>`), for kill -9 tests. */
export interface ChildApp {
  url: string;
  process: ChildProcess;
  output: string[];
  /** SIGKILL: no shutdown code runs. Resolves when the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `entry` (default main.ts; a `.js` entry is run by plain node, as built) with `env` and waits until it logs that it is running. The port is
 * chosen by the caller (PORT in env) so a restarted process listens at the same URL.
 */
export async function startChild(env: Record<string, string>, entry = "main.ts", timeoutMs = 30_000): Promise<ChildApp> {
  // A built entry (.js) runs as the product does; sources run through tsx.
  const child = spawn(process.execPath, entry.endsWith(".js") ? ["--max-semi-space-size=1", entry] : ["--import", "tsx", entry], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  let url = "";
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child did not start in ${timeoutMs} ms:\n${output.join("")}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      output.push(text);
      const m = /Familiar is running: open (http:\/\/[^ "]+) to chat/.exec(text);
      if (m) {
        url = m[1]!;
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (c: Buffer) => output.push(c.toString()));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited with ${code} before it was ready:\n${output.join("")}`));
    });
  });
  await ready;
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });
  return {
    url,
    process: child,
    output,
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const address = s.address();
      const port = typeof address === "object" && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}
