/**
 * An answer cut by a crash on Telegram (issue 18 item 12): the outbox runs in a real child process
 * that is killed with SIGKILL while Telegram holds a part's send (the message arrived, the answer
 * never came back). After a restart the part is sent again, headed as a possible repeat — not
 * replaced by "ask me to repeat it" — and the rest follows; a part with a button (a card, a
 * payment) is never sent twice: the person is told instead.
 */
import { spawn } from "node:child_process";
import { createServer, request, type Server } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { repeatMark, uncertainNotice } from "../../core/outbox/delivery.js";
import { FakeTelegramApi } from "../fakes/telegram-api.js";

const childPath = fileURLToPath(new URL("../fakes/outbox-child.ts", import.meta.url));

/**
 * A proxy in front of the fake Bot API: forwards every call, except that the first sendMessage whose
 * body contains `held` is forwarded (Telegram gets the message) but its answer is never passed back —
 * the sender waits until it is killed. Resolves with the proxy's API root.
 */
async function holdingProxy(fake: FakeTelegramApi, held: string): Promise<{ apiRoot: string; server: Server }> {
  const upstream = new URL(fake.apiRoot);
  let holding = true;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const hold = holding && req.url?.endsWith("/sendMessage") && body.toString("utf8").includes(held);
      if (hold) holding = false;
      const out = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        if (hold) return void answer.resume();
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return { apiRoot: `http://127.0.0.1:${port}${upstream.pathname === "/" ? "" : upstream.pathname}`, server };
}

describe("Telegram: a part cut short by SIGKILL mid-send", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** Starts the delivering child; resolves with its handle once it exits or is killed. */
  function child(apiRoot: string, token: string, db: string, text: string, buttons: boolean) {
    const proc = spawn(process.execPath, ["--import", "tsx", childPath], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", OB_API_ROOT: apiRoot, OB_TOKEN: token, OB_DB: db, OB_TEXT: text, OB_BUTTONS: buttons ? "1" : "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    proc.stdout.on("data", (c: Buffer) => (output += c.toString()));
    proc.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    cleanups.push(() => void proc.kill("SIGKILL"));
    return { proc, exited, output: () => output };
  }

  async function killedMidSend(text: string, held: string, buttons: boolean) {
    const fake = await FakeTelegramApi.start();
    cleanups.push(() => fake.close());
    const dir = mkdtempSync(join(tmpdir(), "familiar-tg-crash-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const db = join(dir, "familiar.db");
    const proxy = await holdingProxy(fake, held);
    cleanups.push(() => new Promise<void>((resolve) => (proxy.server.closeAllConnections(), proxy.server.close(() => resolve()))));
    const first = child(proxy.apiRoot, fake.token, db, text, buttons);
    await fake.waitFor(() => fake.messages.some((m) => m.text.includes(held)), 30_000, `the held part ${held} to reach Telegram`);
    first.proc.kill("SIGKILL");
    await first.exited;
    const second = child(fake.apiRoot, fake.token, db, text, buttons);
    await fake.waitFor(() => second.output().includes('"idle":true'), 30_000, `the restarted child to deliver the rest:\n${second.output()}`);
    await second.exited;
    return fake.messages.map((m) => m.text);
  }

  it("sends the cut part again, marked as a possible repeat, then the rest — never 'ask me to repeat it'", async () => {
    const paragraph = (name: string) => `${name} ${"lorem ipsum dolor sit amet ".repeat(110).trim()}`;
    const text = [paragraph("PART-A"), paragraph("PART-B"), paragraph("PART-C")].join("\n\n");
    const seen = await killedMidSend(text, "PART-B", false);
    expect(seen.map((t) => t.slice(0, 6))).toEqual(["PART-A", "PART-B", repeatMark.slice(0, 6), "PART-C"]);
    const resent = seen[2]!;
    expect(resent.startsWith(repeatMark)).toBe(true);
    // The whole part again, word for word.
    expect(resent.slice(repeatMark.length).trim()).toBe(seen[1]!.trim());
    expect(seen.some((t) => t === uncertainNotice || /ask me to repeat/i.test(t))).toBe(false);
  }, 90_000);

  it("keeps a part with a button at most once: the card is not sent again, the person is told", async () => {
    const seen = await killedMidSend("Pay invoice INV-2231 (30 EUR) to ACME? PAY-CARD", "PAY-CARD", true);
    expect(seen.filter((t) => t.includes("PAY-CARD"))).toHaveLength(1);
    expect(seen).toEqual([expect.stringContaining("PAY-CARD"), uncertainNotice]);
  }, 90_000);
});
