import { isIP } from "node:net";
import { z } from "zod";
import { weakSecretReason } from "./secret-strength.js";

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
    if (typeof v !== "string" && typeof v !== "number") return v;
    const s = String(v).toLowerCase();
    if (["1", "true", "yes", "on"].includes(s)) return true;
    if (["0", "false", "no", "off"].includes(s)) return false;
    return v;
  }, z.boolean());
const int = (fallback: number, min: number, max: number) =>
  z.preprocess((v) => (v === undefined || v === "" ? fallback : typeof v === "string" ? Number(v) : v), z.number().int().min(min).max(max));

const csv = (v: unknown): unknown =>
  v === undefined || v === ""
    ? []
    : Array.isArray(v) || (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean")
      ? v
      : String(v)
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean);
const channelEntry = z.string().regex(/^(telegram|slack|discord|whatsapp):[^\s,]+$/);

/**
 * One `connections` entry (FAMILIAR_CONFIG only): whose it is, its kind, its password (`env:NAME`
 * reads the environment variable NAME, anything else is the password itself) and the capabilities
 * granted; the rest are the kind's settings, checked by its connector at start. Moved into the
 * person's vault at every start.
 */
export const configuredConnectionSchema = z
  .object({
    person: z.string().regex(/^(local|telegram|slack|discord|whatsapp):[^\s,]+$/, "the person as channel:account, e.g. local:ana or telegram:42"),
    kind: z.string().min(1).max(40),
    password: z.string().min(1).max(16_384).optional(),
    capabilities: z.array(z.string().min(1).max(40)).max(20).optional(),
  })
  .loose();
export type ConfiguredConnection = z.infer<typeof configuredConnectionSchema>;
/** Like `channelEntry`, and the local web chat's user names (`local:me`). */
const ownerEntry = z.string().regex(/^(local|telegram|slack|discord|whatsapp):[^\s,]+$/);
/** `host:port` with an exact port (never a range); IPv6 in brackets. */
const hostPort = z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/);

export const configSchema = z
  .object({
    DATA_DIR: z.preprocess(emptyToUndefined, z.string().default("./data")),
    HOST: z.preprocess(
      emptyToUndefined,
      z
        .string()
        .refine((h) => isIP(h) !== 0 || /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(h), "an IP address or host name to listen on, e.g. 127.0.0.1")
        .optional(),
    ),
    PORT: int(3000, 0, 65535),
    MONGODB_URI: z.preprocess(
      emptyToUndefined,
      z.string().regex(/^mongodb(\+srv)?:\/\//).optional(),
    ),
    OPENAI_API_KEY: optionalString,
    OPENAI_BASE_URL: optionalUrl,
    OPENAI_MODEL: z.preprocess(emptyToUndefined, z.string().default("gpt-4o-mini")),
    /** `auto`: send photos to the model and learn from its first refusal that it cannot see; `off`: never send them. */
    OPENAI_VISION: z.preprocess((v) => (typeof v === "string" ? v.trim().toLowerCase() || undefined : v), z.enum(["auto", "off"]).default("auto")),
    /** Model of `/audio/transcriptions` for voice notes; `off` keeps voice notes as files only. */
    OPENAI_TRANSCRIPTION_MODEL: z.preprocess(emptyToUndefined, z.string().default("whisper-1")),
    /** Largest photo, voice note or file taken in from a messenger, bytes (default 20 MB, Telegram's getFile limit). */
    MAX_ATTACHMENT_BYTES: int(20 * 1024 * 1024, 1024, 100 * 1024 * 1024),
    LOG_LEVEL: z.preprocess(
      emptyToUndefined,
      z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    ),
    /** Token budget of one activation's context (prompt side). */
    CONTEXT_TOKEN_BUDGET: int(16_000, 2_000, 1_000_000),
    /** Inbound rate limit (core/inbound/rate-limit.ts): messages per window from one sender, one chat, everyone. */
    INBOUND_LIMIT_PER_SENDER: int(10, 1, 100_000),
    INBOUND_LIMIT_PER_CHAT: int(20, 1, 100_000),
    INBOUND_LIMIT_GLOBAL: int(100, 1, 1_000_000),
    /** The inbound rate limit's window, seconds. */
    INBOUND_LIMIT_WINDOW_SECONDS: int(60, 1, 86_400),
    /**
     * The per-person daily model budget (core/runtime/model-budget.ts): tokens (prompt + completion,
     * as the endpoint reports them) per person and local day; 0: unlimited.
     */
    MODEL_BUDGET_TOKENS_PER_DAY: int(0, 0, 1_000_000_000),
    /** Steps (model calls) an activation may take before it stops. */
    MAX_STEPS_PER_ACTIVATION: int(8, 1, 100),
    /** Timeout of one model request, ms. */
    MODEL_TIMEOUT_MS: int(60_000, 1_000, 600_000),
    /** Allow non-loopback clients to use the local chat API and page. */
    LOCAL_CHAT_ALLOW_REMOTE: bool(false),
    /** How long after its due time a missed wake-up still runs on start, ms (default 24 h). */
    WAKEUP_GRACE_MS: int(86_400_000, 0, 30 * 86_400_000),
    /** Base URL outside services use for webhooks (`/hooks/:id`); default http://HOST:PORT. */
    PUBLIC_URL: optionalUrl,
    /** Let the model judge (strict JSON) whether a proactive message is worth sending, whenever a model is configured; bounded by the rules; failures hold. */
    NOTIFY_MODEL_JUDGEMENT: bool(true),
    /** Asked-for ("notify: always") notifications per person and rolling hour before the cap treats further ones as ordinary. */
    NOTIFY_ASKED_FOR_PER_HOUR: int(10, 1, 1_000),
    /** How long Agenda waits for running jobs on shutdown, ms. */
    SHUTDOWN_DEADLINE_MS: int(10_000, 0, 600_000),

    // Messengers
    TELEGRAM_BOT_TOKEN: z.preprocess(emptyToUndefined, z.string().regex(/^\d+:[A-Za-z0-9_-]+$/).optional()),
    TELEGRAM_API_ROOT: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).refine((u) => !u.endsWith("/")).default("https://api.telegram.org")),
    TELEGRAM_WEBHOOK_URL: z.preprocess(emptyToUndefined, z.url({ protocol: /^https$|^http$/ }).optional()),
    TELEGRAM_WEBHOOK_SECRET: z.preprocess(emptyToUndefined, z.string().regex(/^[A-Za-z0-9_-]{16,256}$/).optional()),
    SLACK_BOT_TOKEN: z.preprocess(emptyToUndefined, z.string().startsWith("xoxb-").optional()),
    SLACK_SIGNING_SECRET: z.preprocess(emptyToUndefined, z.string().min(8).optional()),
    SLACK_APP_TOKEN: z.preprocess(emptyToUndefined, z.string().startsWith("xapp-").optional()),
    SLACK_API_URL: optionalUrl,
    DISCORD_BOT_TOKEN: z.preprocess(emptyToUndefined, z.string().min(20).optional()),
    DISCORD_API_URL: optionalUrl,
    WHATSAPP_ENABLED: bool(false),
    CHROMIUM_PATH: z.preprocess(emptyToUndefined, z.string().default("/usr/bin/chromium")),
    /** Who may talk without pairing: `telegram:123,slack:U0ABC,discord:456,whatsapp:+15550001`. */
    ALLOW_FROM: z.preprocess(csv, z.array(channelEntry)),
    /** Group chats Familiar reads (mentions only): `telegram:-100123,slack:C0123,discord:789`. */
    ALLOW_GROUPS: z.preprocess(csv, z.array(channelEntry)),
    /** The install's owner (approves pairings, names admins, manages groups); default: the first ALLOW_FROM entry. */
    OWNER: z.preprocess(csv, z.array(ownerEntry)),

    // Browser and workspace
    /** Browser contexts (persons browsing) open at once. */
    BROWSER_MAX_CONTEXTS: int(4, 1, 64),
    /** A person's browser context (and then the browser) closes after this long unused, ms. */
    BROWSER_IDLE_MS: int(300_000, 10_000, 86_400_000),
    /** Per-person workspace quota, MiB. */
    WORKSPACE_QUOTA_MB: int(1024, 1, 1_048_576),
    /** Familiar's computer (run_code, run_command in bubblewrap): on unless turned off; off anyway where the sandbox cannot run. */
    COMPUTER: bool(true),
    /** When Familiar runs as root: the unprivileged uid (and gid) sandboxes run as. */
    COMPUTER_UID: int(61000, 1, 4_294_967_294),

    // Sentinel
    /** Key of the secret vault (32 bytes as 64 hex or base64); generated under DATA_DIR when unset. */
    FAMILIAR_SECRET_KEY: z.preprocess(emptyToUndefined, z.string().min(32).optional()),
    /** Private hosts the person deliberately allows egress to, exact `host:port` each. */
    PRIVATE_HOSTS_ALLOWED: z.preprocess(csv, z.array(hostPort)),

    // Connections (issue 21)
    /** Persons' connections (mailboxes, calendars), from FAMILIAR_CONFIG only; see the README's Email section. */
    connections: z.preprocess((v) => (v === undefined || v === "" ? [] : v), z.array(configuredConnectionSchema).max(1_000)),
    /** Automatic sends (from background work, not the person's own words) per email thread and 24 hours. */
    EMAIL_AUTOMATIC_SENDS_PER_THREAD: int(3, 0, 100),
    /** How long one mailbox sync job holds its IMAP IDLE session before handing over, ms (default 4 min). */
    EMAIL_SYNC_SESSION_MS: int(240_000, 2_000, 3_600_000),
    /** With IDLE, the longest time without a sync pass (the watchdog), ms (default 2 min). */
    EMAIL_WATCHDOG_MS: int(120_000, 500, 3_600_000),
    /** Without IDLE, how often a mailbox is polled, ms (default 60 s). */
    EMAIL_POLL_MS: int(60_000, 200, 3_600_000),

    // Calendar (issue 22)
    /** How often a CalDAV account is synced, ms (default 15 min). */
    CALENDAR_SYNC_INTERVAL_MS: int(900_000, 1_000, 86_400_000),
    /** How often an iCalendar feed is fetched (conditionally), ms (default 1 h). */
    CALENDAR_FEED_INTERVAL_MS: int(3_600_000, 1_000, 86_400_000),
    /** How far ahead conflicts between the person's own calendars are looked for, days (default 30). */
    CALENDAR_CONFLICT_DAYS: int(30, 1, 366),
  })
  .superRefine((c, ctx) => {
    for (const issue of contradictions(c)) ctx.addIssue({ code: "custom", path: [issue.key], message: issue.expected });
    // Secrets that guard webhooks from the internet: a short or predictable one stops the start.
    for (const key of ["TELEGRAM_WEBHOOK_SECRET", "SLACK_SIGNING_SECRET"] as const) {
      const value = c[key];
      const weak = value === undefined ? null : weakSecretReason(value);
      if (weak !== null) ctx.addIssue({ code: "custom", path: [key], message: `a strong random secret: ${weak}` });
    }
  });

/**
 * Settings that only make sense together. Works on parsed settings and on raw values alike (a value
 * counts as set when it is a non-empty string), so a start with several bad settings still lists
 * every problem at once.
 */
export function contradictions(c: Record<string, unknown>): { key: string; expected: string }[] {
  const set = (key: string) => typeof c[key] === "string" && (c[key]).trim() !== "";
  const out: { key: string; expected: string }[] = [];
  if (set("TELEGRAM_WEBHOOK_URL") && !set("TELEGRAM_WEBHOOK_SECRET")) out.push({ key: "TELEGRAM_WEBHOOK_SECRET", expected: "a secret token, required with TELEGRAM_WEBHOOK_URL" });
  if ((set("TELEGRAM_WEBHOOK_URL") || set("TELEGRAM_WEBHOOK_SECRET")) && !set("TELEGRAM_BOT_TOKEN")) out.push({ key: "TELEGRAM_BOT_TOKEN", expected: "the bot token, required for Telegram webhook mode" });
  if (set("SLACK_BOT_TOKEN") && !set("SLACK_SIGNING_SECRET") && !set("SLACK_APP_TOKEN")) {
    out.push({ key: "SLACK_SIGNING_SECRET", expected: "SLACK_SIGNING_SECRET (HTTP events) or SLACK_APP_TOKEN (Socket Mode), required with SLACK_BOT_TOKEN" });
  }
  if ((set("SLACK_SIGNING_SECRET") || set("SLACK_APP_TOKEN")) && !set("SLACK_BOT_TOKEN")) out.push({ key: "SLACK_BOT_TOKEN", expected: "the bot token, required with SLACK_SIGNING_SECRET or SLACK_APP_TOKEN" });
  return out;
}

export type Config = z.infer<typeof configSchema>;

/**
 * The interface Familiar listens on: `HOST` when set; else every interface (`0.0.0.0`) when
 * `LOCAL_CHAT_ALLOW_REMOTE` lets other devices in (they still must sign in), else loopback
 * (`127.0.0.1`) only. So one setting opens the web app to a phone on the same network.
 */
export function listenHost(config: Pick<Config, "HOST" | "LOCAL_CHAT_ALLOW_REMOTE">): string {
  return config.HOST ?? (config.LOCAL_CHAT_ALLOW_REMOTE ? "0.0.0.0" : "127.0.0.1");
}

/** Documentation of every setting (used by the README table and by error messages). */
export const settingDocs: Record<keyof Config, { expected: string; secret?: boolean }> = {
  DATA_DIR: { expected: "a directory path (created if missing)" },
  HOST: { expected: "an IP address or host name to listen on, e.g. 127.0.0.1" },
  PORT: { expected: "an integer port 0–65535" },
  MONGODB_URI: { expected: "a mongodb:// or mongodb+srv:// connection string", secret: true },
  OPENAI_API_KEY: { expected: "an API key of at least 8 characters", secret: true },
  OPENAI_BASE_URL: { expected: "an http(s) URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1" },
  OPENAI_MODEL: { expected: "a model name" },
  OPENAI_VISION: { expected: "auto (send photos; learn from the first refusal) or off" },
  OPENAI_TRANSCRIPTION_MODEL: { expected: "a transcription model name, e.g. whisper-1, or off" },
  MAX_ATTACHMENT_BYTES: { expected: "an integer 1024–104857600 (bytes)" },
  LOG_LEVEL: { expected: "one of fatal, error, warn, info, debug, trace, silent" },
  CONTEXT_TOKEN_BUDGET: { expected: "an integer 2000–1000000 (tokens)" },
  INBOUND_LIMIT_PER_SENDER: { expected: "an integer 1–100000 (messages per window)" },
  INBOUND_LIMIT_PER_CHAT: { expected: "an integer 1–100000 (messages per window)" },
  INBOUND_LIMIT_GLOBAL: { expected: "an integer 1–1000000 (messages per window)" },
  INBOUND_LIMIT_WINDOW_SECONDS: { expected: "an integer 1–86400 (seconds)" },
  MODEL_BUDGET_TOKENS_PER_DAY: { expected: "an integer 0–1000000000 (tokens per person and day; 0: unlimited)" },
  MAX_STEPS_PER_ACTIVATION: { expected: "an integer 1–100" },
  MODEL_TIMEOUT_MS: { expected: "an integer 1000–600000 (milliseconds)" },
  LOCAL_CHAT_ALLOW_REMOTE: { expected: "true or false" },
  WAKEUP_GRACE_MS: { expected: "an integer number of milliseconds, at most 30 days" },
  SHUTDOWN_DEADLINE_MS: { expected: "an integer 0–600000 (milliseconds)" },
  PUBLIC_URL: { expected: "the http(s) base URL outside services reach Familiar at" },
  NOTIFY_MODEL_JUDGEMENT: { expected: "true or false" },
  NOTIFY_ASKED_FOR_PER_HOUR: { expected: "an integer 1–1000 (notifications per person and hour)" },
  TELEGRAM_BOT_TOKEN: { expected: "a bot token from @BotFather (digits:letters)", secret: true },
  TELEGRAM_API_ROOT: { expected: "an http(s) URL without a trailing slash (a local Bot API server)" },
  TELEGRAM_WEBHOOK_URL: { expected: "the public https URL Telegram posts updates to (needs TELEGRAM_WEBHOOK_SECRET)" },
  TELEGRAM_WEBHOOK_SECRET: { expected: "16–256 characters of A-Z a-z 0-9 _ - (Telegram's secret_token rule), required with TELEGRAM_WEBHOOK_URL", secret: true },
  SLACK_BOT_TOKEN: { expected: "a bot token starting with xoxb- (needs SLACK_SIGNING_SECRET or SLACK_APP_TOKEN)", secret: true },
  SLACK_SIGNING_SECRET: { expected: "the app's signing secret (needs SLACK_BOT_TOKEN)", secret: true },
  SLACK_APP_TOKEN: { expected: "an app-level token starting with xapp- for Socket Mode (needs SLACK_BOT_TOKEN)", secret: true },
  SLACK_API_URL: { expected: "an http(s) URL of the Slack Web API, ending in /api/" },
  DISCORD_BOT_TOKEN: { expected: "a Discord bot token", secret: true },
  DISCORD_API_URL: { expected: "an http(s) URL of the Discord REST API (discord.js appends /v10)" },
  WHATSAPP_ENABLED: { expected: "true or false" },
  CHROMIUM_PATH: { expected: "path of a Chromium executable" },
  ALLOW_FROM: { expected: "comma-separated channel:accountId entries, e.g. telegram:123,slack:U0ABC" },
  ALLOW_GROUPS: { expected: "comma-separated channel:chatId entries of group chats to read" },
  OWNER: { expected: "comma-separated channel:accountId entries of the owner, e.g. telegram:123,local:me (default: the first ALLOW_FROM entry)" },
  BROWSER_MAX_CONTEXTS: { expected: "an integer 1–64 (browser contexts open at once)" },
  BROWSER_IDLE_MS: { expected: "an integer 10000–86400000 (milliseconds)" },
  WORKSPACE_QUOTA_MB: { expected: "an integer number of MiB, at least 1" },
  COMPUTER: { expected: "true or false (false turns run_code and run_command off)" },
  COMPUTER_UID: { expected: "an integer uid other than 0 (the sandbox user when Familiar runs as root; also its gid)" },
  FAMILIAR_SECRET_KEY: { expected: "at least 32 characters (64 hex digits or base64 of 32 bytes)", secret: true },
  PRIVATE_HOSTS_ALLOWED: { expected: "comma-separated exact host:port entries, e.g. 192.168.1.10:8123" },
  connections: { expected: "a list of connections in FAMILIAR_CONFIG: { person, kind, password, capabilities, … } (see the README's Email section)" },
  EMAIL_AUTOMATIC_SENDS_PER_THREAD: { expected: "an integer 0–100 (automatic sends per email thread and day)" },
  EMAIL_SYNC_SESSION_MS: { expected: "an integer 2000–3600000 (milliseconds)" },
  EMAIL_WATCHDOG_MS: { expected: "an integer 500–3600000 (milliseconds)" },
  EMAIL_POLL_MS: { expected: "an integer 200–3600000 (milliseconds)" },
  CALENDAR_SYNC_INTERVAL_MS: { expected: "an integer 1000–86400000 (milliseconds between syncs of a CalDAV account)" },
  CALENDAR_FEED_INTERVAL_MS: { expected: "an integer 1000–86400000 (milliseconds between fetches of a calendar feed)" },
  CALENDAR_CONFLICT_DAYS: { expected: "an integer 1–366 (days ahead to look for conflicts)" },
};
