/**
 * Sentinel: the one path from a model's tool call to a side effect (gate.ts) — policy decision,
 * grants, approvals, secret substitution and the egress check around every call, everything audited
 * — plus replies of tainted activations with links made inert (inert-links.ts) and what the person
 * can read about grants, approvals and audit (views.ts). Deterministic code outside the model's
 * reach.
 */
export { Sentinel } from "./gate.js";
export { InertLinks, allowedLinkHosts, inertLinks } from "./inert-links.js";
export { SentinelViews } from "./views.js";
