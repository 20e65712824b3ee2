import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AttachmentError } from "../../../core/channels/attachments.js";
import { downloadLimited } from "../../../bots/shared/download.js";

/** Size-limited downloads of platform files over real HTTP on loopback. */
describe("downloadLimited", () => {
  let server: Server | null = null;
  let served = 0;
  afterEach(async () => {
    const s = server;
    server = null;
    if (s) await new Promise<void>((r) => { s.close(() => r()); s.closeAllConnections(); });
  });

  /** Serves `/ok` (with content-length), `/chunked` (no length, 10 × 1 KB chunks), `/html`, `/gone` (404). */
  async function start(): Promise<string> {
    served = 0;
    server = createServer((req, res) => {
      const body = Buffer.alloc(10_240, 7);
      if (req.url === "/ok") res.writeHead(200, { "content-length": body.length }).end(body);
      else if (req.url === "/chunked") {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        const tick = () => {
          if (served >= 10 || res.destroyed) return res.end();
          served++;
          res.write(Buffer.alloc(1024, 1));
          setTimeout(tick, 5);
        };
        tick();
      } else if (req.url === "/html") res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<html>sign in</html>");
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it("returns the body within the limit", async () => {
    const base = await start();
    expect(await downloadLimited(`${base}/ok`, { maxBytes: 20_000, what: "file" })).toEqual(Buffer.alloc(10_240, 7));
  });

  it("refuses an announced size, a content-length and a stream over the limit, without reading on", async () => {
    const base = await start();
    await expect(downloadLimited(`${base}/ok`, { maxBytes: 100, what: "file", announcedSize: 101 })).rejects.toMatchObject({ reason: "too_large", details: { size: 101, limit: 100 } });
    await expect(downloadLimited(`${base}/ok`, { maxBytes: 1000, what: "file" })).rejects.toMatchObject({ reason: "too_large", details: { size: 10_240 } });
    const error = await downloadLimited(`${base}/chunked`, { maxBytes: 3000, what: "file" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AttachmentError);
    expect((error as AttachmentError).reason).toBe("too_large");
    // A fixed wait on purpose: it asserts that the server does NOT go on serving after the read stopped.
    await new Promise((r) => setTimeout(r, 100));
    expect(served).toBeLessThan(10); // the read stopped early
  });

  it("fails a 404 and a sign-in page without ever putting the URL (it may hold a token) in the message", async () => {
    const base = await start();
    const gone = (await downloadLimited(`${base}/gone?token=SECRET123`, { maxBytes: 100, what: "Telegram file" }).catch((e: unknown) => e)) as AttachmentError;
    expect(gone).toMatchObject({ reason: "download_failed", message: "Telegram file could not be downloaded (HTTP 404)" });
    const html = (await downloadLimited(`${base}/html`, { maxBytes: 100, what: "file", refuseHtml: "needs files:read" }).catch((e: unknown) => e)) as AttachmentError;
    expect(html).toMatchObject({ reason: "unavailable", message: "needs files:read" });
    const down = (await downloadLimited("http://127.0.0.1:9/bot123:SECRET/file", { maxBytes: 100, what: "file" }).catch((e: unknown) => e)) as AttachmentError;
    expect(down.reason).toBe("download_failed");
    expect(down.message).not.toContain("SECRET");
  });
});
