/**
 * Sentinel's error kinds. Each has a stable `code` so tools and the facade turn them into structured
 * tool errors (`{ ok: false, code, error }`) the model can read and act on.
 */

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

/** Why an allowed request still failed. */
export type EgressFailureCode = "timeout" | "too_large" | "network" | "aborted";

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

/** Why the vault refused. */
/**
 * Why the vault refused. `secret_unbound_destination`: a request carried a vault value (in some
 * encoding) to an origin that secret is not bound to — refused whatever the grants say.
 */
export type SecretErrorCode = "secret_unknown" | "secret_not_bound" | "secret_unbound_destination" | "vault_key_invalid" | "vault_corrupt";

/**
 * A vault failure. Messages name the secret and the destination, never the value. `secret_not_bound`
 * means a `{{secret:NAME}}` reference was about to go to a destination the secret is not bound to:
 * the tool call is denied.
 */
export class SecretError extends Error {
  constructor(
    readonly code: SecretErrorCode,
    message: string,
    readonly secretName: string | null = null,
  ) {
    super(message);
    this.name = "SecretError";
  }
}
