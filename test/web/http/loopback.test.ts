import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "node:http";
import { checkLocalRequest, isLoopbackHostName } from "../../../web/http/loopback.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";

describe("local page and API access: loopback client, loopback Host, loopback Origin", () => {
  it("accepts only host names that mean this machine", () => {
    for (const h of ["localhost:3000", "127.0.0.1:3000", "127.9.9.9", "[::1]:3000", "LOCALHOST"]) expect(isLoopbackHostName(h)).toBe(true);
    for (const h of ["evil.example:3000", "192.168.1.2", "localhost.evil.example", "[::ffff:10.0.0.1]", undefined, ""]) expect(isLoopbackHostName(h)).toBe(false);
  });

  it("refuses DNS rebinding (foreign Host) and cross-site origins, unless remote access is allowed", () => {
    const local = { remoteAddress: "127.0.0.1", host: "127.0.0.1:3000", origin: undefined };
    expect(checkLocalRequest(local, false)).toEqual({ ok: true });
    expect(checkLocalRequest({ ...local, origin: "http://localhost:3000" }, false)).toEqual({ ok: true });
    expect(checkLocalRequest({ ...local, host: "evil.example:3000" }, false).ok).toBe(false);
    expect(checkLocalRequest({ ...local, origin: "https://evil.example" }, false).ok).toBe(false);
    expect(checkLocalRequest({ ...local, origin: "null" }, false).ok).toBe(false);
    expect(checkLocalRequest({ ...local, remoteAddress: "10.0.0.5" }, false).ok).toBe(false);
    expect(checkLocalRequest({ remoteAddress: "10.0.0.5", host: "familiar.lan", origin: "http://familiar.lan" }, true)).toEqual({ ok: true });
  });

  describe("over HTTP", () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startTestApp();
    });
    afterAll(async () => app.close());

    /** A raw request with a chosen Host header (fetch does not let us set it). */
    const raw = (path: string, headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(app.url);
        const req = request({ host: "127.0.0.1", port: url.port, path, headers }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
      });

    it("answers a rebinding page's requests with 403 on every local route, and serves loopback ones", async () => {
      for (const path of ["/", "/api/local/messages?user=ana", "/api/persons", "/api/secrets", "/whatsapp"]) {
        expect(await raw(path, { host: "evil.example:3000" })).toBe(403);
        expect(await raw(path, { host: "127.0.0.1", origin: "https://evil.example" })).toBe(403);
        expect(await raw(path, { host: "localhost" })).toBe(200);
      }
    });
  });
});
