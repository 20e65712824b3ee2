import { pino, type Logger } from "pino";
import { SecretRegistry } from "./redaction.js";

export type { Logger } from "pino";

/** Keys whose values are always replaced by `[redacted]` in log objects, at any depth. */
const secretKey = /(token|secret|password|passwd|api[_-]?key|authorization|cookie|credential|private[_-]?key|signing)/i;

const REDACTED = "[redacted]";

/**
 * Deep-copies `value` with secrets removed: by key (any key matching token/secret/password/…)
 * and by value (any occurrence of a known secret string inside any string — in every encoding, plus
 * platform token shapes, when `secrets` is a {@link SecretRegistry}).
 */
export function redact(value: unknown, secrets: readonly string[] | SecretRegistry, depth = 0): unknown {
  if (typeof value === "string") return scrub(value, secrets);
  if (depth > 8 || value === null || typeof value !== "object") return value;
  if (value instanceof Date) return value;
  if (value instanceof Error) {
    return { type: value.name, message: scrub(value.message, secrets), stack: value.stack && scrub(value.stack, secrets), code: (value as { code?: unknown }).code };
  }
  if (Array.isArray(value)) return value.map((v) => redact(v, secrets, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = secretKey.test(k) && v !== null && v !== undefined && typeof v !== "boolean" ? REDACTED : redact(v, secrets, depth + 1);
  }
  return out;
}

function scrub(text: string, secrets: readonly string[] | SecretRegistry): string {
  if (secrets instanceof SecretRegistry) return secrets.scrub(text);
  let out = text;
  for (const s of secrets) if (s && out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

/**
 * Creates the structured (pino, JSON lines) logger. Secrets are redacted by key and by value:
 * `secrets` are the current secret values (settings marked secret, vault values), and the list
 * may grow at run time through the returned `addSecret`. The returned `registry` is the process's
 * one boundary scrubber (redaction.ts): the same values, in every encoding, plus platform token shapes,
 * used by the logger, the audit and error writes of the store and the HTTP JSON responses.
 */
export function createLogger(options: {
  level: string;
  secrets?: readonly string[];
  destination?: NodeJS.WritableStream;
}): { logger: Logger; addSecret: (value: string, name?: string) => void; registry: SecretRegistry } {
  const secrets = new SecretRegistry((options.secrets ?? []).filter((s) => s.length >= 6));
  const logger = pino(
    {
      level: options.level,
      base: { app: "familiar" },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        log: (obj) => redact(obj, secrets) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          const cleaned = args.map((a) => (typeof a === "string" ? scrub(a, secrets) : a));
          return method.apply(this, cleaned as Parameters<typeof method>);
        },
      },
      serializers: { err: (e: unknown) => redact(e, secrets) },
    },
    options.destination ?? process.stdout,
  );
  return {
    logger,
    addSecret: (value: string, name?: string) => secrets.add(value, name),
    registry: secrets,
  };
}
