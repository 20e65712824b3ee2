import { describe, expect, it } from "vitest";
import { asId } from "../../../core/ids.js";
import { CommandRegistry } from "../../../core/inbound/commands.js";
import { registerSentinelCommands } from "../../../core/inbound/sentinel-commands.js";
import type { SentinelViews } from "../../../core/sentinel/views.js";
import type { Person } from "../../../core/persons/index.js";

describe("/activity", () => {
  it("shows times in the person's time zone, not UTC", async () => {
    const registry = new CommandRegistry();
    const views = {
      currentStatus: async () => "Idle.",
      listAuditView: async () => ({ items: [{ at: "2026-12-01T09:30:00.000Z", kind: "grant.revoked", summary: "Revoked web.fetch" }] }),
    } as unknown as SentinelViews;
    registerSentinelCommands(registry, views);
    const person = { id: asId("person", "per_1"), timeZone: "Europe/Berlin" } as Person;
    const reply = await registry.run("activity", { person, args: "", channel: "local", accountId: "ana" });
    expect(reply.text).toContain("• 2026-12-01 10:30 Revoked web.fetch");
  });
});
