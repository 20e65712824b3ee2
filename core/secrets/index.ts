/**
 * Secrets: the person's vault — credentials encrypted at rest and bound to the origins they may go
 * to — the desk that takes a secret in through a one-time link instead of the chat, the screen that
 * withholds secret-looking text a person types, the model boundary that scrubs vault values from
 * requests and answers, and the `request_secret` tool. A value never appears in logs, model
 * context, memory or errors.
 */
export { SecretDesk } from "./desk.js";
export { SecretError } from "./errors.js";
export { SecretScrubbingModel } from "./model-guard.js";
export { screenInbound, withholdSecretText } from "./screen.js";
export { SECRET_NAME, secretTools } from "./tools.js";
export { SHARED_OWNER, SecretVault } from "./vault.js";
