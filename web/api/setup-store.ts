import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { z } from "zod";
import { SHARED_OWNER, type SecretVault } from "../../core/secrets/index.js";

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** The model providers the setup page offers. */
export const providers = ["openai", "compatible", "ollama"] as const;
export type Provider = (typeof providers)[number];

/** Default base URL per provider (`compatible` has none: the person enters it). */
export const defaultBaseUrl: Record<Provider, string | null> = {
  openai: "https://api.openai.com/v1",
  compatible: null,
  ollama: "http://127.0.0.1:11434/v1",
};

const modelSchema = z.object({
  provider: z.enum(providers),
  baseURL: z.url({ protocol: /^https?$/ }),
  model: z.string().min(1).max(200),
  /** Whether a key is in the vault (never the key itself). */
  hasKey: z.boolean(),
});

const fileSchema = z.object({
  version: z.literal(1),
  model: modelSchema.nullable().default(null),
  /** scrypt of the remote sign-in password: `salt:hash`, both hex. */
  password: z.object({ hash: z.string(), personId: z.string() }).nullable().default(null),
  /** WhatsApp enabled on the setup page (tokens of the other messengers are in the vault). */
  whatsapp: z.boolean().default(false),
});

/** The model chosen on the setup page (the key is in the vault, under {@link MODEL_KEY_SECRET}). */
export type SetupModel = z.infer<typeof modelSchema>;

/** Vault name of the model API key; bound to the model server's origin only. */
export const MODEL_KEY_SECRET = "familiar.model-key";

/**
 * What the setup page stored: `DATA_DIR/setup.json` (mode 0600, written atomically) for the model
 * choice and the remote sign-in password's scrypt hash; the API key goes to the encrypted vault,
 * bound to the model server's origin, so it is never in this file, a log or the page.
 */
export class SetupStore {
  private constructor(
    private readonly file: string,
    private data: z.infer<typeof fileSchema>,
    private readonly vault: SecretVault,
  ) {}

  /** Opens (or starts empty) `DATA_DIR/setup.json`. A file that does not parse is an error, not silently reset. */
  static async open(dataDir: string, vault: SecretVault): Promise<SetupStore> {
    const file = join(dataDir, "setup.json");
    let data: z.infer<typeof fileSchema> = { version: 1, model: null, password: null, whatsapp: false };
    try {
      data = fileSchema.parse(JSON.parse(await readFile(file, "utf8")));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw new Error(`${file} is not a valid setup file (${(err as Error).message.split("\n")[0]}); fix or delete it`);
    }
    return new SetupStore(file, data, vault);
  }

  /** The stored model choice, or null. */
  model(): SetupModel | null {
    return this.data.model;
  }

  /** The stored API key (decrypted from the vault), or undefined. */
  apiKey(): string | undefined {
    const model = this.data.model;
    if (!model?.hasKey) return undefined;
    try {
      return this.vault.substituteSecrets(`{{secret:${MODEL_KEY_SECRET}}}`, new URL(model.baseURL).origin, SHARED_OWNER);
    } catch {
      return undefined;
    }
  }

  /** Stores the model choice; the key (if any) goes to the vault bound to the server's origin. */
  async saveModel(choice: { provider: Provider; baseURL: string; model: string; apiKey?: string }): Promise<void> {
    if (choice.apiKey) await this.vault.set(SHARED_OWNER, MODEL_KEY_SECRET, choice.apiKey, [new URL(choice.baseURL).origin]);
    else await this.vault.delete(SHARED_OWNER, MODEL_KEY_SECRET);
    this.data = { ...this.data, model: { provider: choice.provider, baseURL: choice.baseURL, model: choice.model, hasKey: Boolean(choice.apiKey) } };
    await this.save();
  }

  /** The person the password signs in as, or null when none is set. */
  passwordPerson(): string | null {
    return this.data.password?.personId ?? null;
  }

  /** Whether WhatsApp was enabled on the setup page. */
  whatsappEnabled(): boolean {
    return this.data.whatsapp;
  }

  /** Remembers that WhatsApp was enabled on the setup page (it then starts with Familiar). */
  async setWhatsAppEnabled(enabled: boolean): Promise<void> {
    this.data = { ...this.data, whatsapp: enabled };
    await this.save();
  }

  /** Whether a remote sign-in password is set. */
  hasPassword(): boolean {
    return this.data.password !== null;
  }

  /** Sets the remote sign-in password; signing in with it opens `personId`'s session. */
  async setPassword(password: string, personId: string): Promise<void> {
    const salt = randomBytes(16);
    const hash = await scryptAsync(password.normalize("NFKC"), salt, 32);
    this.data = { ...this.data, password: { hash: `${salt.toString("hex")}:${hash.toString("hex")}`, personId } };
    await this.save();
  }

  /** The person the password signs in as, when `password` is right (constant-time compare); else null. */
  async checkPassword(password: string): Promise<string | null> {
    const stored = this.data.password;
    if (!stored) return null;
    const [saltHex, hashHex] = stored.hash.split(":");
    if (!saltHex || !hashHex) return null;
    const expected = Buffer.from(hashHex, "hex");
    const given = await scryptAsync(password.normalize("NFKC"), Buffer.from(saltHex, "hex"), expected.length);
    return given.length === expected.length && timingSafeEqual(given, expected) ? stored.personId : null;
  }

  private async save(): Promise<void> {
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(this.data, null, 2), { mode: 0o600 });
    await rename(tmp, this.file);
  }
}
