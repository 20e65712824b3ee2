/**
 * What a person's browser remembers about elements between tool calls, keyed by the element
 * reference the accessibility snapshot gave (`e12`, `f2e5`), which stays the same for the same
 * element across snapshots of a page.
 */
import type { ObservedWrite } from "./network.js";

/** Per-page element memory; cleared when the page changes. */
export class RefMemory {
  private page = "";
  /** Writes a click on an element tried to send and that were stopped (the next click asks with them). */
  private readonly writes = new Map<string, ObservedWrite>();
  /** Elements a vault secret was typed into (masked in screenshots). */
  private readonly secrets = new Set<string>();

  /** Forgets everything when the page's URL (without fragment) changed. */
  onPage(url: string): void {
    const key = url.replace(/#.*$/, "");
    if (key !== this.page) {
      this.page = key;
      this.clear();
    }
  }

  clear(): void {
    this.writes.clear();
    this.secrets.clear();
  }

  rememberWrite(ref: string, write: ObservedWrite): void {
    this.writes.set(ref, write);
  }

  writeOf(ref: string): ObservedWrite | undefined {
    return this.writes.get(ref);
  }

  forgetWrite(ref: string): void {
    this.writes.delete(ref);
  }

  markSecret(ref: string): void {
    this.secrets.add(ref);
  }

  secretRefs(): string[] {
    return [...this.secrets];
  }
}
