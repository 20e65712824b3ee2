import type { Person } from "../../core/persons/index.js";
import type { Store } from "../../core/storage/index.js";

/** Letters that carry a stroke or are ligatures: no Unicode decomposition folds them, so a table does. */
const foldTable: Record<string, string> = { ø: "o", đ: "d", ð: "d", ł: "l", ħ: "h", ı: "i", ŧ: "t", æ: "ae", œ: "oe", þ: "th", ŋ: "n" };

/**
 * The key a sign-in name is matched by: surrounding spaces dropped, inner runs of spaces made one,
 * compatibility-decomposed (NFKD, so "ﬁ" is "fi" and full-width letters are plain), accents and
 * other combining marks removed, case folded ("ß" is "ss"), and the stroked letters of
 * {@link foldTable} folded. "  Zoë  Müller " and "zoe muller" have the same key.
 */
export function signInKey(name: string): string {
  const spaced = name.trim().replace(/\s+/g, " ");
  const bare = spaced.normalize("NFKD").replace(/\p{M}/gu, "");
  // toUpperCase first: "ß" becomes "SS" (then "ss"), as full case folding does.
  const lower = bare.toUpperCase().toLowerCase();
  return [...lower].map((c) => foldTable[c] ?? c).join("").normalize("NFC");
}

/** Who a typed sign-in name is. */
export type NameMatch =
  | { kind: "one"; person: Person }
  | { kind: "none" }
  /** Several persons answer to the name's key (an older install kept "Zoë" and "zoe" apart). */
  | { kind: "many"; persons: Person[] };

/**
 * Finds the person a sign-in name belongs to, without regard to case, accents and spaces
 * ({@link signInKey}). A person answers to the names of their local (web chat) accounts and to
 * their display name once they have a local account, so a name changed in Settings still signs
 * in as the same person, and so does the name first typed. An exact local account wins outright
 * (an older install may hold two persons whose names fold together: each keeps its own spelling).
 *
 * Existing persons need no migration: the keys are computed from what is stored, on each lookup.
 * The scan reads every person's identities, which suits an install of a household (sign-ins by
 * name happen on this machine only, and rarely).
 */
export async function findByName(store: Pick<Store, "persons">, name: string): Promise<NameMatch> {
  const exact = await store.persons.findIdentity("local", name);
  const exactPerson = exact && (await store.persons.getPerson(exact.personId));
  if (exactPerson) return { kind: "one", person: exactPerson };
  const key = signInKey(name);
  const found: Person[] = [];
  let after: string | undefined;
  do {
    const page = await store.persons.listPersons({ limit: 200, ...(after !== undefined && { after }) });
    for (const person of page.items) {
      const locals = (await store.persons.listIdentities(person.id)).filter((i) => i.channel === "local");
      if (locals.length === 0) continue;
      const names = [person.displayName, ...locals.map((i) => i.accountId)];
      if (names.some((n) => signInKey(n) === key)) found.push(person);
    }
    after = page.next;
  } while (after !== undefined);
  if (found.length === 0) return { kind: "none" };
  if (found.length === 1) return { kind: "one", person: found[0]! };
  return { kind: "many", persons: found };
}
