/**
 * The readable summary of an action, made when Sentinel asks and stored with the approval request:
 * the method in words, every target in full, the payload decoded, headers by name (secret
 * references as "🔒 NAME"), the data a destination's query and path segments carry (decoded, and
 * counted so the card flags it), and every other argument — all neutralised (core/policy/readable.ts). Nothing that
 * shapes the action is left out; the card decides how much fits and says what it did not show.
 */
import { z } from "zod";
import {
  valuesAt,
  type ActionDescriptor,
  hostPath,
  methodInWords,
  decodeAddress,
  decodeBody,
  decodeLayers,
  hostForDisplay,
  visible,
} from "../policy/index.js";
import type { ToolPolicy } from "../tools/index.js";

const SECRET_ONLY = /^\s*(?:Bearer\s+|Basic\s+|Token\s+)?\{\{secret:([A-Za-z0-9_.-]{1,64})\}\}\s*$/i;
const SECRET_ANY = /\{\{secret:([A-Za-z0-9_.-]{1,64})\}\}/g;

export const actionSummarySchema = z.object({
  tool: z.string(),
  method: z.string(),
  methodWords: z.string(),
  /** Short form for the headline: `api.example.com/notes`, `the file notes.txt`. */
  where: z.string(),
  targets: z.array(z.object({ label: z.string(), value: z.string(), lookalike: z.boolean() })),
  body: z.object({ field: z.string(), label: z.string(), text: z.string(), length: z.number().int().min(0) }).nullable(),
  headers: z.array(z.string()),
  /** Values anywhere in the request (body, headers, other arguments) that decode to text: `where: base64 → "…"`. */
  decoded: z.array(z.string()),
  other: z.array(z.object({ name: z.string(), value: z.string() })),
  /** Hidden or direction-changing characters made visible anywhere in the request. */
  hidden: z.number().int().min(0),
  /** Values of the destination addresses (query, path segments) that carry encoded or opaque data; listed in `decoded`. */
  addressEncoded: z.number().int().min(0).default(0),
});

export type ActionSummary = z.infer<typeof actionSummarySchema>;

/** Lines for the data each URL target's address carries (decodeAddress), prefixed by the address when there are several. */
function addressDecoded(action: ActionDescriptor): string[] {
  const urls = action.targets.filter((t) => t.kind === "url");
  return urls.flatMap((t, i) => decodeAddress(t.href).map((line) => (urls.length > 1 ? `address ${i + 1} ${line}` : `address ${line}`)));
}

/** Longest payload kept for a full view, characters (beyond it the card says how much exists). */
const MAX_KEPT = 64 * 1024;

function keep(text: string): string {
  return text.length > MAX_KEPT ? text.slice(0, MAX_KEPT) : text;
}

function headerLine(name: string, value: unknown): { line: string; hidden: number; decoded: string | null } {
  const raw = typeof value === "string" ? value : JSON.stringify(value) ?? "";
  const only = SECRET_ONLY.exec(raw);
  if (only) return { line: `${name}: 🔒 ${only[1]}`, hidden: 0, decoded: null };
  const shown = visible(raw.replace(SECRET_ANY, (_m, secret: string) => `🔒 ${secret}`));
  const layers = decodeLayers(raw.replace(/^\s*(?:Bearer|Basic|Token)\s+/i, ""));
  return { line: `${name}: ${shown.text}`, hidden: shown.hidden, decoded: layers ? `header ${name}: ${layers.encodings.join(" → ")} → ${JSON.stringify(layers.text)}` : null };
}

/** Builds the summary of one call (see module doc). Secret values never appear: only references. */
export function summariseAction(policy: ToolPolicy, args: unknown, action: ActionDescriptor, scrub: (s: string) => string = (s) => s): ActionSummary {
  let hidden = 0;
  const see = (s: string) => {
    const v = visible(scrub(s));
    hidden += v.hidden;
    return v.text;
  };
  const targets = action.targets.map((t) => {
    switch (t.kind) {
      case "url": {
        const { lookalike } = hostForDisplay(t.host);
        return { label: "Destination", value: see(t.href), lookalike };
      }
      case "file":
        return { label: "File", value: see(t.path), lookalike: false };
      case "recipient":
        return { label: "Recipient", value: see(t.address), lookalike: false };
      case "other":
        return { label: "Target", value: see(t.value), lookalike: false };
      case "blocked":
        return { label: "Blocked destination", value: see(t.value), lookalike: false };
    }
  });
  const first = action.targets[0];
  const where =
    first === undefined ? action.tool : first.kind === "url" ? hostPath(first).replace(/ \(plain http\)$/, "") : first.kind === "file" ? `the file ${first.path}` : first.kind === "recipient" ? first.address : first.kind === "other" ? first.value : first.value;

  const top = (path: string) => path.split(".")[0]!.replace(/\[\]$/, "");
  const used = new Set<string>([...policy.destinationArgs, ...(policy.fileArgs ?? []), ...(policy.headerArgs ?? []), ...(policy.bodyArgs ?? [])].map(top));
  if (policy.method && "arg" in policy.method) used.add(top(policy.method.arg));

  const headers: string[] = [];
  const fromAddress = addressDecoded(action).map(see);
  const decoded: string[] = [...fromAddress];
  let contentType: string | undefined;
  for (const path of policy.headerArgs ?? []) {
    for (const map of valuesAt(args, path)) {
      if (map === null || typeof map !== "object" || Array.isArray(map)) continue;
      for (const [name, value] of Object.entries(map)) {
        if (name.toLowerCase() === "content-type" && typeof value === "string") contentType = value;
        const h = headerLine(see(name), value);
        hidden += h.hidden;
        headers.push(h.line);
        if (h.decoded !== null) decoded.push(see(h.decoded));
      }
    }
  }

  let body: ActionSummary["body"] = null;
  for (const path of policy.bodyArgs ?? []) {
    const value = valuesAt(args, path)[0];
    if (value === undefined) continue;
    const raw = scrub(typeof value === "string" ? value : JSON.stringify(value, null, 2) ?? "");
    const shown = decodeBody(raw, contentType);
    body = { field: path, label: shown.label, text: keep(see(shown.text)), length: shown.length };
    decoded.push(...shown.decoded.map(see));
    break;
  }

  const other: { name: string; value: string }[] = [];
  if (args !== null && typeof args === "object" && !Array.isArray(args)) {
    for (const [name, value] of Object.entries(args)) {
      if (used.has(name) || value === undefined) continue;
      const raw = typeof value === "string" ? scrub(value) : JSON.stringify(value) ?? "";
      other.push({ name: see(name), value: keep(see(raw)) });
      const layers = typeof value === "string" ? decodeLayers(raw) : null;
      if (layers) decoded.push(see(`${name}: ${layers.encodings.join(" → ")} → ${JSON.stringify(layers.text)}`));
    }
  }
  return { tool: action.tool, method: action.method, methodWords: methodInWords(action.method), where: see(where), targets, body, headers, decoded, other, hidden, addressEncoded: fromAddress.length };
}

/**
 * The readable summary of a described action (a browser click or form, action.ts): the tool's own
 * sentence, the page, the fields that will be sent (passwords masked, secrets as references) and a
 * purchase's merchant, amount and items — all neutralised, nothing left out.
 */
export function summariseDescribed(
  described: { summary: string; page: string | null; fields: { name: string; value: string }[]; purchase: { amount: string | null; merchant: string; items: string[] } | null },
  action: ActionDescriptor,
  scrub: (s: string) => string = (s) => s,
): ActionSummary {
  let hidden = 0;
  const see = (s: string) => {
    const v = visible(scrub(s));
    hidden += v.hidden;
    return v.text;
  };
  const targets = action.targets.map((t) => ({ label: t.kind === "url" ? "Destination" : "Target", value: see(t.kind === "url" ? t.href : t.kind === "file" ? t.path : t.kind === "recipient" ? t.address : t.value), lookalike: t.kind === "url" && hostForDisplay(t.host).lookalike }));
  const first = action.targets[0];
  const where = first?.kind === "url" ? hostPath(first).replace(/ \(plain http\)$/, "") : (described.page ?? action.tool);
  const other: { name: string; value: string }[] = [{ name: "What will happen", value: see(described.summary) }];
  if (described.page) other.push({ name: "On the page", value: see(described.page) });
  if (described.purchase) {
    other.push({ name: "💳 Purchase", value: see(`${described.purchase.merchant}: ${described.purchase.amount ?? "amount not shown on the page"}`) });
    if (described.purchase.items.length > 0) other.push({ name: "Items", value: see(described.purchase.items.join("; ")) });
  }
  const fromAddress = addressDecoded(action).map(see);
  const decoded: string[] = [...fromAddress];
  const lines = described.fields.map((f) => {
    const layers = decodeLayers(f.value);
    if (layers) decoded.push(see(`${f.name}: ${layers.encodings.join(" → ")} → ${JSON.stringify(layers.text)}`));
    return `${f.name || "(unnamed)"}: ${f.value === "" ? "(empty)" : f.value}`;
  });
  const text = lines.join("\n");
  const body = lines.length > 0 ? { field: "fields", label: `fields that will be sent: ${lines.length}`, text: keep(see(text)), length: text.length } : null;
  return { tool: action.tool, method: action.method, methodWords: methodInWords(action.method), where: see(where), targets, body, headers: [], decoded, other, hidden, addressEncoded: fromAddress.length };
}
