/**
 * Sentinel: the deterministic layer between the model and every side effect — tool policies,
 * action descriptors and grant patterns, the rule table and `decide`, grants and approvals (cards,
 * presses, sessions, fatigue rules), the egress guard, the secret vault, audit.
 */
export type { DecisionInput, Decision, Effect } from "./types.js";
export type { ToolPolicy } from "../tools/tool.js";
export { EgressDeniedError, EgressFailedError, type EgressDenialCode } from "./errors.js";
export { SecretError } from "./secret-errors.js";
export type { EgressFailureCode, SecretErrorCode } from "../tools/error-codes.js";
export { classifyAddress, isIpLiteral, METADATA_ADDRESSES, type AddressVerdict } from "./addresses.js";
export { EgressGuard, precheckUrl, hostPortOf, type EgressOptions, type EgressRequest, type EgressResponse, type CheckedTarget, type Resolver } from "./egress.js";
export {
  describeAction,
  descriptorKey,
  canonicalJson,
  classifyTarget,
  extractTargets,
  normaliseFilePath,
  urlTarget,
  valuesAt,
  carriesData,
  describeTarget,
  targetKey,
  type ActionDescriptor,
  type ActionTarget,
  type UrlPrecheck,
} from "./descriptor.js";
export { patternFor, patternCovers, parseGrantPattern, describePattern, methodInWords, sameAction, type GrantPattern, type TargetPattern, type Breadth } from "./patterns.js";
export { liveGrants, coveringGrant, type ActiveGrant, type GrantContext } from "./grants.js";
export { decide, defaultPolicy, parsePolicy, policySchema, policyRuleSchema, capabilityMatches, type Policy, type PolicyRule } from "./policy.js";
export { SentinelClock, SessionTracker, SESSION_IDLE_MS } from "./time.js";
export { SecretVault, parseSecretKey, originOf, SECRET_REFERENCE, type VaultOptions } from "./vault.js";
export { Sentinel, type SentinelDeps, type SentinelStore, type ActivationOptions } from "./sentinel.js";
export { MAX_PENDING_PER_PERSON, MAX_DENIALS_PER_TASK } from "./asking.js";
export { ApprovalDesk, approvalButtonId, isApprovalButtonId, newButtonToken, statusOf, DAY_GRANT_MS, type Presser, type PressResult, type ApprovalDeskDeps } from "./approvals.js";
export { buildApprovalCard, decidedCard, cardFits, CHOICE_LABELS, localTime, relativeTime, type CardContext } from "./card.js";
export { cardViewSchema, parseCardView, renderCardMarkdown, type CardView, type CardField, type CardButton } from "./card-view.js";
export { parseApprovalDetails, type ApprovalDetails } from "./request.js";
export type { Provenance } from "./provenance.js";
export { neutralise, collapseRuns, decodeBody, decodeLayers, visible } from "./readable.js";
export { SentinelViews, type GrantView, type AuditLine, type ViewStore } from "./views.js";
export { inertLinks, allowedLinkHosts, type LinkAllowed, type InertResult } from "./inert-links.js";
export { MAX_UNASKED_JOB_DEPTH } from "./policy.js";
