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
 * Every secret has an owner (a person id, or `shared` for the operator's own keys); owner, name and
 * bound origins are all in the additional data. File version 2 is `{version: 2, secrets: [{owner,
 * name, origins, iv, tag, data}]}`; a version-1 file is migrated to shared secrets on open.
 *
 * The model, logs, memory and audit only ever see references `{{secret:NAME}}`; Sentinel replaces
 * them with {@link SecretVault.substituteSecrets} at execution time, with the acting person's
 * secrets and for bound destinations only; the egress guard then refuses any request that carries a
 * vault value to an origin it is not bound to ({@link SecretVault.unboundIn}).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { SecretError } from "./errors.js";
import { scrubSecrets, secretsIn, type KnownSecret } from "../log/index.js";

/** `{{secret:NAME}}`; names are 1–64 characters of letters, digits, `_`, `-` and `.`. */
export const SECRET_REFERENCE = /\{\{secret:([A-Za-z0-9_.-]{1,64})\}\}/g;
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The owner of operator-wide secrets (the model's API key, messenger tokens set on the setup page).
 * They are Familiar's own: never substituted into a person's tool call, shown as "shared" in lists.
 */
export const SHARED_OWNER = "shared";

const entrySchema = z.object({ origins: z.array(z.string()), iv: z.string(), tag: z.string(), data: z.string() });
const ownedEntrySchema = entrySchema.extend({ owner: z.string().min(1), name: z.string().regex(NAME) });
const fileV1Schema = z.object({ version: z.literal(1), secrets: z.record(z.string(), entrySchema) });
const fileSchema = z.object({ version: z.literal(2), secrets: z.array(ownedEntrySchema) });
type VaultFile = z.infer<typeof fileSchema>;
type Entry = z.infer<typeof ownedEntrySchema>;

/** A secret as lists show it: owner (a person id, or {@link SHARED_OWNER}), name and bound origins — never the value. */
export interface SecretListing {
  owner: string;
  name: string;
  origins: string[];
}

/** How to open the vault. */
export interface VaultOptions {
  dataDir: string;
  /** FAMILIAR_SECRET_KEY; when absent the key file under `dataDir` is used (created if missing). */
  secretKey?: string;
  /** The logger's `addSecret` (core/log/logger.ts): every secret value is redacted from logs by value. */
  addSecret?: (value: string, name?: string) => void;
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

const keyOf = (owner: string, name: string) => `${owner}\u0000${name}`;

/**
 * The encrypted secret store, **per person**: every secret has an owner (a person id, or
 * {@link SHARED_OWNER} for the operator's own), and a person's tool calls can only use their own
 * secrets. Open it with {@link SecretVault.open}.
 */
export class SecretVault {
  private constructor(
    private readonly file: string,
    private readonly key: Buffer,
    private entries: Map<string, Entry>,
    private readonly values: Map<string, string>,
    private readonly addSecret: (value: string, name?: string) => void,
  ) {}

  /**
   * Opens (or creates) the vault under `dataDir`, decrypting every entry and registering each value
   * with the logger. A version-1 file (one vault per process) is read as the operator's shared
   * secrets and rewritten as version 2. @throws SecretError (`vault_key_invalid`, `vault_corrupt` — wrong key or edited file)
   */
  static async open(options: VaultOptions): Promise<SecretVault> {
    await mkdir(options.dataDir, { recursive: true });
    const key = options.secretKey !== undefined ? parseSecretKey(options.secretKey) : await loadOrCreateKey(options.dataDir);
    const file = join(options.dataDir, "vault.json");
    const addSecret = options.addSecret ?? (() => undefined);
    const entries = new Map<string, Entry>();
    const values = new Map<string, string>();
    let raw: unknown = null;
    try {
      raw = JSON.parse(await readFile(file, "utf8"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new SecretError("vault_corrupt", `${file} is not a valid vault file`);
    }
    const v1 = fileV1Schema.safeParse(raw);
    const v2 = fileSchema.safeParse(raw);
    if (raw !== null && !v1.success && !v2.success) throw new SecretError("vault_corrupt", `${file} is not a valid vault file`);
    const vault = new SecretVault(file, key, entries, values, addSecret);
    if (v2.success) {
      for (const entry of v2.data.secrets) {
        const value = decrypt(key, aad(entry.owner, entry.name, entry.origins), entry.name, entry);
        entries.set(keyOf(entry.owner, entry.name), entry);
        values.set(keyOf(entry.owner, entry.name), value);
        addSecret(value, entry.name);
      }
    } else if (v1.success) {
      for (const [name, entry] of Object.entries(v1.data.secrets)) {
        const value = decrypt(key, Buffer.from(JSON.stringify([name, entry.origins]), "utf8"), name, entry);
        vault.put(SHARED_OWNER, name, value, entry.origins);
      }
      await vault.save();
    }
    return vault;
  }

  /**
   * Stores (or replaces) `owner`'s secret bound to exact origins.
   * @throws SecretError when the name is invalid or an origin is not http(s).
   */
  async set(owner: string, name: string, value: string, origins: readonly string[]): Promise<void> {
    if (!NAME.test(name)) throw new SecretError("secret_unknown", `secret names are 1–64 characters of A-Z a-z 0-9 _ . -, not ${JSON.stringify(name)}`, name);
    if (owner.length === 0) throw new SecretError("secret_unknown", "a secret needs an owner", name);
    const bound = origins.map((o) => {
      const origin = originOf(o);
      if (origin === null) throw new SecretError("secret_not_bound", `secret ${name}: ${JSON.stringify(o)} is not an http(s) origin`, name);
      return origin;
    });
    this.put(owner, name, value, bound);
    await this.save();
  }

  private put(owner: string, name: string, value: string, origins: readonly string[]): void {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(aad(owner, name, origins));
    const data = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
    const k = keyOf(owner, name);
    this.entries.set(k, { owner, name, origins: [...origins], iv: iv.toString("base64"), tag: cipher.getAuthTag().toString("base64"), data: data.toString("base64") });
    this.values.set(k, value);
    this.addSecret(value, name);
  }

  /** Removes `owner`'s secret; returns false when there was none. */
  async delete(owner: string, name: string): Promise<boolean> {
    const k = keyOf(owner, name);
    if (!this.entries.has(k)) return false;
    this.entries.delete(k);
    this.values.delete(k);
    await this.save();
    return true;
  }

  /** Names and bound origins (never values); only `owner`'s when given. */
  list(owner?: string): SecretListing[] {
    return [...this.entries.values()].filter((e) => owner === undefined || e.owner === owner).map((e) => ({ owner: e.owner, name: e.name, origins: [...e.origins] }));
  }

  /**
   * The value of `owner`'s secret `name`, for the connectors that log in with it themselves (a
   * mailbox's app password, stored bound to no origin so it is never substituted into a request);
   * null when there is none. Never hand it to the model, a log or an error.
   */
  reveal(owner: string, name: string): string | null {
    return this.values.get(keyOf(owner, name)) ?? null;
  }

  /** Whether `owner` has a secret named `name`. */
  has(owner: string, name: string): boolean {
    return this.entries.has(keyOf(owner, name));
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
   * Replaces every `{{secret:NAME}}` in `value` (deeply, in strings of arrays and objects) with
   * `owner`'s secret of that name — only when `destinationOrigin` is one of its bound origins. Another
   * person's secret of the same name is never used.
   *
   * `encode` shapes the value for where it goes (e.g. `encodeURIComponent` inside a URL).
   *
   * @throws SecretError `secret_unknown` (the owner has no such secret) or `secret_not_bound` (not for
   *   this destination): the caller denies the tool call.
   */
  substituteSecrets<T>(value: T, destinationOrigin: string | null, owner: string, encode: (secret: string) => string = (s) => s): T {
    const origin = destinationOrigin === null ? null : originOf(destinationOrigin);
    return visitStrings(value, (s) =>
      s.replace(SECRET_REFERENCE, (_match, name: string) => {
        const entry = this.entries.get(keyOf(owner, name));
        const secret = this.values.get(keyOf(owner, name));
        if (entry === undefined || secret === undefined) throw new SecretError("secret_unknown", `there is no secret named ${name}`, name);
        if (origin === null || !entry.origins.includes(origin)) {
          throw new SecretError("secret_not_bound", `secret ${name} is not bound to ${destinationOrigin ?? "this destination"}; it may only be sent to ${entry.origins.join(", ") || "no destination"}`, name);
        }
        return encode(secret);
      }),
    ) as T;
  }

  /** Every value with its name (all owners), for scrubbing. */
  known(): KnownSecret[] {
    return [...this.entries].map(([k, e]) => ({ name: e.name, value: this.values.get(k) ?? "" }));
  }

  /**
   * Replaces every known secret value (of every owner, in every encoding — see core/log/redaction.ts) in `text`
   * with its reference.
   */
  scrub(text: string): string {
    return scrubSecrets(text, this.known());
  }

  /**
   * The outbound check: names of the secrets whose value (in any encoding) appears in `texts` although
   * `destinationOrigin` is not one of their bound origins. Every owner's secrets count, except those
   * whose value is one of `sentOnPurpose`: the credential the caller sends to this destination on
   * purpose (a connection's own password to its own server), which another entry may hold as well.
   */
  unboundIn(texts: readonly string[], destinationOrigin: string, sentOnPurpose: readonly string[] = []): string[] {
    const origin = originOf(destinationOrigin);
    const out = new Set<string>();
    for (const [k, e] of this.entries) {
      if (origin !== null && e.origins.includes(origin)) continue;
      const value = this.values.get(k);
      if (value === undefined || sentOnPurpose.includes(value)) continue;
      for (const text of texts) if (secretsIn(text, [{ value }]).length > 0) out.add(e.name);
    }
    return [...out];
  }

  private async save(): Promise<void> {
    const data: VaultFile = { version: 2, secrets: [...this.entries.values()] };
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(data, null, 2), { mode: 0o600 });
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

function aad(owner: string, name: string, origins: readonly string[]): Buffer {
  return Buffer.from(JSON.stringify([owner, name, origins]), "utf8");
}

function decrypt(key: Buffer, additional: Buffer, name: string, entry: z.infer<typeof entrySchema>): string {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(entry.iv, "base64"));
    decipher.setAAD(additional);
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
