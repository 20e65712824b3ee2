/**
 * Who may act at the door: the install's owner, the admins the owner names, and the member list of
 * each group chat.
 *
 * - **Owner**: persons with an identity listed in OWNER (`telegram:123,slack:U0ABC,local:me`); when
 *   OWNER is not set, the first ALLOW_FROM entry. A local chat name used on this machine (loopback
 *   only, LOCAL_CHAT_ALLOW_REMOTE off) is the owner too: whoever sits at the machine runs it. The web
 *   app's accounts for people who signed in from elsewhere (named by their person id) are not.
 * - **Admins**: persons the owner marks with `/admin add <channel:account>`; they may approve
 *   pairings and manage group member lists. Nobody else may.
 * - **Groups**: being paired (or allowed) in a DM does not make anyone a member of a group. In an
 *   ALLOW_GROUPS group Familiar serves only that group's members — by default the owner alone;
 *   the owner or an admin adds others with `/group add <channel:groupId> <channel:account>`.
 * Every refusal is audited.
 */
import type { InboundEvent } from "../channels/index.js";
import type { Clock } from "../clock.js";
import type { PersonId } from "../ids.js";
import { type Store } from "../storage/index.js";
import { channelNames, type ChannelName } from "../channels/records.js";
import { type GroupRef, type Person } from "../persons/records.js";
import type { CommandRegistry } from "./commands.js";

/** What the door needs. */
export interface DoorDeps {
  store: Pick<Store, "persons" | "access" | "audit">;
  clock: Clock;
  /** OWNER entries (`channel:accountId`); empty: the first ALLOW_FROM entry is the owner. */
  owners: readonly string[];
  /** The local web chat serves only this machine (loopback): its users are the owner. */
  localIsOwner: boolean;
}

/** The web app names the local account of a person who signed in with a link by the person id. */
function isPersonId(accountId: string): boolean {
  return /^per_[0-9a-z]+$/i.test(accountId);
}

/** Parses `channel:id` (the id may contain colons); null when the channel is unknown. */
function parseEntry(entry: string): { channel: ChannelName; id: string } | null {
  const i = entry.indexOf(":");
  if (i <= 0) return null;
  const channel = entry.slice(0, i) as ChannelName;
  const id = entry.slice(i + 1).trim();
  return channelNames.includes(channel) && id !== "" ? { channel, id } : null;
}

/** Roles and group membership (see module doc). */
export class Door {
  private readonly owners: ReadonlySet<string>;

  constructor(private readonly deps: DoorDeps) {
    this.owners = new Set(deps.owners.map((e) => e.trim()).filter(Boolean));
  }

  /** True when the person is the install's owner. */
  async isOwner(personId: PersonId): Promise<boolean> {
    const identities = await this.deps.store.persons.listIdentities(personId);
    return identities.some((i) => this.owners.has(`${i.channel}:${i.accountId}`) || (i.channel === "local" && this.deps.localIsOwner && !isPersonId(i.accountId)));
  }

  /**
   * The persons who are the owner (OWNER identities, and local chat names when the local chat is the
   * owner's), in creation order. Scans at most the first 5,000 persons: asked only when someone
   * new asks to be paired.
   */
  async ownerPersons(): Promise<PersonId[]> {
    const out: PersonId[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await this.deps.store.persons.listPersons({ limit: 500, ...(after !== undefined && { after }) });
      for (const person of page.items) if (await this.isOwner(person.id)) out.push(person.id);
      if (!page.next) break;
      after = page.next;
    }
    return out;
  }

  /** True for the owner and admins. */
  async isOwnerOrAdmin(personId: PersonId): Promise<boolean> {
    if (await this.isOwner(personId)) return true;
    return (await this.deps.store.access.listRoles()).some((r) => r.personId === personId && r.role === "admin");
  }

  /**
   * True when `person` may be served in the group the event came from (always true outside
   * groups). Refusals are audited.
   */
  async admits(event: InboundEvent, person: Person): Promise<boolean> {
    if (event.groupId === undefined) return true;
    const group: GroupRef = { channel: event.channel, groupId: event.groupId };
    if (await this.isOwner(person.id)) return true;
    if ((await this.deps.store.access.listGroupMembers(group)).includes(person.id)) return true;
    await this.deps.store.audit.appendAudit({
      personId: person.id,
      kind: "inbound.refused",
      summary: `Not served in group ${event.channel}:${event.groupId}: not on its member list`,
      data: { refusal: "not_group_member", channel: event.channel, groupId: event.groupId, accountId: event.accountId, kind: event.kind },
      at: this.deps.clock.now(),
    });
    return false;
  }

  /** The person behind `channel:account`, if Familiar knows that account. */
  private async personOf(entry: string): Promise<PersonId | null> {
    const parsed = parseEntry(entry);
    if (parsed === null) return null;
    return (await this.deps.store.persons.findIdentity(parsed.channel, parsed.id))?.personId ?? null;
  }

  /** Registers `/admin` (owner only) and `/group` (owner and admins). */
  registerCommands(registry: CommandRegistry): void {
    registry.register("admin", "who may approve pairings and manage groups: `/admin add|remove <channel:account>` (owner only)", async ({ person, args }) => {
      if (!(await this.isOwner(person.id))) return { text: "Only the owner can name admins." };
      const [verb, entry] = args.split(/\s+/);
      if ((verb === "add" || verb === "remove") && entry) {
        const target = await this.personOf(entry);
        if (target === null) return { text: `I don't know ${entry} yet: they need to be paired first.` };
        await this.deps.store.access.setRole(target, verb === "add" ? "admin" : null, this.deps.clock.now());
        await this.deps.store.audit.appendAudit({ personId: person.id, kind: "access.role", summary: `${verb === "add" ? "Made" : "Removed"} ${entry} ${verb === "add" ? "an admin" : "as admin"}`, data: { entry, verb } });
        return { text: verb === "add" ? `${entry} is now an admin.` : `${entry} is no longer an admin.` };
      }
      const admins = await this.deps.store.access.listRoles();
      return { text: admins.length ? `Admins:\n${admins.map((a) => `• ${a.personId}`).join("\n")}` : "No admins: only you approve pairings. `/admin add <channel:account>` names one." };
    });
    registry.register("group", "who Familiar serves in a group: `/group add|remove <channel:groupId> <channel:account>`, `/group <channel:groupId>`", async ({ person, args }) => {
      if (!(await this.isOwnerOrAdmin(person.id))) return { text: "Only the owner or an admin can change who Familiar serves in a group." };
      const parts = args.split(/\s+/).filter(Boolean);
      const verb = parts[0] === "add" || parts[0] === "remove" ? parts.shift() : null;
      const groupEntry = parts[0] ? parseEntry(parts[0]) : null;
      if (groupEntry === null) return { text: "Use /group <channel:groupId> to list, or /group add|remove <channel:groupId> <channel:account>." };
      const group: GroupRef = { channel: groupEntry.channel, groupId: groupEntry.id };
      if (verb !== null) {
        const target = parts[1] ? await this.personOf(parts[1]) : null;
        if (target === null) return { text: `I don't know ${parts[1] ?? "that account"} yet: they need to be paired first.` };
        const changed = verb === "add" ? await this.deps.store.access.addGroupMember(group, target, this.deps.clock.now()) : await this.deps.store.access.removeGroupMember(group, target);
        await this.deps.store.audit.appendAudit({ personId: person.id, kind: "access.group", summary: `${verb} ${parts[1]} ${verb === "add" ? "to" : "from"} group ${parts[0]}`, data: { group: parts[0]!, member: parts[1]!, changed } });
        return { text: changed ? `Done: ${parts[1]} ${verb === "add" ? "is now served" : "is no longer served"} in ${parts[0]}.` : "Nothing changed." };
      }
      const members = await this.deps.store.access.listGroupMembers(group);
      return { text: members.length ? `Served in ${parts[0]} besides the owner:\n${members.map((m) => `• ${m}`).join("\n")}` : `Only the owner is served in ${parts[0]}.` };
    });
  }
}
