/**
 * Policy: Sentinel's vocabulary and its decision — what a tool call does (action descriptors), the
 * set of actions a grant covers (patterns), which grants apply now, where a destination came from
 * (provenance), the rule table and `decide`, the pure function from a typed descriptor to allow /
 * deny / ask, and Sentinel's own clock and sessions. It performs no side effect and shows no card.
 */
export type { Decision, DecisionInput } from "./decision.js";
export {
  carriesData,
  classifyTarget,
  describeAction,
  describeTarget,
  describedAction,
  descriptorKey,
  valuesAt,
  type ActionDescriptor,
  type ActionTarget,
  type UrlPrecheck,
} from "./descriptor.js";
export { liveGrants, type ActiveGrant } from "./grants.js";
export {
  describePattern,
  hostPath,
  methodGerund,
  methodInWords,
  methodPhrase,
  parseGrantPattern,
  patternFor,
  type GrantPattern,
} from "./patterns.js";
export { persistenceNotes, persistencePolicy } from "./persistence.js";
export { hostsIn, provenanceOf, provenanceSchema, type Provenance, type SeenContent } from "./provenance.js";
export { decodeAddress, decodeBody, decodeLayers, hostForDisplay, visible } from "./readable.js";
export { MAX_UNASKED_JOB_DEPTH, decide, defaultPolicy, type Policy } from "./rules.js";
export { SESSION_IDLE_MS, SentinelClock, SessionTracker } from "./time.js";
export { type Grant, type GrantConstraints, type GrantScope, type HostSighting, type NewGrant, type SentinelSession, type Taint } from "./records.js";
