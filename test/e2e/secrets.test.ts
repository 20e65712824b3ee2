import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";

describe("secret vault admin API", () => {
  let app: TestApp;
  afterEach(async () => app?.close());

  it("stores secrets encrypted, lists names and origins only, validates, deletes, and never logs the value", async () => {
    app = await startTestApp({ LOG_LEVEL: "debug" });
    const value = "sk-live-very-secret-0123456789";
    const put = (body: unknown) => fetch(`${app.url}/api/secrets`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

    expect((await put({ owner: "shared", name: "BAD NAME", value, origins: ["https://api.example.com"] })).status).toBe(400);
    const badOrigin = await put({ owner: "shared", name: "API", value, origins: ["ftp://files.example.com"] });
    expect(badOrigin.status).toBe(400);
    expect(await badOrigin.text()).not.toContain(value);
    expect((await put({ owner: "shared", name: "API", value, origins: ["https://api.example.com/v1/anything"] })).status).toBe(204);

    const listed = (await (await fetch(`${app.url}/api/secrets`)).json()) as { items: { name: string; origins: string[] }[] };
    expect(listed.items).toEqual([{ owner: "shared", name: "API", origins: ["https://api.example.com"] }]);
    expect(JSON.stringify(listed)).not.toContain(value);

    expect(readFileSync(join(app.dataDir, "vault.json"), "utf8")).not.toContain(value);
    expect((await fetch(`${app.url}/api/secrets/shared/API`, { method: "DELETE" })).status).toBe(204);
    expect((await fetch(`${app.url}/api/secrets/shared/API`, { method: "DELETE" })).status).toBe(404);
    expect(app.logs.join("")).not.toContain(value);
  });
});
