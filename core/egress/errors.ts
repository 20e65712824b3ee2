/**
 * The egress guard's error kinds. Each has a stable `code` so tools turn them into structured tool
 * errors (`{ ok: false, code, error }`) the model can read and act on.
 */
import type { EgressFailureCode } from "../tools/index.js";

/** Why the egress guard refused a URL. */
export type EgressDenialCode =
  | "invalid_url"
  | "scheme_not_allowed"
  | "private_address"
  | "metadata_address"
  | "unresolvable"
  | "too_many_redirects";

/**
 * A network destination was refused by the egress guard (before connecting, or on a redirect hop).
 * Carries the URL, the resolved address (null when the refusal happened before resolution) and a
 * reason a person can read.
 */
export class EgressDeniedError extends Error {
  constructor(
    readonly code: EgressDenialCode,
    readonly url: string,
    readonly address: string | null,
    readonly reason: string,
  ) {
    super(`egress to ${url} denied (${code}): ${reason}`);
    this.name = "EgressDeniedError";
  }
}


/** An allowed request failed: it took longer than its limit, its body was too large, or the network failed. */
export class EgressFailedError extends Error {
  constructor(
    readonly code: EgressFailureCode,
    readonly url: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "EgressFailedError";
  }
}
