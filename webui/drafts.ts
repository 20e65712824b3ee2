/**
 * What the person wrote but Familiar has not accepted yet, kept in this browser's localStorage per
 * person (`familiar.chat.<personId>`) so a reload or a closed tab loses nothing: the composer's draft
 * and every message whose send failed or was not confirmed. An entry is removed once the server
 * accepted it (202). Each keeps its client id: a retry after a reload carries the same id and the
 * server recognises it (the core dedupes on it for 14 days, jobs/catalogue.ts `inboundRetentionMs`),
 * so a message that did arrive before the page closed is not said twice.
 */
export interface Unsent {
  clientId: string;
  text: string;
  /** Why it is not sent, in words for the person. */
  error: string;
}

/** The kept state of one person's composer. */
export interface Drafts {
  draft: string;
  unsent: Unsent[];
}

const key = (personId: string) => `familiar.chat.${personId}`;

function isUnsent(v: unknown): v is Unsent {
  return typeof v === "object" && v !== null && "clientId" in v && typeof v.clientId === "string" && "text" in v && typeof v.text === "string" && "error" in v && typeof v.error === "string";
}

/** The kept drafts (empty when none, or when storage is unavailable or holds something else). */
export function loadDrafts(personId: string): Drafts {
  try {
    const raw: unknown = JSON.parse(localStorage.getItem(key(personId)) ?? "null");
    if (typeof raw !== "object" || raw === null) return { draft: "", unsent: [] };
    const draft = "draft" in raw && typeof raw.draft === "string" ? raw.draft : "";
    const unsent = "unsent" in raw && Array.isArray(raw.unsent) ? raw.unsent.filter(isUnsent) : [];
    return { draft, unsent };
  } catch {
    return { draft: "", unsent: [] };
  }
}

/** Keeps the drafts (removes the entry when there is nothing to keep); storage errors are ignored. */
export function saveDrafts(personId: string, drafts: Drafts): void {
  try {
    if (drafts.draft === "" && drafts.unsent.length === 0) localStorage.removeItem(key(personId));
    else localStorage.setItem(key(personId), JSON.stringify(drafts));
  } catch {
    // Private mode or a full quota: the page still works, only without keeping drafts.
  }
}
