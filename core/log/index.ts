/**
 * Logging and redaction: the structured logger (pino, JSON lines) and the registry of known secrets
 * that scrubs them — every usual encoding, plus platform token shapes — from anything written out:
 * logs, JSON responses, stored error texts. It imports nothing of the runtime.
 */
export { createLogger, type Logger } from "./logger.js";
export { SecretRegistry, TOKEN_PATTERNS, scrubDeep, scrubSecrets, secretsIn, type KnownSecret } from "./redaction.js";
