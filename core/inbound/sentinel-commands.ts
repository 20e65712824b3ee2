import { asId } from "../ids.js";
import type { SentinelViews } from "../sentinel/index.js";
import type { CommandRegistry } from "./commands.js";

/** /permissions (list and revoke grants) and /activity (status line and recent audit events). */
export function registerSentinelCommands(registry: CommandRegistry, views: SentinelViews): void {
  registry.register("permissions", "what you allowed me to do; `/permissions revoke <id>`", async ({ person, args }) => {
    const [verb, id] = args.split(/\s+/);
    if (verb === "revoke" && id) return { text: (await views.revokeGrant(person.id, asId("grant", id))).notice };
    const grants = await views.listGrantsView(person.id);
    if (grants.length === 0) return { text: "You haven't granted me any permissions. I'll ask before anything that needs one." };
    const lines = grants.map((g) => `• \`${g.id}\` ${g.capability} → ${g.target} (${g.scope}, via ${g.grantedVia})`);
    return { text: `Permissions:\n${lines.join("\n")}\n\nRevoke with /permissions revoke <id>.` };
  });
  registry.register("activity", "what I'm doing now and what I did recently", async ({ person }) => {
    const [status, audit] = await Promise.all([views.currentStatus(person.id), views.listAuditView(person.id, { limit: 15 })]);
    const lines = audit.items.map((e) => `• ${localStamp(e.at, person.timeZone)} ${e.summary}`);
    return { text: `${status}\n\nRecent activity:\n${lines.length ? lines.join("\n") : "(nothing yet)"}` };
  });
}

/** `2026-12-01 10:30` in the person's time zone (the audit keeps UTC). */
function localStamp(iso: string, timeZone: string): string {
  try {
    const parts = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).formatToParts(new Date(iso));
    const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
    return `${get("year")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")}`;
  } catch {
    return iso.slice(0, 16).replace("T", " ");
  }
}
