/**
 * Where an action's destination came from: the person's own message, their saved memory, outside
 * content (a web page, a file, a webhook body), or none of these (Familiar chose it). Sentinel
 * records every host that appears in untrusted content the first time it appears (durably, per
 * person), so "first seen in untrusted content" survives restarts and later activations: a write to
 * such a destination is never offered *Always*, and while the activation is tainted only *Approve
 * once* and *Deny* are offered at all.
 */
import { z } from "zod";
import type { PersonId } from "../ids.js";
import type { Store } from "../storage/index.js";
import type { ActionTarget } from "./descriptor.js";

/** Where the action's destination came from, as the card tells the person. */
export const provenanceSchema = z.object({
  /** `person`: their own message; `memory`: saved memory; `untrusted`: outside content (a page, a file, a webhook); `familiar`: none of these. */
  kind: z.enum(["person", "memory", "untrusted", "familiar"]),
  /** The untrusted source (a page URL), when `kind` is `untrusted`. */
  source: z.string().nullable(),
  /** Some destination was seen in untrusted content before the person ever mentioned it. */
  firstSeenUntrusted: z.boolean(),
});

export type Provenance = z.infer<typeof provenanceSchema>;

/** Most hosts recorded from one piece of untrusted content. */
const MAX_HOSTS = 200;

/** The needle a target is searched by: `host` or `host:port` (non-default port), a file path, an address. */
export function targetNeedle(t: ActionTarget): string | null {
  switch (t.kind) {
    case "url": {
      const defaultPort = (t.scheme === "https" && t.port === 443) || (t.scheme === "http" && t.port === 80);
      return defaultPort ? t.host : `${t.host}:${t.port}`;
    }
    case "recipient":
      return t.address;
    case "file":
      return t.path;
    case "other":
      return t.value.toLowerCase();
    case "blocked":
      return null;
  }
}

/**
 * Hosts named in a text, in needle form: every URL's `host[:port]`, and bare domain names. IDN
 * names become punycode (as the URL parser writes them). At most 200.
 */
export function hostsIn(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/\bhttps?:\/\/[^\s"'<>()[\]{}]+/gi)) {
    try {
      const url = new URL(m[0]);
      const defaultPort = url.port === "";
      out.add(defaultPort ? url.hostname.toLowerCase() : `${url.hostname.toLowerCase()}:${url.port}`);
    } catch {
      // not a URL after all
    }
    if (out.size >= MAX_HOSTS) return [...out];
  }
  for (const m of text.matchAll(/(?<![\w@.-])(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+\p{L}[\p{L}\p{N}-]{1,62}(?![\w-])/gu)) {
    try {
      out.add(new URL(`http://${m[0]}`).hostname.toLowerCase());
    } catch {
      // not a host name
    }
    if (out.size >= MAX_HOSTS) break;
  }
  return [...out];
}

/** Untrusted content seen by the current activation (from tool results), newest last. */
export interface SeenContent {
  source: string;
  text: string;
}

/**
 * Works out the provenance of the action's targets (see module doc). `seen` is the untrusted
 * content of the current activation; the durable first sightings cover earlier ones.
 */
export async function provenanceOf(
  store: Pick<Store, "conversation" | "memory" | "sentinel">,
  personId: PersonId,
  targets: readonly ActionTarget[],
  seen: readonly SeenContent[],
  now: Date,
): Promise<Provenance> {
  const needles = targets.map(targetNeedle).filter((n): n is string => n !== null && n.length > 0);
  if (needles.length === 0) return { kind: "familiar", source: null, firstSeenUntrusted: false };
  const recent = (await store.conversation.listRecentMessages(personId, 50)).filter((m) => m.role === "user");
  const sightings = await store.sentinel.firstUntrustedSightings(personId, needles.filter((n) => !n.includes("/")));
  let kind: Provenance["kind"] = "person";
  let source: string | null = null;
  let firstSeenUntrusted = false;
  const rank = { person: 0, memory: 1, familiar: 2, untrusted: 3 } as const;
  for (const needle of needles) {
    const mention = recent.find((m) => m.text.toLowerCase().includes(needle));
    const sighting = sightings.find((s) => s.host === needle);
    const inActivation = seen.find((c) => c.text.toLowerCase().includes(needle));
    let here: Provenance["kind"];
    let hereSource: string | null = null;
    if (mention !== undefined && (sighting === undefined || mention.at.getTime() <= sighting.firstSeenAt.getTime())) {
      here = "person";
    } else if (inActivation !== undefined || sighting !== undefined) {
      here = "untrusted";
      hereSource = inActivation?.source ?? sighting?.source ?? null;
      firstSeenUntrusted = true;
    } else {
      const memory = (await store.memory.searchMemory(personId, needle, { limit: 5, now })).filter((m) => m.text.toLowerCase().includes(needle));
      // A memory item made from outside content is outside content (issue 11), not the person's memory.
      const tainted = memory.find((m) => m.taint !== null);
      if (tainted) {
        here = "untrusted";
        hereSource = tainted.taint!.source;
        firstSeenUntrusted = true;
      } else here = memory.length > 0 ? "memory" : "familiar";
    }
    if (rank[here] > rank[kind]) {
      kind = here;
      source = hereSource;
    }
  }
  return { kind, source, firstSeenUntrusted };
}
