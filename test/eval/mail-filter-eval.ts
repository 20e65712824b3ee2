/**
 * The mail-filter evaluation, shared by `npm run eval:mail-filter` and the CI floor test.
 *
 * Input: JSONL, one mail per line: `{"id": string, "eml": string, ...}` — the whole RFC 822
 * message as a string (taken as UTF-8); extra fields are allowed. Optional labels
 * `"expect": {"access": boolean, "secrets": string[], "keep": string[]}`:
 * `secrets` must never appear in the filtered text (a code counts as appearing in any spacing, in
 * full-width digits too), `keep` must appear unchanged.
 *
 * Figures: `leaks` (secrets that passed — the aim is 0), `secretRecall` (secrets removed / all),
 * `keptRate` and `harmlessRemovedRate` (keep items missing / all keep items — the aim is ≤ 2 %),
 * and how many harmless mails had anything removed.
 */
import { z } from "zod";
import { filterMailSource, MailReadError } from "../../connectors/email/safety.js";
import type { RemovedItem } from "../../connectors/email/safety.js";

const labels = z.object({
  access: z.boolean(),
  secrets: z.array(z.string().min(1)).default([]),
  keep: z.array(z.string().min(1)).default([]),
});

const line = z.looseObject({ id: z.string().min(1), eml: z.string(), expect: labels.optional() });

export type EvalLine = z.infer<typeof line>;
export interface EvalError {
  line: number;
  id: string | null;
  error: string;
}

/** Parses a JSONL set; unreadable lines are reported with their line number, never skipped silently. */
export function parseMailSet(text: string): { lines: EvalLine[]; errors: EvalError[] } {
  const lines: EvalLine[] = [];
  const errors: EvalError[] = [];
  text.split("\n").forEach((raw, k) => {
    if (!raw.trim()) return;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (err) {
      errors.push({ line: k + 1, id: null, error: `not JSON: ${(err as Error).message}` });
      return;
    }
    const parsed = line.safeParse(json);
    if (parsed.success) lines.push(parsed.data);
    else errors.push({ line: k + 1, id: typeof (json as { id?: unknown })?.id === "string" ? (json as { id: string }).id : null, error: z.prettifyError(parsed.error) });
  });
  return { lines, errors };
}

/** One mail after the filter: exactly what the model sees, and what was removed. */
export interface EvalResult {
  id: string;
  text: string;
  removed: RemovedItem[];
  accessMail: boolean;
  expect?: z.infer<typeof labels>;
  leaked: string[];
  missing: string[];
}

/** A secret appears in `text` if its letters and digits appear in order with at most light separators between them. */
export function appears(text: string, secret: string): boolean {
  const folded = text.normalize("NFKC");
  const s = secret.normalize("NFKC");
  if (folded.includes(s)) return true;
  const chars = [...s.replace(/[\s\-–.·]/g, "")];
  if (chars.length < 4) return false;
  const pattern = chars.map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[\\s\\-–.·]{0,3}");
  return new RegExp(pattern, "i").test(folded);
}

/** Filters every mail of the set (sequentially) and checks its labels. */
export async function evaluateMailSet(lines: readonly EvalLine[]): Promise<EvalResult[]> {
  const out: EvalResult[] = [];
  for (const l of lines) {
    let text: string;
    let removed: RemovedItem[] = [];
    let accessMail = false;
    try {
      const filtered = await filterMailSource(l.eml);
      ({ text, removed, accessMail } = filtered);
    } catch (err) {
      text = err instanceof MailReadError ? err.message : "could not read this message";
    }
    const leaked = l.expect?.secrets.filter((s) => appears(text, s)) ?? [];
    const missing = l.expect?.keep.filter((k) => !text.normalize("NFKC").includes(k.normalize("NFKC"))) ?? [];
    out.push({ id: l.id, text, removed, accessMail, ...(l.expect && { expect: l.expect }), leaked, missing });
  }
  return out;
}

/** The set's figures (labelled lines only). */
export interface MailEvalFigures {
  lines: number;
  labelled: number;
  accessMails: number;
  harmlessMails: number;
  secrets: number;
  leaks: number;
  secretRecall: number;
  keepItems: number;
  keepMissing: number;
  harmlessRemovedRate: number;
  harmlessMailsWithRemovals: number;
  accessMailsDetected: number;
}

export function mailFigures(results: readonly EvalResult[]): MailEvalFigures {
  const labelled = results.filter((r) => r.expect);
  const access = labelled.filter((r) => r.expect!.access);
  const harmless = labelled.filter((r) => !r.expect!.access);
  const secrets = labelled.reduce((n, r) => n + r.expect!.secrets.length, 0);
  const leaks = labelled.reduce((n, r) => n + r.leaked.length, 0);
  const keepItems = labelled.reduce((n, r) => n + r.expect!.keep.length, 0);
  const keepMissing = labelled.reduce((n, r) => n + r.missing.length, 0);
  return {
    lines: results.length,
    labelled: labelled.length,
    accessMails: access.length,
    harmlessMails: harmless.length,
    secrets,
    leaks,
    secretRecall: secrets ? (secrets - leaks) / secrets : 1,
    keepItems,
    keepMissing,
    harmlessRemovedRate: keepItems ? keepMissing / keepItems : 0,
    harmlessMailsWithRemovals: harmless.filter((r) => r.removed.length > 0).length,
    accessMailsDetected: access.filter((r) => r.accessMail || r.removed.length > 0).length,
  };
}
