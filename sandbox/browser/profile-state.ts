/**
 * A person's saved browser profile (`persons/<id>/browser/state.json`): Playwright's storage state
 * (cookies and origins, checked for shape when read back) and the page URL when the context last
 * closed. Written atomically, readable by this account only.
 */
import { chmod, readFile, rename, writeFile } from "node:fs/promises";
import type { BrowserContext } from "playwright-core";
import { z } from "zod";

type StorageState = Awaited<ReturnType<BrowserContext["storageState"]>>;

interface SavedState {
  storage: StorageState;
  lastUrl: string | null;
}

/** The saved profile: Playwright's storage state (cookies and origins checked for shape) and the last URL. */
const savedStateSchema = z.object({
  storage: z.custom<StorageState>(
    (v) => z.object({ cookies: z.array(z.object({ name: z.string(), value: z.string(), domain: z.string(), path: z.string() }).loose()), origins: z.array(z.object({ origin: z.string() }).loose()) }).safeParse(v).success,
    "not a browser storage state",
  ),
  lastUrl: z.string().nullable(),
});

/** The saved profile, or null when there is none or it is unreadable (the person starts with a fresh profile). */
export async function readState(file: string): Promise<SavedState | null> {
  try {
    const parsed = savedStateSchema.safeParse(JSON.parse(await readFile(file, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Writes the profile atomically (a temporary file renamed over it), readable by this account only. */
export async function writeState(file: string, state: SavedState): Promise<void> {
  const temp = `${file}.${process.pid}.${Math.random().toString(16).slice(2)}.tmp`;
  await writeFile(temp, JSON.stringify(state), { mode: 0o600, flag: "wx" });
  await rename(temp, file);
  await chmod(file, 0o600);
}
