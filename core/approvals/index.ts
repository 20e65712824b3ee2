/**
 * Approvals: what happens when Sentinel says `ask`. Decides whether a card is shown at all and
 * which scopes it may offer (asking.ts), what a denial covers and when denials trip the breaker
 * (denials.ts), stores the request with its readable summary and
 * provenance (request.ts, summary.ts), builds the card (card.ts), puts cards into the outbox and
 * keeps them truthful (card-issuer.ts), and checks every press — presser is the owner, request
 * pending and unexpired, first answer wins — before a grant is recorded (desk.ts). It does not run
 * tools, resume tasks (core/runtime/approval-resume.ts does) or render for a platform (the
 * messengers render the card view from core/channels).
 */
export { gateAsk, requestDetails } from "./asking.js";
export { coveredPlace, methodClass, placesOf, BREAKER_WINDOW_MS, DENIAL_CARRY_MS, MAX_DENIALS_PER_PERSON, MAX_DENIALS_PER_TASK } from "./denials.js";
export { ApprovalCards } from "./card-issuer.js";
export { ApprovalDesk, isApprovalButtonId, statusOf, type Presser } from "./desk.js";
export { summariseAction, summariseDescribed } from "./summary.js";
export { type ApprovalChoice, type ApprovalChoiceKind, type ApprovalDecision, type ApprovalRequest, type ApprovalStatus, type DecideResult, type NewApprovalRequest } from "./records.js";
