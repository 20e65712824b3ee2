/**
 * Mail as events: the structured filter a task or goal waits on ("tell me when the school writes
 * about tryouts"), and the deterministic match of a new mail against it — no model involved, so mail
 * that does not match wakes nothing and costs nothing.
 *
 * Every field given must match (AND); within a list, any entry (OR). Text comparisons are
 * case-insensitive and ignore accents; `subject` words are matched against the subject as the
 * model would see it (after the one-time-code filter).
 */
import { z } from "zod";

const term = z.string().trim().min(1).max(200);

/** A mail filter. `from`/`to` entries are an address (`coach@school.example`) or a domain (`school.example`, `@school.example`). */
export const mailFilterSchema = z
  .object({
    from: z.array(term).max(20).optional(),
    to: z.array(term).max(20).optional(),
    /** Every one of these words or phrases appears in the subject. */
    subjectContains: z.array(term).max(10).optional(),
    hasAttachment: z.boolean().optional(),
    /** The mailing list (List-Id), e.g. `news.school.example`; any list when `true`. */
    list: z.union([term, z.literal(true)]).optional(),
    /** Only mail whose sender is verified (DMARC, or SPF/DKIM aligned). */
    verifiedOnly: z.boolean().optional(),
  })
  .strict();
export type MailFilter = z.infer<typeof mailFilterSchema>;

/** What the filter is matched against: a new mail as the sync recorded it (subject already filtered). */
export interface MailEventFacts {
  from: string | null;
  to: string[];
  cc: string[];
  subject: string;
  listId: string | null;
  hasAttachments: boolean;
  verified: boolean;
}

const fold = (s: string) => s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();

function addressMatches(entry: string, address: string): boolean {
  const e = fold(entry).replace(/^@/, "");
  const a = fold(address);
  if (e.includes("@")) return a === e;
  const domain = a.split("@")[1] ?? "";
  return domain === e || domain.endsWith(`.${e}`);
}

/** Whether `mail` matches `filter`. Pure and deterministic. */
export function matchesMail(filter: MailFilter, mail: MailEventFacts): boolean {
  if (filter.from && !(mail.from && filter.from.some((f) => addressMatches(f, mail.from!)))) return false;
  if (filter.to) {
    const rcpts = [...mail.to, ...mail.cc];
    if (!filter.to.some((t) => rcpts.some((r) => addressMatches(t, r)))) return false;
  }
  if (filter.subjectContains) {
    const subject = fold(mail.subject);
    if (!filter.subjectContains.every((w) => subject.includes(fold(w)))) return false;
  }
  if (filter.hasAttachment !== undefined && filter.hasAttachment !== mail.hasAttachments) return false;
  if (filter.list !== undefined) {
    if (!mail.listId) return false;
    if (filter.list !== true && fold(mail.listId) !== fold(filter.list).replace(/^<|>$/g, "")) return false;
  }
  if (filter.verifiedOnly && !mail.verified) return false;
  return true;
}

/** The filter in words, for cards, the goal list and the model: "from school.example, subject has “tryouts”". */
export function describeMailFilter(filter: MailFilter): string {
  const parts: string[] = [];
  if (filter.from) parts.push(`from ${filter.from.join(" or ")}`);
  if (filter.to) parts.push(`to ${filter.to.join(" or ")}`);
  if (filter.subjectContains) parts.push(`subject has ${filter.subjectContains.map((w) => `“${w}”`).join(" and ")}`);
  if (filter.hasAttachment !== undefined) parts.push(filter.hasAttachment ? "with an attachment" : "without attachments");
  if (filter.list !== undefined) parts.push(filter.list === true ? "from a mailing list" : `from the list ${filter.list}`);
  if (filter.verifiedOnly) parts.push("verified senders only");
  return parts.length ? parts.join(", ") : "any new mail";
}
