import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../core/log/logger.js";
import { SecretError } from "../../../core/secrets/errors.js";
import { SHARED_OWNER, SecretVault, parseSecretKey } from "../../../core/secrets/vault.js";

const OWNER = "person_a";

const VALUE = "tok-live-5f4e3d2c1b0a99887766";
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "familiar-vault-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("SecretVault", () => {
  it("generates secret.key with mode 0600 on first start and keeps using it", async () => {
    const vault = await SecretVault.open({ dataDir: dir });
    await vault.set(OWNER, "api", VALUE, ["https://api.example.com"]);
    const info = await stat(join(dir, "secret.key"));
    expect(info.mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "vault.json"))).mode & 0o777).toBe(0o600);
    const again = await SecretVault.open({ dataDir: dir });
    expect(again.substituteSecrets("Bearer {{secret:api}}", "https://api.example.com", OWNER)).toBe(`Bearer ${VALUE}`);
  });

  it("encrypts at rest: the file holds neither the value nor a fixed IV", async () => {
    const vault = await SecretVault.open({ dataDir: dir });
    await vault.set(OWNER, "a", VALUE, ["https://api.example.com"]);
    await vault.set(OWNER, "b", VALUE, ["https://api.example.com"]);
    const text = await readFile(join(dir, "vault.json"), "utf8");
    expect(text).not.toContain(VALUE);
    expect(text).not.toContain(Buffer.from(VALUE).toString("base64"));
    const file = JSON.parse(text) as { secrets: { name: string; iv: string; data: string }[] };
    const [a, b] = [file.secrets.find((e) => e.name === "a")!, file.secrets.find((e) => e.name === "b")!];
    expect(a.iv).not.toBe(b.iv);
    expect(a.data).not.toBe(b.data);
  });

  it("substitutes only for bound origins, and says which secret and where (never the value)", async () => {
    const vault = await SecretVault.open({ dataDir: dir });
    await vault.set(OWNER, "api", VALUE, ["https://api.example.com/any/path"]);
    expect(vault.substituteSecrets({ h: { Authorization: "Bearer {{secret:api}}" } }, "https://api.example.com", OWNER)).toEqual({ h: { Authorization: `Bearer ${VALUE}` } });
    for (const origin of ["https://evil.example", "http://api.example.com", "https://api.example.com:8443", null]) {
      let error: unknown;
      try {
        vault.substituteSecrets("{{secret:api}}", origin, OWNER);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SecretError);
      expect(error).toMatchObject({ code: "secret_not_bound", secretName: "api" });
      expect((error as Error).message).not.toContain(VALUE);
    }
    expect(() => vault.substituteSecrets("{{secret:nope}}", "https://api.example.com", OWNER)).toThrow(expect.objectContaining({ code: "secret_unknown" }));
    expect(vault.substituteSecrets("no references", "https://evil.example", OWNER)).toBe("no references");
  });

  it("refuses a file whose bindings were edited (the origins are authenticated)", async () => {
    const vault = await SecretVault.open({ dataDir: dir });
    await vault.set(OWNER, "api", VALUE, ["https://api.example.com"]);
    const path = join(dir, "vault.json");
    const original = await readFile(path, "utf8");
    const file = JSON.parse(original) as { secrets: { owner: string; origins: string[] }[] };
    file.secrets[0]!.origins = ["https://evil.example"];
    await writeFile(path, JSON.stringify(file));
    await expect(SecretVault.open({ dataDir: dir })).rejects.toMatchObject({ code: "vault_corrupt" });
    // Moving a secret to another person is refused the same way (the owner is authenticated too).
    const moved = JSON.parse(original) as { secrets: { owner: string }[] };
    moved.secrets[0]!.owner = "person_b";
    await writeFile(path, JSON.stringify(moved));
    await expect(SecretVault.open({ dataDir: dir })).rejects.toMatchObject({ code: "vault_corrupt" });
  });

  it("uses FAMILIAR_SECRET_KEY (hex or base64) and rejects a wrong one", async () => {
    const hex = "ab".repeat(32);
    const vault = await SecretVault.open({ dataDir: dir, secretKey: hex });
    await vault.set(OWNER, "api", VALUE, ["https://api.example.com"]);
    const b64 = Buffer.from(hex, "hex").toString("base64");
    expect((await SecretVault.open({ dataDir: dir, secretKey: b64 })).list()).toEqual([{ owner: OWNER, name: "api", origins: ["https://api.example.com"] }]);
    await expect(SecretVault.open({ dataDir: dir, secretKey: "cd".repeat(32) })).rejects.toMatchObject({ code: "vault_corrupt" });
    expect(() => parseSecretKey("too-short-key-of-thirty-two-chars")).toThrow(SecretError);
    await expect(stat(join(dir, "secret.key"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("registers every value with the logger, so logs redact it by value", async () => {
    const lines: string[] = [];
    const destination = new Writable({ write: (chunk, _e, cb) => (lines.push(String(chunk)), cb()) });
    const { logger, addSecret } = createLogger({ level: "info", destination });
    const vault = await SecretVault.open({ dataDir: dir, addSecret });
    await vault.set(OWNER, "api", VALUE, ["https://api.example.com"]);
    logger.info({ echoed: `server said ${VALUE}` }, `value ${VALUE}`);
    const reopened = createLogger({ level: "info", destination });
    await SecretVault.open({ dataDir: dir, addSecret: reopened.addSecret });
    reopened.logger.info(`again ${VALUE}`);
    expect(lines.join("")).not.toContain(VALUE);
    expect(lines.join("")).toContain("{{secret:api}}");
  });

  it("scrubs values back into references and lists names without values", async () => {
    const vault = await SecretVault.open({ dataDir: dir });
    await vault.set(OWNER, "api", VALUE, ["https://api.example.com"]);
    expect(vault.scrub(`echo: ${VALUE}!`)).toBe("echo: {{secret:api}}!");
    expect(JSON.stringify(vault.list())).not.toContain(VALUE);
    expect(await vault.delete(OWNER, "api")).toBe(true);
    expect(await vault.delete(OWNER, "api")).toBe(false);
    expect(vault.references("{{secret:a}} and {{secret:b.c}}")).toEqual(["a", "b.c"]);
  });

  it("keeps secrets per person: another person's secret of the same name is never substituted", async () => {
    const vault = await SecretVault.open({ dataDir: dir });
    await vault.set(OWNER, "api", VALUE, ["https://api.example.com"]);
    await vault.set("person_b", "other", "value-of-person-b", ["https://api.example.com"]);
    expect(() => vault.substituteSecrets("{{secret:api}}", "https://api.example.com", "person_b")).toThrow(expect.objectContaining({ code: "secret_unknown" }));
    expect(() => vault.substituteSecrets("{{secret:api}}", "https://api.example.com", SHARED_OWNER)).toThrow(expect.objectContaining({ code: "secret_unknown" }));
    expect(vault.list("person_b")).toEqual([{ owner: "person_b", name: "other", origins: ["https://api.example.com"] }]);
    // The outbound check counts every owner's values, in any encoding.
    expect(vault.unboundIn([`x=${Buffer.from(VALUE).toString("base64")}`], "https://evil.example")).toEqual(["api"]);
    expect(vault.unboundIn([`x=${encodeURIComponent(VALUE)}`], "https://api.example.com")).toEqual([]);
  });

  it("does not count, in the outbound check, entries holding the credential a caller sends on purpose, and still counts the others", async () => {
    const vault = await SecretVault.open({ dataDir: dir });
    // One app password kept twice (a mailbox and a calendar of the same account), bound to no origin.
    await vault.set(OWNER, "connection.con_mail", "app-password-1234", []);
    await vault.set("person_b", "connection.con_cal", "app-password-1234", []);
    await vault.set(OWNER, "api", VALUE, ["https://api.example.com"]);
    const basic = `Basic ${Buffer.from("ana:app-password-1234").toString("base64")}`;
    expect(vault.unboundIn([basic], "https://caldav.example").sort()).toEqual(["connection.con_cal", "connection.con_mail"]);
    expect(vault.unboundIn([basic], "https://caldav.example", ["app-password-1234"])).toEqual([]);
    expect(vault.unboundIn([basic, VALUE], "https://caldav.example", ["app-password-1234"])).toEqual(["api"]);
  });

  it("reads a version-1 file (one vault per process) as the operator's shared secrets", async () => {
    const first = await SecretVault.open({ dataDir: dir });
    await first.set(SHARED_OWNER, "model", VALUE, ["https://api.example.com"]);
    // Rewrite it in the old format, encrypted the old way.
    const { createCipheriv, randomBytes } = await import("node:crypto");
    const key = Buffer.from((await readFile(join(dir, "secret.key"), "utf8")).trim(), "hex");
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(Buffer.from(JSON.stringify(["model", ["https://api.example.com"]])));
    const data = Buffer.concat([cipher.update(VALUE, "utf8"), cipher.final()]);
    await writeFile(join(dir, "vault.json"), JSON.stringify({ version: 1, secrets: { model: { origins: ["https://api.example.com"], iv: iv.toString("base64"), tag: cipher.getAuthTag().toString("base64"), data: data.toString("base64") } } }));
    const vault = await SecretVault.open({ dataDir: dir });
    expect(vault.list()).toEqual([{ owner: SHARED_OWNER, name: "model", origins: ["https://api.example.com"] }]);
    expect(vault.substituteSecrets("{{secret:model}}", "https://api.example.com", SHARED_OWNER)).toBe(VALUE);
    expect(JSON.parse(await readFile(join(dir, "vault.json"), "utf8"))).toMatchObject({ version: 2 });
  });
});
