/**
 * The secret vault: credentials Familiar uses on the person's behalf, encrypted at rest and bound to
 * the destinations they may be sent to.
 *
 * File: `DATA_DIR/vault.json` (mode 0600), one entry per secret, AES-256-GCM with a random 12-byte IV
 * per entry; the secret's name and bound origins are the GCM additional data, so editing the file to
 * rebind a secret to another destination makes it undecryptable instead of leaking it. Key:
 * FAMILIAR_SECRET_KEY (64 hex digits or base64 of 32 bytes), else `DATA_DIR/secret.key`, generated
 * on first start with mode 0600.
 *
 * The model, logs, memory and audit only ever see references `{{secret:NAME}}`; Sentinel replaces
 * them with {@link SecretVault.substituteSecrets} at execution time, for bound destinations only.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { SecretError } from "./errors.js";

/** `{{secret:NAME}}`; names are 1–64 characters of letters, digits, `_`, `-` and `.`. */
export const SECRET_REFERENCE = /\{\{secret:([A-Za-z0-9_.-]{1,64})\}\}/g;
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

const entrySchema = z.object({ origins: z.array(z.string()), iv: z.string(), tag: z.string(), data: z.string() });
const fileSchema = z.object({ version: z.literal(1), secrets: z.record(z.string(), entrySchema) });
type VaultFile = z.infer<typeof fileSchema>;

/** How to open the vault. */
export interface VaultOptions {
  dataDir: string;
  /** FAMILIAR_SECRET_KEY; when absent the key file under `dataDir` is used (created if missing). */
  secretKey?: string;
  /** The logger's `addSecret` (core/log.ts): every secret value is redacted from logs by value. */
  addSecret?: (value: string) => void;
}

/** Parses FAMILIAR_SECRET_KEY: 64 hex digits, or base64 of exactly 32 bytes. @throws SecretError */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, "hex");
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    const key = Buffer.from(trimmed.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (key.length === 32) return key;
  }
  throw new SecretError("vault_key_invalid", "FAMILIAR_SECRET_KEY must be 64 hex digits or base64 of 32 bytes");
}

/** Exact origin of an http(s) URL or origin string (`https://api.example.com`); null when not one. */
export function originOf(value: string): string | null {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : null;
  } catch {
    return null;
  }
}

/** The encrypted secret store. Open it with {@link SecretVault.open}. */
export class SecretVault {
  private constructor(
    private readonly file: string,
    private readonly key: Buffer,
    private data: VaultFile,
    private readonly values: Map<string, string>,
    private readonly addSecret: (value: string) => void,
  ) {}

  /**
   * Opens (or creates) the vault under `dataDir`, decrypting every entry and registering each value
   * with the logger. @throws SecretError (`vault_key_invalid`, `vault_corrupt` — wrong key or edited file)
   */
  static async open(options: VaultOptions): Promise<SecretVault> {
    await mkdir(options.dataDir, { recursive: true });
    const key = options.secretKey !== undefined ? parseSecretKey(options.secretKey) : await loadOrCreateKey(options.dataDir);
    const file = join(options.dataDir, "vault.json");
    let data: VaultFile = { version: 1, secrets: {} };
    try {
      data = fileSchema.parse(JSON.parse(await readFile(file, "utf8")));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new SecretError("vault_corrupt", `${file} is not a valid vault file`);
    }
    const addSecret = options.addSecret ?? (() => undefined);
    const values = new Map<string, string>();
    for (const [name, entry] of Object.entries(data.secrets)) {
      const value = decrypt(key, name, entry);
      values.set(name, value);
      addSecret(value);
    }
    return new SecretVault(file, key, data, values, addSecret);
  }

  /** Stores (or replaces) a secret bound to exact origins. @throws SecretError when an origin is not http(s). */
  async set(name: string, value: string, origins: readonly string[]): Promise<void> {
    if (!NAME.test(name)) throw new SecretError("secret_unknown", `secret names are 1–64 characters of A-Z a-z 0-9 _ . -, not ${JSON.stringify(name)}`, name);
    const bound = origins.map((o) => {
      const origin = originOf(o);
      if (origin === null) throw new SecretError("secret_not_bound", `secret ${name}: ${JSON.stringify(o)} is not an http(s) origin`, name);
      return origin;
    });
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(aad(name, bound));
    const data = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
    this.data = {
      ...this.data,
      secrets: { ...this.data.secrets, [name]: { origins: bound, iv: iv.toString("base64"), tag: cipher.getAuthTag().toString("base64"), data: data.toString("base64") } },
    };
    this.values.set(name, value);
    this.addSecret(value);
    await this.save();
  }

  /** Removes a secret; returns false when there was none. */
  async delete(name: string): Promise<boolean> {
    if (!(name in this.data.secrets)) return false;
    const { [name]: _removed, ...rest } = this.data.secrets;
    this.data = { ...this.data, secrets: rest };
    this.values.delete(name);
    await this.save();
    return true;
  }

  /** Names and bound origins (never values), for the person's settings view. */
  list(): { name: string; origins: string[] }[] {
    return Object.entries(this.data.secrets).map(([name, e]) => ({ name, origins: [...e.origins] }));
  }

  /** Names of the secrets referenced anywhere in `value` (strings, arrays, objects). */
  references(value: unknown): string[] {
    const names = new Set<string>();
    visitStrings(value, (s) => {
      for (const m of s.matchAll(SECRET_REFERENCE)) names.add(m[1]!);
      return s;
    });
    return [...names];
  }

  /**
   * Replaces every `{{secret:NAME}}` in `value` (deeply, in strings of arrays and objects) with the
   * secret's value — only when `destinationOrigin` is one of the secret's bound origins.
   *
   * @throws SecretError `secret_unknown` (no such secret) or `secret_not_bound` (not for this
   *   destination): the caller denies the tool call.
   */
  substituteSecrets<T>(value: T, destinationOrigin: string | null): T {
    const origin = destinationOrigin === null ? null : originOf(destinationOrigin);
    return visitStrings(value, (s) =>
      s.replace(SECRET_REFERENCE, (_match, name: string) => {
        const entry = this.data.secrets[name];
        const secret = this.values.get(name);
        if (entry === undefined || secret === undefined) throw new SecretError("secret_unknown", `there is no secret named ${name}`, name);
        if (origin === null || !entry.origins.includes(origin)) {
          throw new SecretError("secret_not_bound", `secret ${name} is not bound to ${destinationOrigin ?? "this destination"}; it may only be sent to ${entry.origins.join(", ") || "no destination"}`, name);
        }
        return secret;
      }),
    ) as T;
  }

  /** Replaces every known secret value in `text` with its reference (for tool results the model reads). */
  scrub(text: string): string {
    let out = text;
    for (const [name, value] of this.values) if (value.length > 0 && out.includes(value)) out = out.split(value).join(`{{secret:${name}}}`);
    return out;
  }

  private async save(): Promise<void> {
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(this.data, null, 2), { mode: 0o600 });
    await rename(tmp, this.file);
    await chmod(this.file, 0o600);
  }
}

async function loadOrCreateKey(dataDir: string): Promise<Buffer> {
  const file = join(dataDir, "secret.key");
  try {
    return parseSecretKey(await readFile(file, "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const key = randomBytes(32);
  try {
    await writeFile(file, key.toString("hex") + "\n", { mode: 0o600, flag: "wx" });
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return parseSecretKey(await readFile(file, "utf8"));
    throw error;
  }
  await chmod(file, 0o600);
  return key;
}

function aad(name: string, origins: readonly string[]): Buffer {
  return Buffer.from(JSON.stringify([name, origins]), "utf8");
}

function decrypt(key: Buffer, name: string, entry: z.infer<typeof entrySchema>): string {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(entry.iv, "base64"));
    decipher.setAAD(aad(name, entry.origins));
    decipher.setAuthTag(Buffer.from(entry.tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(entry.data, "base64")), decipher.final()]).toString("utf8");
  } catch {
    throw new SecretError("vault_corrupt", `secret ${name} cannot be decrypted: wrong FAMILIAR_SECRET_KEY or an edited vault file`, name);
  }
}

function visitStrings(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === "string") return fn(value);
  if (Array.isArray(value)) return value.map((v) => visitStrings(v, fn));
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, visitStrings(v, fn)]));
  }
  return value;
}
