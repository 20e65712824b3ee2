/**
 * The approval card as a structured view model, rendered per surface: messengers get its markdown
 * rendering (`renderCardMarkdown`, in the outbox row's `text`), the web chat draws it from these
 * fields (`OutboxMessage.card`). Every string in it is already neutralised (core/policy/readable.ts): bidi and
 * zero-width characters are visible escapes, padding is collapsed, hosts are ASCII.
 */
import { z } from "zod";

/** One labelled fact on the card. `code`: shown verbatim (monospace); `block`: a verbatim block. */
export const cardFieldSchema = z.object({
  label: z.string(),
  value: z.string(),
  format: z.enum(["text", "code", "block"]),
  /** Characters of this field not shown (0: complete). */
  hidden: z.number().int().min(0),
});

export const cardButtonSchema = z.object({
  /** Opaque button id (`ap:<token>`); the press carries only this. */
  id: z.string(),
  label: z.string(),
  style: z.enum(["primary", "secondary", "danger"]),
});

/** A piece of the headline; `strong` pieces are emphasised, `code` pieces shown verbatim. */
export const cardTextPartSchema = z.object({ text: z.string(), strong: z.boolean().optional(), code: z.boolean().optional() });

export const cardViewSchema = z.object({
  v: z.literal(1),
  kind: z.literal("approval"),
  approvalId: z.string(),
  /** "Familiar wants to **send data to** `api.example.com/notes`" as parts. */
  headline: z.array(cardTextPartSchema),
  fields: z.array(cardFieldSchema),
  /** Warnings first (hidden characters, look-alike hosts, content not shown, only Deny offered). */
  notices: z.array(z.object({ tone: z.enum(["warning", "info"]), text: z.string() })),
  /** What each wider choice covers, in words. */
  scopes: z.array(z.string()),
  buttons: z.array(cardButtonSchema),
  /** Set once decided: the outcome line shown instead of the buttons. */
  status: z.object({ outcome: z.enum(["approved", "denied", "expired", "gone"]), text: z.string() }).nullable(),
  /** The complete payload for surfaces that can show a full view (absent when nothing was cut). */
  full: z.object({ label: z.string(), text: z.string() }).optional(),
});

export type CardField = z.infer<typeof cardFieldSchema>;
export type CardButton = z.infer<typeof cardButtonSchema>;
export type CardTextPart = z.infer<typeof cardTextPartSchema>;
export type CardView = z.infer<typeof cardViewSchema>;

/** Reads a stored card (outbox or mailbox JSON); null when absent or not a card. */
export function parseCardView(value: unknown): CardView | null {
  if (value === null || value === undefined) return null;
  const parsed = cardViewSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * `text` as a fenced code block, which every messenger renderer shows verbatim. The fence is longer
 * than any run of backticks inside (CommonMark: a code fence closes only on a fence at least as long).
 */
export function verbatimBlock(text: string): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}\n${text}\n${fence}`;
}

/** `text` as an inline code span (CommonMark: a longer backtick string than any inside; padded when needed). */
export function verbatimInline(text: string): string {
  const flat = text.replace(/\n/g, " ");
  const longest = Math.max(0, ...Array.from(flat.matchAll(/`+/g), (m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  const pad = flat.startsWith("`") || flat.endsWith("`") ? " " : "";
  return `${ticks}${pad}${flat}${pad}${ticks}`;
}

/**
 * The card as markdown for messengers: the headline, each field (verbatim where it carries request
 * content, so markdown in it cannot hide what runs), notices, what the wider choices cover, and the
 * decision once made. Buttons travel separately (native per messenger).
 */
export function renderCardMarkdown(card: CardView): string {
  const e = escapeMarkdown;
  const headline = card.headline.map((p) => (p.code ? verbatimInline(p.text) : p.strong ? `**${e(p.text)}**` : e(p.text))).join("");
  const lines: string[] = [`🔐 ${headline}`];
  for (const notice of card.notices) lines.push(`${notice.tone === "warning" ? "⚠️" : "ℹ️"} ${e(notice.text)}`);
  for (const f of card.fields) {
    const more = f.hidden > 0 ? ` ${e(`(${f.hidden.toLocaleString("en-US")} more characters not shown)`)}` : "";
    if (f.format === "block") lines.push(`**${e(f.label)}**${more}:`, verbatimBlock(f.value));
    else if (f.format === "code") lines.push(`**${e(f.label)}:** ${verbatimInline(f.value)}${more}`);
    else lines.push(`**${e(f.label)}:** ${e(f.value)}${more}`);
  }
  if (card.scopes.length > 0 && card.status === null) lines.push(...card.scopes.map((s) => `• ${e(s)}`));
  if (card.status !== null) lines.push(e(card.status.text));
  return lines.join("\n");
}

/**
 * Backslash-escapes CommonMark punctuation (and `:` / `@`, so no URL or address turns into a link),
 * so text on a card renders as exactly these characters on every messenger.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~:@]/g, "\\$&");
}
