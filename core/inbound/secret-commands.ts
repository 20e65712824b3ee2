/**
 * The person's way to the secret desk: the `/secret` command, answered outside the conversation
 * (neither it nor its answer reaches the model).
 */
import { type SecretDesk, SECRET_NAME } from "../secrets/index.js";
import type { CommandRegistry } from "./commands.js";

/** Registers `/secret NAME` (a one-time link), `/secret` (list yours) and `/secret delete NAME`. */
export function registerSecretCommands(registry: CommandRegistry, desk: SecretDesk): void {
  registry.register("secret", "`/secret NAME` — a one-time link to store a password or API key safely; `/secret` lists yours; `/secret delete NAME`", async ({ person, args }) => {
    const [first, second] = args.split(/\s+/).filter(Boolean);
    if (first === undefined) {
      const mine = desk.list(person.id);
      if (mine.length === 0) return { text: "You have no stored secrets. `/secret NAME` sends you a one-time link to add one." };
      return { text: `Your secrets (values are never shown):\n${mine.map((s) => `• ${s.name} → ${s.origins.join(", ")}`).join("\n")}` };
    }
    if (first.toLowerCase() === "delete" && second !== undefined) {
      return { text: (await desk.remove(person.id, second)) ? `Removed the secret ${second}.` : `You have no secret named ${second}.` };
    }
    if (!SECRET_NAME.test(first)) return { text: "A secret's name is 1–64 characters: letters, digits, _ . - (e.g. `/secret GITHUB_TOKEN`)." };
    return { text: desk.offerText(person.id, first, "") };
  });
}
