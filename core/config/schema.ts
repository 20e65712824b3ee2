import { z } from "zod";

/**
 * Every setting Familiar reads, in one zod schema. Values come from environment variables and,
 * optionally, a JSON config file named by FAMILIAR_CONFIG (environment wins). Names are the
 * environment variable names. `secret: true` in `settingDocs` marks values that are never echoed.
 */

const emptyToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const optionalString = z.preprocess(emptyToUndefined, z.string().optional());
const optionalUrl = z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).optional());
const bool = (fallback: boolean) =>
  z.preprocess((v) => {
    if (v === undefined || v === "") return fallback;
    if (typeof v === "boolean") return v;
    const s = String(v).toLowerCase();
    if (["1", "true", "yes", "on"].includes(s)) return true;
    if (["0", "false", "no", "off"].includes(s)) return false;
    return v;
  }, z.boolean());
const int = (fallback: number, min: number, max: number) =>
  z.preprocess((v) => (v === undefined || v === "" ? fallback : typeof v === "string" ? Number(v) : v), z.number().int().min(min).max(max));

export const configSchema = z
  .object({
    DATA_DIR: z.preprocess(emptyToUndefined, z.string().default("./data")),
    HOST: z.preprocess(emptyToUndefined, z.string().min(1).default("127.0.0.1")),
    PORT: int(3000, 0, 65535),
    MONGODB_URI: z.preprocess(
      emptyToUndefined,
      z.string().regex(/^mongodb(\+srv)?:\/\//).optional(),
    ),
    OPENAI_API_KEY: optionalString,
    OPENAI_BASE_URL: optionalUrl,
    OPENAI_MODEL: z.preprocess(emptyToUndefined, z.string().default("gpt-4o-mini")),
    LOG_LEVEL: z.preprocess(
      emptyToUndefined,
      z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    ),
    /** Token budget of one activation's context (prompt side). */
    CONTEXT_TOKEN_BUDGET: int(16_000, 2_000, 1_000_000),
    /** Steps (model calls) an activation may take before it stops. */
    MAX_STEPS_PER_ACTIVATION: int(8, 1, 100),
    /** Timeout of one model request, ms. */
    MODEL_TIMEOUT_MS: int(60_000, 1_000, 600_000),
    /** Allow non-loopback clients to use the local chat API and page. */
    LOCAL_CHAT_ALLOW_REMOTE: bool(false),
    /** How long after its due time a missed wake-up still runs on start, ms (default 24 h). */
    WAKEUP_GRACE_MS: int(86_400_000, 0, 30 * 86_400_000),
    /** How long Agenda waits for running jobs on shutdown, ms. */
    SHUTDOWN_DEADLINE_MS: int(10_000, 0, 600_000),
  })
  .superRefine((c, ctx) => {
    if (c.OPENAI_BASE_URL === undefined && c.OPENAI_API_KEY !== undefined && c.OPENAI_API_KEY.length < 8) {
      ctx.addIssue({ code: "custom", path: ["OPENAI_API_KEY"], message: "an API key of at least 8 characters" });
    }
  });

export type Config = z.infer<typeof configSchema>;

/** Documentation of every setting (used by the README table and by error messages). */
export const settingDocs: Record<keyof Config, { expected: string; secret?: boolean }> = {
  DATA_DIR: { expected: "a directory path (created if missing)" },
  HOST: { expected: "an interface address to listen on, e.g. 127.0.0.1" },
  PORT: { expected: "an integer port 0–65535" },
  MONGODB_URI: { expected: "a mongodb:// or mongodb+srv:// connection string", secret: true },
  OPENAI_API_KEY: { expected: "an API key of at least 8 characters", secret: true },
  OPENAI_BASE_URL: { expected: "an http(s) URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1" },
  OPENAI_MODEL: { expected: "a model name" },
  LOG_LEVEL: { expected: "one of fatal, error, warn, info, debug, trace, silent" },
  CONTEXT_TOKEN_BUDGET: { expected: "an integer 2000–1000000 (tokens)" },
  MAX_STEPS_PER_ACTIVATION: { expected: "an integer 1–100" },
  MODEL_TIMEOUT_MS: { expected: "an integer 1000–600000 (milliseconds)" },
  LOCAL_CHAT_ALLOW_REMOTE: { expected: "true or false" },
  WAKEUP_GRACE_MS: { expected: "an integer number of milliseconds, at most 30 days" },
  SHUTDOWN_DEADLINE_MS: { expected: "an integer 0–600000 (milliseconds)" },
};
