/**
 * Sentinel's secret handling for one call (split from sentinel.ts): the outbound check on the
 * arguments (a raw vault value going where it is not bound), the substitution of the acting person's
 * references for bound destinations, and the scrubbing of everything that comes back.
 */
import type { ToolResult } from "../tools/index.js";
import type { ActionDescriptor } from "../policy/index.js";
import { SecretError, type SecretVault } from "../secrets/index.js";
import { scrubDeep, secretsIn } from "../log/index.js";

/** The vault-facing half of Sentinel. Without a vault, references are refused and nothing is substituted. */
export class SecretGuard {
  constructor(
    private readonly vault: SecretVault | undefined,
    private readonly scrub: ((text: string) => string) | undefined,
  ) {}

  /**
   * The outbound check on the call's arguments: a vault value (of any person, in any encoding) that
   * would go to a destination it is not bound to. Returns the reason (names only), or null.
   */
  unboundValues(args: unknown, action: ActionDescriptor | null): string | null {
    const vault = this.vault;
    if (vault === undefined) return null;
    const texts: string[] = [];
    const collect = (v: unknown, depth: number): void => {
      if (typeof v === "string") texts.push(v);
      else if (v !== null && typeof v === "object" && depth < 8) for (const x of Object.values(v)) collect(x, depth + 1);
    };
    collect(args, 0);
    if (texts.length === 0) return null;
    const targets = action?.targets ?? [];
    const origins = targets.map((t) => (t.kind === "url" ? new URL(t.href).origin : null));
    // Without a destination (an internal tool such as remember) a raw value is kept out too.
    if (origins.length === 0) origins.push(null);
    for (const origin of origins) {
      const names = origin === null ? vault.known().filter((s) => secretsIn(texts.join("\n"), [s]).length > 0).map((s) => s.name ?? "") : vault.unboundIn(texts, origin);
      if (names.length > 0) return `the call carries the value of secret ${[...new Set(names)].join(", ")} to ${origin ?? "a place it is not bound to"}, where it is not bound`;
    }
    return null;
  }

  /** Secret references go only to destinations they are bound to (every URL target of the call), with the acting person's secrets only. */
  substitute(args: unknown, action: ActionDescriptor | null, personId: string, urlArgs: readonly string[]): { ok: true; value: unknown } | { ok: false; reason: string } {
    const vault = this.vault;
    const names = vault?.references(args) ?? referencesWithoutVault(args);
    if (names.length === 0) return { ok: true, value: args };
    if (vault === undefined) return { ok: false, reason: `secret references (${names.join(", ")}) but no vault is configured` };
    const targets = action?.targets ?? [];
    const urls = targets.filter((t) => t.kind === "url");
    if (urls.length === 0 || urls.length !== targets.length) {
      return { ok: false, reason: `secrets (${names.join(", ")}) may only be sent to a bound http(s) destination` };
    }
    try {
      let value = args;
      for (const t of urls) {
        const origin = new URL(t.href).origin;
        value = vault.substituteSecrets(args, origin, personId);
        // Inside a URL argument the value is percent-encoded, so it stays one query value or path part.
        if (value !== null && typeof value === "object" && !Array.isArray(value)) {
          const record = value as Record<string, unknown>;
          const source = args as Record<string, unknown>;
          for (const key of urlArgs) if (typeof source[key] === "string") record[key] = vault.substituteSecrets(source[key], origin, personId, encodeURIComponent);
        }
      }
      return { ok: true, value };
    } catch (error) {
      if (error instanceof SecretError) return { ok: false, reason: error.message };
      throw error;
    }
  }

  /** Vault values (every encoding) and, when configured, the boundary scrubber. */
  scrubText(text: string): string {
    const vaulted = this.vault ? this.vault.scrub(text) : text;
    return this.scrub ? this.scrub(vaulted) : vaulted;
  }

  /**
   * The whole result as the model, the journal and the audit will see it: content, error, data (e.g.
   * `data.url`) and the untrusted-source label, every string scrubbed of vault values in every
   * encoding; errors also of configured tokens and token shapes.
   */
  scrubResult(result: ToolResult): ToolResult {
    const vault = this.vault;
    const values = (s: string) => (vault ? vault.scrub(s) : s);
    if (result.ok) {
      return {
        ...result,
        content: values(result.content),
        ...(result.data !== undefined && { data: scrubDeep(result.data, (s) => this.scrubText(s)) }),
        ...(result.untrusted !== undefined && { untrusted: { ...result.untrusted, source: this.scrubText(result.untrusted.source) } }),
      };
    }
    return { ...result, error: this.scrubText(result.error), ...(result.data !== undefined && { data: scrubDeep(result.data, (s) => this.scrubText(s)) }) };
  }
}

function referencesWithoutVault(args: unknown): string[] {
  return /\{\{secret:[A-Za-z0-9_.-]{1,64}\}\}/.test(JSON.stringify(args) ?? "") ? ["(unknown)"] : [];
}

