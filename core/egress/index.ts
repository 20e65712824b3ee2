/**
 * Egress: the network guard every tool request goes through — schemes, private and metadata
 * addresses refused, DNS pinned, redirects re-checked on every hop, secrets checked against the
 * origin they are bound to, sizes and times bounded. It decides nothing about permission (that is
 * core/policy and core/sentinel) and keeps no state.
 */
export { EgressDeniedError, EgressFailedError } from "./errors.js";
export { EgressGuard, type CheckedTarget, type EgressResponse } from "./guard.js";
