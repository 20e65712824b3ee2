/**
 * Shared helpers of the store contract suite. Everything here speaks only the public ports, so the
 * suite runs unchanged on every adapter.
 */
import { expect } from "vitest";
import type { Store } from "../../../../core/storage/ports.js";
import type { Page, PageRequest } from "../../../../core/storage/index.js";
import type { Person } from "../../../../core/persons/index.js";

/** Builds a fresh, empty store; `cleanup` closes it and removes whatever it created. */
export type StoreFactory = () => Promise<{ store: Store; cleanup(): Promise<void> }>;

/** Gives each test the store made for it in `beforeEach`. */
export interface ContractContext {
  store(): Store;
}

/** A fixed, millisecond-precise base instant so Date round-trips are checked exactly. */
export const T0 = Date.UTC(2030, 0, 15, 9, 30, 0, 123);

/** `T0 + ms` as a Date. */
export function at(ms: number): Date {
  return new Date(T0 + ms);
}

let personCounter = 0;

/** Creates a person with a distinct display name. */
export async function makePerson(store: Store, name?: string): Promise<Person> {
  personCounter++;
  return store.persons.createPerson({ displayName: name ?? `Person ${personCounter}` });
}

/** Asserts that `promise` rejects with a Familiar error of the given stable code. */
export async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toMatchObject({ code });
}

/** Reads every page of a paginated listing with the given page size, checking page sizes on the way. */
export async function readAllPages<T>(
  list: (page: PageRequest) => Promise<Page<T>>,
  limit: number,
): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const page: Page<T> = await list(after === undefined ? { limit } : { limit, after });
    pages++;
    expect(page.items.length).toBeLessThanOrEqual(limit);
    items.push(...page.items);
    if (page.next === undefined) break;
    expect(page.items.length).toBe(limit);
    after = page.next;
    if (pages > 1000) throw new Error("pagination does not terminate");
  }
  return { items, pages };
}

/** Small pause so records created one after another get distinct creation instants. */
export function tick(ms = 2): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
