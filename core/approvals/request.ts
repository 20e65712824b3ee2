/**
 * What Sentinel stores with an approval request (`ApprovalRequest.details`), validated with zod when
 * read back: the action descriptor (what a grant will be bound to), its readable summary (what the
 * card shows), where the destination came from, and the choices the card may offer (decided by risk
 * and by whether everything fits on the card).
 */
import { z } from "zod";
import type { ApprovalRequest, ApprovalChoiceKind } from "./records.js";
import { type ActionDescriptor, provenanceSchema } from "../policy/index.js";
import { actionSummarySchema, type ActionSummary } from "./summary.js";

const targetSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("url"), scheme: z.enum(["http", "https"]), host: z.string(), port: z.number().int(), path: z.string(), href: z.string() }),
  z.object({ kind: z.literal("file"), path: z.string() }),
  z.object({ kind: z.literal("recipient"), address: z.string() }),
  z.object({ kind: z.literal("other"), value: z.string() }),
  z.object({ kind: z.literal("blocked"), value: z.string(), reason: z.string(), code: z.string() }),
]);

export const actionDescriptorSchema = z.object({
  v: z.literal(1),
  tool: z.string(),
  capability: z.string(),
  access: z.enum(["read", "write"]),
  method: z.string(),
  targets: z.array(targetSchema),
  digest: z.string(),
});


const choiceSchema = z.enum(["once", "task", "session", "until", "always", "deny"]);

export const approvalDetailsSchema = z.object({
  v: z.literal(2),
  action: actionDescriptorSchema,
  actionKey: z.string(),
  summary: actionSummarySchema,
  access: z.enum(["read", "write"]),
  ruleId: z.string(),
  reason: z.string(),
  tainted: z.boolean(),
  provenance: provenanceSchema,
  /** The buttons the card offers, in order (deny last). */
  offered: z.array(choiceSchema).min(1),
  /** Why wider scopes are not offered (null: they are). */
  restriction: z.string().nullable(),
});

export type ApprovalDetails = z.infer<typeof approvalDetailsSchema>;

/** Reads a request's details; null for requests Sentinel did not write in this format (they cannot be approved). */
export function parseApprovalDetails(request: Pick<ApprovalRequest, "details">): ApprovalDetails | null {
  const parsed = approvalDetailsSchema.safeParse(request.details);
  return parsed.success ? parsed.data : null;
}

/** The descriptor stored with a request (typed). */
export function requestAction(details: ApprovalDetails): ActionDescriptor {
  return details.action;
}

export type { ActionSummary, ApprovalChoiceKind };
