import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { RecordedRequest } from "../fakes/openai-server.js";

/** Shared pieces of the end-to-end tests. */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` every 25 ms until it returns something truthy; throws naming `what` after `timeoutMs`. */
export async function until<T>(probe: () => T | undefined | null | false, what: string, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** A request the runtime made for a background activation whose trigger note mentions `what`. */
export function isWake(r: RecordedRequest, what: string): boolean {
  return r.messages.some((m) => m.role === "system" && typeof m.content === "string" && m.content.startsWith("Runtime:") && m.content.includes(what));
}

/** Every user message the model was shown in a request (the text parts of a message with images). */
export function userTexts(r: RecordedRequest): string[] {
  return r.messages
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("")));
}

/** The content of the request's last message when it is a tool result, else null. */
export function lastTool(r: RecordedRequest): string | null {
  const m = r.messages.at(-1);
  return m?.role === "tool" ? String(m.content) : null;
}

/** What a recording server answers: a fixed HTML body, or a function of the request. */
export type ServerAnswer = string | ((path: string, body: string) => { status: number; body: string; type?: string });

/**
 * A local HTTP server on 127.0.0.1 that records every request (stands in for a web page or "the
 * outside"); list its `hostPort` in PRIVATE_HOSTS_ALLOWED so Sentinel lets tools reach it.
 */
export async function recordingServer(answer: ServerAnswer) {
  const received: { method: string; path: string }[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      received.push({ method: req.method ?? "", path: req.url ?? "" });
      bodies.push(body);
      const r = typeof answer === "string" ? { status: 200, body: answer } : answer(req.url ?? "", body);
      res.writeHead(r.status, { "content-type": r.type ?? "text/html" }).end(r.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    received,
    /** Request bodies, in the order of `received`. */
    bodies,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
