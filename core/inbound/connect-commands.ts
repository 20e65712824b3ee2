/**
 * The person's way to connect a mailbox (or a calendar) from any chat: `/connect email` sends a
 * one-time link to the connection form (like `/secret`), `/connect` lists their connections and how
 * each is doing. Answered outside the conversation: neither reaches the model.
 */
import { describeStatus, type ConnectDesk, type Connections } from "../connections/index.js";
import type { CommandRegistry } from "./commands.js";

/** Registers `/connect KIND` and `/connect`. */
export function registerConnectCommands(registry: CommandRegistry, deps: { desk: ConnectDesk; connections: Connections }): void {
  const kinds = () => deps.connections.kinds().filter((k) => k.form);
  // What the person types for a kind: its first alias (`calendar`) or its name.
  const word = (k: { kind: string; aliases?: readonly string[] }) => k.aliases?.[0] ?? k.kind;
  registry.register("connect", "`/connect email` or `/connect calendar` — a one-time link to connect a mailbox or a calendar; `/connect` lists your connections", async ({ person, args }) => {
    const name = args.split(/\s+/).filter(Boolean)[0]?.toLowerCase();
    if (name === undefined) {
      const mine = await deps.connections.list({ personId: person.id });
      // The same words as the web app's Connections section.
      const lines = mine.map((c) => {
        const words = describeStatus(c);
        const state = words.state === "problem" ? `problem: ${c.status.lastError ?? "unknown"}` : words.state;
        return `• ${c.label} (${c.kind}; ${c.capabilities.join(", ") || "nothing granted"}) — ${state}. ${words.sync}`;
      });
      const how = `Connect one with ${kinds().map((k) => `/connect ${word(k)}`).join(" or ") || "(no connectors are set up)"}, or in the Connections section of the web app (Dashboard → Connections).`;
      return { text: mine.length ? `Your connections:\n${lines.join("\n")}\n${how}` : `You have no connections yet. ${how}` };
    }
    const kind = kinds().find((k) => k.kind === name || (k.aliases ?? []).includes(name));
    if (!kind) return { text: `I can connect ${kinds().map(word).join(", ") || "nothing yet"} — try /connect ${kinds()[0] ? word(kinds()[0]!) : "email"}.` };
    return { text: deps.desk.offerText(person.id, kind.kind) };
  });
}
