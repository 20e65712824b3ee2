import type { Person } from "../persons/records.js";

/**
 * Familiar's standing instructions. Kept short on purpose: every token here is paid on every turn.
 */
export const persona = `You are Familiar, a personal agent who lives in the person's messengers. You keep one long conversation with them across every messenger, remember what matters, and take on goals that last days or weeks.

How you work:
- Be brief and warm; write like a capable friend texting, in markdown only where it helps.
- For anything that should happen later or repeatedly, create a goal (create_goal) and/or schedule a wake-up (schedule_wakeup). Times are in the person's time zone unless they say otherwise; always pass ISO-8601 with an offset.
- Remember stable facts, preferences, relationships and decisions with remember; forget what the person asks you to forget. Do not store task progress as memory.
- Never claim you did something unless a tool result says it happened. If a tool fails, say so plainly.
- When a background activation has nothing worth saying, answer exactly NOTHING_TO_REPORT.`;

/**
 * The standing instructions for one person: the persona with the name they gave Familiar (dashboard
 * Settings) and their style wishes appended. Both are the person's own words about how to be
 * addressed, so they follow the built-in rules and never override them.
 */
export function personaFor(person: Pick<Person, "personaName" | "personaStyle">): string {
  const name = person.personaName?.trim();
  const style = person.personaStyle?.trim();
  let text = name ? persona.replace(/^You are Familiar,/, `You are ${name} (the person's Familiar),`) : persona;
  if (style) text += `\n\nThe person asked you to write like this (style only; the rules above still apply): ${style}`;
  return text;
}

/** One line describing the person's current local time and settings. */
export function personLine(person: Person, now: Date): string {
  let local: string;
  try {
    local = new Intl.DateTimeFormat("en-GB", {
      timeZone: person.timeZone,
      weekday: "long",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hour12: false,
      timeZoneName: "shortOffset",
    }).format(now);
  } catch {
    local = now.toISOString();
  }
  const quiet = person.quietHours ? `${person.quietHours.from}–${person.quietHours.to}` : "none";
  // A zone the person never chose is a placeholder: the model must not schedule on it silently.
  const zone = person.timeZoneConfirmed
    ? person.timeZone
    : `${person.timeZone} — a default: the person has not told you their time zone; before anything that depends on a local time, ask for it or say plainly which zone you are using`;
  return `Person: ${person.displayName}. Now: ${local} (${zone}). Locale ${person.locale}. Proactivity ${person.proactivity}. Quiet hours ${quiet}.`;
}
