/**
 * Action descriptions: for tools whose effect depends on the state of something outside the model's
 * arguments (a web page: clicking `e12` may follow a link, submit a login form or place an order),
 * the tool itself describes the exact action the call would perform *now*. Sentinel judges that
 * description instead of the static argument paths, shows it on the card, and binds an approval
 * to its digest, so an approved action runs only while the page still describes the same one.
 *
 * The description names the capability (`browser.browse`, `browser.submit`, `browser.purchase`, …),
 * the method, the destinations (URLs, checked like any other destination), the fields that would be
 * sent (password values masked, secrets as `{{secret:NAME}}` references — never values), and a
 * digest of everything that shapes the effect.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import type { Json } from "../json.js";
import type { BrowserErrorCode, CalendarToolErrorCode, FileErrorCode, MailErrorCode } from "./error-codes.js";

/** A purchase a checkout page shows (amounts as the page writes them). */
export const purchaseSchema = z.object({
  amount: z.string().nullable(),
  merchant: z.string(),
  items: z.array(z.string()),
});

/** What a call would do, as the tool describes it (see the module comment). */
export const actionDescriptionSchema = z.object({
  capability: z.string().min(1),
  access: z.enum(["read", "write"]),
  hardToUndo: z.boolean().default(false),
  /** `GET`, `POST`, `CLICK`, `TYPE`, `DOWNLOAD`, … */
  method: z.string().min(1),
  /** Absolute URLs the action reaches (classified by the egress precheck). */
  destinations: z.array(z.string()),
  /** The action hands data to a destination (typed text, form fields). */
  carriesData: z.boolean(),
  /** One plain sentence: what will happen, where. */
  summary: z.string().min(1),
  /** The page the action starts from. */
  page: z.string().nullable(),
  /** Fields that will be sent, as shown (passwords masked, secrets as references). */
  fields: z.array(z.object({ name: z.string(), value: z.string() })).default([]),
  purchase: purchaseSchema.nullable().default(null),
  /** Offer and accept only "Approve once", and only a grant bound to this digest covers it. */
  onceOnly: z.boolean().default(false),
  /** SHA-256 (hex) of what shapes the effect; an approval covers this digest only. */
  digest: z.string().regex(/^[0-9a-f]{64}$/),
});
export type ActionDescription = z.infer<typeof actionDescriptionSchema>;

/**
 * A call a describing tool cannot describe (no page open, an unknown element, an event that is not
 * there, a time that cannot be read): returned to the model as is.
 */
export class ActionUnavailableError extends Error {
  constructor(
    readonly code: BrowserErrorCode | FileErrorCode | CalendarToolErrorCode | MailErrorCode | "invalid_arguments",
    message: string,
  ) {
    super(message);
    this.name = "ActionUnavailableError";
  }
}

/** Digest of the parts that shape an action's effect (stable JSON, SHA-256 hex). */
export function actionDigest(parts: Json): string {
  return createHash("sha256").update(stableJson(parts)).digest("hex");
}

function stableJson(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(value[k]!)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Card lines for an action: the sentence, the page, every field, the purchase. Nothing is cut silently. */
export function actionCardLines(action: Pick<ActionDescription, "summary" | "page" | "fields" | "purchase">): string[] {
  const lines = [action.summary];
  if (action.page) lines.push(`On the page: ${action.page}`);
  if (action.purchase) {
    lines.push(`💳 Purchase at ${action.purchase.merchant}: ${action.purchase.amount ?? "amount not shown on the page"}`);
    if (action.purchase.items.length > 0) lines.push(`Items: ${action.purchase.items.join("; ")}`);
  }
  if (action.fields.length > 0) {
    lines.push(`Fields that will be sent (${action.fields.length}):`);
    for (const f of action.fields) lines.push(`• ${f.name || "(unnamed)"}: ${f.value === "" ? "(empty)" : f.value}`);
  }
  return lines;
}
