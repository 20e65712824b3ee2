/**
 * The vault's error kind. Its stable `code` lets tools turn it into a structured tool error
 * (`{ ok: false, code, error }`) the model can read and act on.
 */
import type { SecretErrorCode } from "../tools/index.js";

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
