/**
 * Sentinel: the deterministic layer between the model and every side effect — tool policies,
 * the rule table and `decide`, grants and approvals, the egress guard, the secret vault, audit.
 */
export type { ToolPolicy, Destination, DecisionInput, Decision, Effect } from "./types.js";
export { EgressDeniedError, EgressFailedError, SecretError, type EgressDenialCode, type EgressFailureCode, type SecretErrorCode } from "./errors.js";
export { classifyAddress, isIpLiteral, METADATA_ADDRESSES, type AddressVerdict } from "./addresses.js";
export { EgressGuard, precheckUrl, hostPortOf, type EgressOptions, type EgressRequest, type EgressResponse, type CheckedTarget, type Resolver } from "./egress.js";
export { valuesAt, classifyDestination, extractDestinations, carriesData, describeDestination, type UrlPrecheck } from "./destinations.js";
export { decide, defaultPolicy, parsePolicy, policySchema, policyRuleSchema, capabilityMatches, grantApplies, grantCoversDestination, coveringGrants, type Policy, type PolicyRule } from "./policy.js";
export { SecretVault, parseSecretKey, originOf, SECRET_REFERENCE, type VaultOptions } from "./vault.js";
export { Sentinel, type SentinelDeps, type ActivationOptions } from "./sentinel.js";
export { ApprovalDesk, approvalCard, approvalButtonId, parseApprovalButtonId, SCOPE_LETTERS, DAY_GRANT_MS, type Choice, type Presser, type PressResult, type ApprovalStore } from "./approvals.js";
export { SentinelViews, type GrantView, type AuditLine, type ViewStore } from "./views.js";
